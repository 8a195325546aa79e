/**
 * The authenticator `SEARCH_AUTH_MODE` selects (config.ts reads it), with bearer tokens tried
 * first in every mode but `off` (non-browser clients: the kubectl plugin's tail, export scripts).
 */

import type { Logger } from '@event-observatory/service-kit/logger';
import type { AuthConfig } from '../config.js';
import { type Authenticator, openAccess, type StoredAuthenticator } from '../viewer.js';
import { type BearerTokens, withBearer } from './bearer.js';
import { type EndedSessions, endedSessions } from './ended-sessions.js';
import { localLogin } from './local.js';
import { loginAuthenticator } from './login.js';
import { oidcLogin } from './oidc.js';
import { namedByTrustedProxy, proxyAuthenticator, type TrustedProxies } from './proxy.js';
import { type SessionStoreOptions, sessionStore } from './session.js';

export interface AuthenticatorOptions {
  /** `SEARCH_PUBLIC_URL`: the login's redirect base; an `http:` one alone makes the cookies plain. */
  publicUrl?: string;
  logger?: Logger;
  /** Required in proxy mode (`trustedProxiesFromEnv`). */
  trustedProxies?: TrustedProxies;
  /** Bearer token verifiers (`createBearerTokens`); none: no bearer tokens accepted. */
  bearer?: BearerTokens;
  /** Where logouts are recorded (`endedSessions`); none: a logout only clears the cookie. */
  ended?: EndedSessions;
}

/**
 * `authenticatorFor` with the logins' ended sessions kept in the search's store (`endedSessions`
 * on the pool the service gives: its primary's when it reads a replica): a logout then ends the
 * session for every copy of its cookie, on every replica.
 */
export function storedAuthenticatorFor(
  auth: AuthConfig,
  opts: Omit<AuthenticatorOptions, 'ended'> = {},
): StoredAuthenticator {
  return {
    withPool: (pool) =>
      authenticatorFor(auth, {
        ...opts,
        ended: endedSessions(pool, opts.logger ? { logger: opts.logger } : {}),
      }),
  };
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
      const sessions = sessionStore(auth.session, sessionOptions(opts));
      return loginAuthenticator(sessions, localLogin(sessions, auth.adminPassword));
    }
    case 'oidc': {
      const sessions = sessionStore(auth.session, sessionOptions(opts));
      const { session: _session, mode: _mode, ...oidc } = auth;
      const { publicUrl, logger } = opts;
      return loginAuthenticator(
        sessions,
        oidcLogin(sessions, { ...oidc, ...(publicUrl ? { publicUrl } : {}), ...(logger ? { logger } : {}) }),
      );
    }
  }
}

function sessionOptions({ publicUrl, ended, logger }: AuthenticatorOptions): SessionStoreOptions {
  return { ...(publicUrl ? { publicUrl } : {}), ...(ended ? { ended } : {}), ...(logger ? { logger } : {}) };
}
