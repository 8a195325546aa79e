/**
 * Request headers without building a WHATWG `Headers` object. `@hono/node-server` builds one
 * lazily on the first `c.req.header()` (converting and validating every header), and iterating
 * it sorts them; on the hot ingest path that was about a seventh of all allocation. When the
 * request came through the Node.js adapter, Node's own parsed header object (`c.env.incoming`)
 * is read instead: names lower-case, repeated headers joined with `, ` except those Node keeps
 * once (e.g. `authorization`, `content-type`: the first one counts). Other runtimes
 * (`app.request()` in tests) fall back to the `Headers` object.
 */
import type { IncomingMessage } from 'node:http';
import type { Context } from 'hono';

function incomingOf(c: Context): IncomingMessage | undefined {
  return (c.env as { incoming?: IncomingMessage } | undefined)?.incoming;
}

/** One request header (`name` lower-case), or undefined. */
export function requestHeader(c: Context, name: string): string | undefined {
  const incoming = incomingOf(c);
  if (!incoming) return c.req.header(name);
  const value = incoming.headers[name];
  return Array.isArray(value) ? value.join(', ') : value;
}

/** Every request header as `[lower-case name, value]` pairs. */
export function requestHeaderPairs(c: Context): Iterable<readonly [string, string]> {
  const incoming = incomingOf(c);
  if (!incoming) return c.req.raw.headers;
  const pairs: Array<readonly [string, string]> = [];
  for (const [name, value] of Object.entries(incoming.headers)) {
    if (value !== undefined) pairs.push([name, Array.isArray(value) ? value.join(', ') : value]);
  }
  return pairs;
}
