/**
 * Reading a request body under a ceiling while it streams in: a declared `content-length` over
 * the ceiling is refused before a byte is read; otherwise bytes are counted as they arrive
 * (chunked bodies, or a `content-length` that lies) and reading stops at the first byte over the
 * ceiling. Nothing beyond `limit + one chunk` is ever held in memory.
 */
import type { IncomingMessage } from 'node:http';
import { tooLarge } from '@event-observatory/events';

function overLimit(limit: number, what: string) {
  return tooLarge(`${what} exceeds ${limit} bytes`, { limitBytes: String(limit) });
}

/**
 * The body bytes, or an `EventRejection` (`too-large`, 413) once more than `limit` bytes arrive.
 * Reads the Node.js request directly when `@hono/node-server` provides it (`c.env.incoming`),
 * else the WHATWG stream (`app.request()` in tests).
 */
export async function readBodyLimited(
  request: Request,
  incoming: IncomingMessage | undefined,
  limit: number,
  what = 'the request body',
): Promise<Uint8Array> {
  const declared = request.headers.get('content-length');
  if (declared !== null && /^\d+$/.test(declared) && Number(declared) > limit) throw overLimit(limit, what);
  const chunks: Uint8Array[] = [];
  let total = 0;
  if (incoming) {
    for await (const chunk of incoming as AsyncIterable<Buffer>) {
      total += chunk.byteLength;
      if (total > limit) {
        incoming.pause();
        throw overLimit(limit, what);
      }
      chunks.push(chunk);
    }
  } else if (request.body) {
    const reader = request.body.getReader();
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      total += value.byteLength;
      if (total > limit) {
        await reader.cancel().catch(() => {});
        throw overLimit(limit, what);
      }
      chunks.push(value);
    }
  }
  if (chunks.length === 1) return chunks[0]!;
  return Buffer.concat(chunks, total);
}
