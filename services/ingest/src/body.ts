/**
 * Reading a request body under a ceiling while it streams in: a declared `content-length` over
 * the ceiling is refused before a byte is read; otherwise bytes are counted as they arrive
 * (chunked bodies, or a `content-length` that lies) and reading stops at the first byte over the
 * ceiling. Nothing beyond `limit + one chunk` is ever held in memory.
 */
import type { IncomingMessage } from 'node:http';
import { tooLarge } from '@event-observatory/events';
import { HTTPException } from 'hono/http-exception';
import type { ContentfulStatusCode } from 'hono/utils/http-status';

/**
 * The client went away before its body was complete: nginx's 499 (canonical CANCELLED), so it is
 * neither a server error in `http_server_requests_seconds` nor logged as one.
 */
function clientGone(): HTTPException {
  return new HTTPException(499 as ContentfulStatusCode, {
    message: 'the request was aborted before its body was complete',
  });
}

function overLimit(limit: number, what: string) {
  return tooLarge(`${what} exceeds ${limit} bytes`, { limitBytes: String(limit) });
}

/**
 * The body bytes, or an `EventRejection` (`too-large`, 413) once more than `limit` bytes arrive
 * (at once when `declared`, the `content-length` header, already says so). Reads the Node.js request directly when `@hono/node-server` provides it (`c.env.incoming`),
 * else the WHATWG stream (`app.request()` in tests).
 */
export async function readBodyLimited(
  request: Request,
  incoming: IncomingMessage | undefined,
  declared: string | undefined,
  limit: number,
  what = 'the request body',
): Promise<Uint8Array> {
  if (declared !== undefined && /^\d+$/.test(declared) && Number(declared) > limit)
    throw overLimit(limit, what);
  if (incoming) return readIncoming(incoming, limit, what);
  const chunks: Uint8Array[] = [];
  let total = 0;
  if (request.body) {
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

/**
 * Reads a Node.js request with plain listeners (cheaper per request than its async iterator):
 * counts bytes as they arrive and stops reading (pauses the stream) at the first byte over
 * `limit`, so nothing beyond `limit + one chunk` is held.
 */
function readIncoming(incoming: IncomingMessage, limit: number, what: string): Promise<Uint8Array> {
  return new Promise<Uint8Array>((resolve, reject) => {
    const chunks: Buffer[] = [];
    let total = 0;
    const cleanup = () => {
      incoming.off('data', onData);
      incoming.off('end', onEnd);
      incoming.off('error', onError);
      incoming.off('close', onClose);
    };
    const onData = (chunk: Buffer) => {
      total += chunk.byteLength;
      if (total > limit) {
        cleanup();
        incoming.pause();
        chunks.length = 0;
        reject(overLimit(limit, what));
        return;
      }
      chunks.push(chunk);
    };
    const onEnd = () => {
      cleanup();
      resolve(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, total));
    };
    const onError = () => {
      cleanup();
      reject(clientGone());
    };
    // A client that goes away mid-body: the stream closes without 'end'.
    const onClose = () => {
      if (incoming.readableEnded) return;
      cleanup();
      reject(clientGone());
    };
    if (incoming.readableEnded) return onEnd();
    // Gone while the request waited for its turn (a token verified on the thread pool): its
    // 'close' has fired already and would never reach the listeners below.
    if (incoming.destroyed) return reject(clientGone());
    incoming.on('data', onData);
    incoming.on('end', onEnd);
    incoming.on('error', onError);
    incoming.on('close', onClose);
  });
}
