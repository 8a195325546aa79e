/**
 * Reading a request body under a ceiling while it streams in: a declared `content-length` over
 * the ceiling is refused before a byte is read; otherwise bytes are counted as they arrive
 * (chunked bodies, or a `content-length` that lies) and reading stops at the first byte over the
 * ceiling. Nothing beyond `limit + one chunk` is ever held in memory, and a body of many chunks is
 * held as one buffer.
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
 * The bytes of a body as they arrive, at most `limit`. One chunk is kept as it is (a body of one
 * read, the usual case, is never copied); from the second on they are copied into one buffer, so
 * a body of many small chunks (Node makes one Buffer of each chunk of a chunked body, a few
 * hundred bytes apiece even for one byte) holds its bytes, not a Buffer for each. The buffer is
 * sized from the declared length when there is one, else it doubles as needed.
 */
class BodyBytes {
  private first: Uint8Array | undefined;
  private buffer: Buffer | undefined;
  private length = 0;

  constructor(
    private readonly limit: number,
    private readonly declared: number | undefined,
  ) {}

  /** Adds `chunk`; false (nothing kept) once the body would pass the limit. */
  add(chunk: Uint8Array): boolean {
    const length = this.length + chunk.byteLength;
    if (length > this.limit) {
      this.first = undefined;
      this.buffer = undefined;
      return false;
    }
    if (this.length === 0 && this.first === undefined) this.first = chunk;
    else {
      if (this.buffer === undefined || this.buffer.byteLength < length) this.grow(length);
      this.buffer!.set(chunk, this.length);
    }
    this.length = length;
    return true;
  }

  bytes(): Uint8Array {
    if (this.buffer !== undefined) return this.buffer.subarray(0, this.length);
    return this.first ?? new Uint8Array(0);
  }

  private grow(needed: number): void {
    const size = Math.min(
      this.limit,
      Math.max(needed, (this.buffer?.byteLength ?? 0) * 2, this.declared ?? 0, 16_384),
    );
    const next = Buffer.allocUnsafe(size);
    if (this.buffer !== undefined) next.set(this.buffer.subarray(0, this.length));
    else if (this.first !== undefined) next.set(this.first);
    this.first = undefined;
    this.buffer = next;
  }
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
  const length = declared !== undefined && /^\d+$/.test(declared) ? Number(declared) : undefined;
  if (length !== undefined && length > limit) throw overLimit(limit, what);
  const body = new BodyBytes(limit, length);
  if (incoming) return readIncoming(incoming, body, () => overLimit(limit, what));
  if (request.body) {
    const reader = request.body.getReader();
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      if (!body.add(value)) {
        await reader.cancel().catch(() => {});
        throw overLimit(limit, what);
      }
    }
  }
  return body.bytes();
}

/**
 * Reads a Node.js request with plain listeners (cheaper per request than its async iterator) into
 * `body`, and stops reading (pauses the stream) at the first byte over its limit, rejecting with
 * `tooLarge()`.
 */
function readIncoming(
  incoming: IncomingMessage,
  body: BodyBytes,
  tooLarge: () => Error,
): Promise<Uint8Array> {
  return new Promise<Uint8Array>((resolve, reject) => {
    const cleanup = () => {
      incoming.off('data', onData);
      incoming.off('end', onEnd);
      incoming.off('error', onError);
      incoming.off('close', onClose);
    };
    const onData = (chunk: Buffer) => {
      if (body.add(chunk)) return;
      cleanup();
      incoming.pause();
      reject(tooLarge());
    };
    const onEnd = () => {
      cleanup();
      resolve(body.bytes());
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
