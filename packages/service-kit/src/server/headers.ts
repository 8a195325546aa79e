/**
 * Request headers without building a WHATWG `Headers` object. `@hono/node-server` builds one
 * lazily on the first `c.req.header()` (converting and validating every header), and iterating
 * it sorts them; on the hot ingest path that was about a seventh of all allocation. When the
 * request came through the Node.js adapter, Node's own parsed headers (`c.env.incoming`) are read
 * instead, with the `Headers` semantics: names lower-case, every repeated header joined with `, `.
 * (`headersDistinct`, not `headers`: the latter keeps only the first `authorization` or
 * `content-type`, so a request repeating them would be judged by its first copy while a proxy may
 * have judged the last; joined, a repeated credential is simply invalid.) Other runtimes
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
  return incoming.headersDistinct[name]?.join(', ');
}

/** Every request header as `[lower-case name, value]` pairs. */
export function requestHeaderPairs(c: Context): Iterable<readonly [string, string]> {
  const incoming = incomingOf(c);
  if (!incoming) return c.req.raw.headers;
  const pairs: Array<readonly [string, string]> = [];
  for (const [name, values] of Object.entries(incoming.headersDistinct)) {
    if (values !== undefined) pairs.push([name, values.join(', ')]);
  }
  return pairs;
}
