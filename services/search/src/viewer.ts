/**
 * Who is reading. The authenticator (login) finds the viewer of every request that needs one and
 * sets it on the context; the visibility policy turns it into the scope PostgreSQL enforces on
 * every read.
 */
import type { DatabasePool, ReadScope } from '@event-observatory/store';
import type { MiddlewareHandler } from 'hono';

export interface Viewer {
  /** Stable identity: the provider's `sub`, the proxy's user, `admin` for the local login,
   * `system:serviceaccount:<namespace>:<name>` for a service-account token. */
  subject: string;
  /** What the page shows: an email or a name, else the subject. */
  display: string;
  groups: readonly string[];
  /** How the identity was established; `open` when login is switched off. */
  via: 'oidc' | 'proxy' | 'local' | 'bearer' | 'service-account' | 'open';
}

/** The Hono environment of the search app: routes read `c.get('viewer')`. */
export interface SearchEnv {
  /** `csrfToken`: the token a signed-in viewer's forms carry (the logout button's). */
  /** `scope`: what the viewer may see, set once per request after the viewer (app.tsx). */
  /**
   * `loginHolds`: whether the request's login still holds: its session open (not ended, unexpired),
   * its bearer token still accepted (unexpired, not too old).
   */
  Variables: {
    viewer: Viewer;
    csrfToken?: string;
    scope?: ReadScope;
    loginHolds?: () => Promise<boolean>;
  };
}

/** Sets `viewer`, or answers the request itself (a redirect to the login, a 401). */
export type Authenticator = MiddlewareHandler<SearchEnv>;

/** An authenticator that keeps something in the store (the logins: their ended sessions). */
export interface StoredAuthenticator {
  /** The authenticator writing to `pool`: the primary's when search reads a replica. */
  withPool(pool: DatabasePool): Authenticator;
}

/** Login switched off: everyone is one anonymous viewer. */
export const OPEN_VIEWER: Viewer = { subject: 'anonymous', display: 'anonymous', groups: [], via: 'open' };

export const openAccess: Authenticator = async (c, next) => {
  c.set('viewer', OPEN_VIEWER);
  await next();
};

/**
 * Groups as identity providers send them, in a login's ID token or a bearer token alike: an array
 * of strings, or one string (comma-separated).
 */
export function groupList(value: unknown): string[] {
  if (Array.isArray(value)) return value.filter((g): g is string => typeof g === 'string');
  if (typeof value === 'string')
    return value
      .split(',')
      .map((g) => g.trim())
      .filter((g) => g !== '');
  return [];
}
