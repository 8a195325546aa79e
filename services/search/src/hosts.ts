/**
 * The allowed-hosts filter: a request whose `Host` (or the authority of an absolute-form target)
 * is not in `ALLOWED_HOSTS` gets 400 in the spec's error body. An entry with a leading dot
 * (`.local`) matches that domain and every subdomain; any other entry matches exactly. Letter
 * case and the port are ignored.
 *
 * @example
 * const allowed = hostMatcher(['localhost', '.local']);
 * allowed('printer.local:9000'); // true
 */
import { ApiError } from '@event-observatory/service-kit/errors';
import type { MiddlewareHandler } from 'hono';

/** The host name of a `Host` header value: no port, no brackets, lower case, no trailing dot. */
export function hostName(header: string): string {
  const value = header.trim().toLowerCase();
  const name = value.startsWith('[') ? value.slice(1, value.indexOf(']')) : value.replace(/:\d*$/, '');
  return name.replace(/\.$/, '');
}

export function hostMatcher(allowed: readonly string[]): (header: string | undefined) => boolean {
  const entries = allowed.map((h) => h.trim().toLowerCase()).filter((h) => h !== '');
  if (entries.length === 0) throw new RangeError('ALLOWED_HOSTS: at least one host is required');
  const exact = new Set(entries.filter((h) => !h.startsWith('.')));
  const domains = entries.filter((h) => h.startsWith('.'));
  return (header) => {
    if (!header) return false;
    const name = hostName(header);
    if (name === '') return false;
    return exact.has(name) || domains.some((d) => name.endsWith(d) || name === d.slice(1));
  };
}

/** Middleware answering 400 to a disallowed `Host`. Probes are exempt: the kubelet sends the pod IP. */
export function allowedHosts(allowed: readonly string[]): MiddlewareHandler {
  const matches = hostMatcher(allowed);
  return async (c, next) => {
    if (c.req.path.startsWith('/health/')) return next();
    const host = c.req.header('host');
    // An absolute-form target (`GET http://other/...`) names the authority the request is for
    // (RFC 9112 section 3.2.2); the URL carries it, else the Host header: both must be allowed.
    if (!matches(host) || !matches(new URL(c.req.url).host)) {
      throw new ApiError('InvalidArgument', 'this host name is not allowed (ALLOWED_HOSTS)', {
        reason: 'host-not-allowed',
        metadata: { host: (host ?? '').slice(0, 255) },
      });
    }
    return next();
  };
}
