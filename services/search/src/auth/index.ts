/** The authenticator `SEARCH_AUTH_MODE` selects (config.ts reads it). */

import { ConfigError } from '@event-observatory/service-kit/config';
import type { Logger } from '@event-observatory/service-kit/logger';
import type { AuthConfig } from '../config.js';
import { type Authenticator, openAccess } from '../viewer.js';
import { localLogin } from './local.js';
import { loginAuthenticator } from './login.js';
import { oidcLogin } from './oidc.js';
import { sessionStore } from './session.js';

export function authenticatorFor(
  auth: AuthConfig,
  opts: { publicUrl?: string; logger?: Logger } = {},
): Authenticator {
  switch (auth.mode) {
    case 'off':
      return openAccess;
    case 'proxy':
      throw new ConfigError('SEARCH_AUTH_MODE', 'proxy: not available in this build');
    case 'local': {
      const sessions = sessionStore(auth.session, opts.publicUrl);
      return loginAuthenticator(sessions, localLogin(sessions, auth.adminPassword));
    }
    case 'oidc': {
      const sessions = sessionStore(auth.session, opts.publicUrl);
      const { session: _session, mode: _mode, ...oidc } = auth;
      return loginAuthenticator(sessions, oidcLogin(sessions, { ...oidc, ...opts }));
    }
  }
}
