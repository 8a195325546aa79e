/**
 * Proxy mode: an authenticating proxy (oauth2-proxy with `--set-xauthrequest`, or any proxy that
 * sends the same headers) logs the user in and names them in `X-Auth-Request-User`, `-Email` and
 * `-Groups`. Those headers are believed only from a TCP peer inside `SEARCH_TRUSTED_PROXIES`:
 * anyone else could send them too. The peer is the socket's own address, never `X-Forwarded-For`,
 * which the client writes.
 */
import { BlockList, isIP } from 'node:net';
import { configProblem, custom, type Env, readConfig } from '@event-observatory/service-kit/config';
import { ApiError } from '@event-observatory/service-kit/errors';
import { getConnInfo } from '@hono/node-server/conninfo';
import type { Context } from 'hono';
import type { Authenticator, Viewer } from '../viewer.js';

export const USER_HEADER = 'x-auth-request-user';
export const EMAIL_HEADER = 'x-auth-request-email';
export const GROUPS_HEADER = 'x-auth-request-groups';

/** The proxies whose identity headers are believed. */
export interface TrustedProxies {
  has(address: string): boolean;
  /** The configured ranges, as given (for the start-up log). */
  readonly cidrs: readonly string[];
}

/**
 * Parses a comma-separated list of CIDRs (`10.0.0.0/8`, `fd00::/8`) or single addresses; throws an
 * Error naming the first bad entry. An empty list is refused: proxy mode would then refuse everyone.
 */
export function parseTrustedProxies(raw: string): TrustedProxies {
  const cidrs = raw
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '');
  if (cidrs.length === 0) throw new Error('expected a comma-separated list of CIDRs, e.g. 10.0.0.0/8');
  const list = new BlockList();
  for (const cidr of cidrs) {
    const [address = '', prefix, extra] = cidr.split('/');
    const family = isIP(address);
    const bits = family === 4 ? 32 : 128;
    const length = prefix === undefined ? bits : /^\d{1,3}$/.test(prefix) ? Number(prefix) : Number.NaN;
    if (family === 0 || extra !== undefined || !(length <= bits)) {
      throw new Error(`${cidr}: not an IPv4 or IPv6 address or CIDR`);
    }
    list.addSubnet(address, length, family === 4 ? 'ipv4' : 'ipv6');
  }
  return {
    cidrs,
    // BlockList matches an IPv4-mapped IPv6 peer (::ffff:10.0.0.1, on a dual-stack listener)
    // against IPv4 ranges.
    has: (address) => {
      const family = isIP(address);
      return family !== 0 && list.check(address, family === 4 ? 'ipv4' : 'ipv6');
    },
  };
}

/** `SEARCH_TRUSTED_PROXIES` (required in proxy mode); throws `ConfigError` naming it. */
export function trustedProxiesFromEnv(env: Env): TrustedProxies {
  return readConfig(env, {
    trusted: custom('SEARCH_TRUSTED_PROXIES', (raw) => {
      try {
        return parseTrustedProxies(raw);
      } catch (err) {
        throw configProblem((err as Error).message);
      }
    }),
  }).trusted;
}

/** The TCP peer of a request served by @hono/node-server; undefined in-process (`app.request`). */
export function peerAddress(c: Context): string | undefined {
  const env = c.env as { incoming?: unknown; server?: unknown } | undefined;
  if (!env?.incoming && !env?.server) return undefined;
  return getConnInfo(c).remote.address;
}

/** A 401 in the spec's error body; bearer tokens remain a way in. */
export function unauthenticated(message: string, reason: string): ApiError {
  return new ApiError('Unauthorized', message, { reason, headers: { 'www-authenticate': 'Bearer' } });
}

/** The viewer the proxy named, from its headers. */
function proxyViewer(user: string, email: string | undefined, groups: string | undefined): Viewer {
  return {
    subject: user,
    display: email || user,
    groups: (groups ?? '')
      .split(',')
      .map((g) => g.trim())
      .filter((g) => g !== ''),
    via: 'proxy',
  };
}

/**
 * Whether a trusted proxy sent the request and named its user. Such a request is the proxy's to
 * decide, even when it carries `Authorization: Bearer`: oauth2-proxy checks a script's bearer token
 * itself (`--skip-jwt-bearer-tokens`) and passes the header on, for a provider search need not know.
 */
export function namedByTrustedProxy(trusted: TrustedProxies): (c: Context) => boolean {
  return (c) => {
    const peer = peerAddress(c);
    return peer !== undefined && trusted.has(peer) && !!c.req.header(USER_HEADER)?.trim();
  };
}

/**
 * Sets the viewer from the proxy's headers when the peer is a trusted proxy and names a user;
 * answers 401 otherwise (reasons `untrusted-peer`, `no-proxy-user`).
 */
export function proxyAuthenticator(trusted: TrustedProxies): Authenticator {
  return async (c, next) => {
    const peer = peerAddress(c);
    if (peer === undefined || !trusted.has(peer)) {
      throw unauthenticated('sign in through the authenticating proxy', 'untrusted-peer');
    }
    const user = c.req.header(USER_HEADER)?.trim();
    if (!user) throw unauthenticated('the authenticating proxy named no user', 'no-proxy-user');
    c.set('viewer', proxyViewer(user, c.req.header(EMAIL_HEADER)?.trim(), c.req.header(GROUPS_HEADER)));
    await next();
  };
}
