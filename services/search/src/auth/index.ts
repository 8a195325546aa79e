/**
 * The authenticator `SEARCH_AUTH_MODE` selects (config.ts reads it), with bearer tokens tried
 * first in every mode but `off` (non-browser clients: the kubectl plugin's tail, export scripts).
 */

import type { Logger } from '@event-observatory/service-kit/logger';
import type { AuthConfig } from '../config.js';
import { type Authenticator, openAccess } from '../viewer.js';
import { type BearerTokens, withBearer } from './bearer.js';
import { localLogin } from './local.js';
import { loginAuthenticator } from './login.js';
import { oidcLogin } from './oidc.js';
import { namedByTrustedProxy, proxyAuthenticator, type TrustedProxies } from './proxy.js';
import { sessionStore } from './session.js';

export interface AuthenticatorOptions {
  /** `SEARCH_PUBLIC_URL`: the login's redirect base; an `http:` one alone makes the cookies plain. */
  publicUrl?: string;
  logger?: Logger;
  /** Required in proxy mode (`trustedProxiesFromEnv`). */
  trustedProxies?: TrustedProxies;
  /** Bearer token verifiers (`createBearerTokens`); none: no bearer tokens accepted. */
  bearer?: BearerTokens;
}

export function authenticatorFor(auth: AuthConfig, opts: AuthenticatorOptions = {}): Authenticator {
  if (auth.mode === 'off') return openAccess;
  const mode = modeAuthenticator(auth, opts);
  if (!opts.bearer) return mode;
  return auth.mode === 'proxy' && opts.trustedProxies
    ? withBearer(opts.bearer, mode, namedByTrustedProxy(opts.trustedProxies))
    : withBearer(opts.bearer, mode);
}

function modeAuthenticator(
  auth: Exclude<AuthConfig, { mode: 'off' }>,
  opts: AuthenticatorOptions,
): Authenticator {
  switch (auth.mode) {
    case 'proxy':
      if (!opts.trustedProxies)
        throw new Error('proxy mode needs its trusted proxies (SEARCH_TRUSTED_PROXIES)');
      return proxyAuthenticator(opts.trustedProxies);
    case 'local': {
      const sessions = sessionStore(auth.session, opts.publicUrl);
      return loginAuthenticator(sessions, localLogin(sessions, auth.adminPassword));
    }
    case 'oidc': {
      const sessions = sessionStore(auth.session, opts.publicUrl);
      const { session: _session, mode: _mode, ...oidc } = auth;
      const { publicUrl, logger } = opts;
      return loginAuthenticator(
        sessions,
        oidcLogin(sessions, { ...oidc, ...(publicUrl ? { publicUrl } : {}), ...(logger ? { logger } : {}) }),
      );
    }
  }
}
