/**
 * Answers what Node's HTTP parser refused (bytes past a lying `content-length` read as a second
 * request, an oversized header block, a request or header timeout) with the spec's error body
 * instead of Node's bare `400 Bad Request`, without overtaking a response still owed.
 *
 * When the refused bytes follow complete requests on the same connection (pipelining), those
 * requests are being handled: an event may already be published. Writing the refusal at once
 * would put it on the wire before their answers and close the connection under them, so a client
 * would read `400` for a request that succeeded. Instead the connection stops reading, the owed
 * responses finish, and the refusal follows them. Only when the request being parsed is itself
 * incomplete (a broken chunked body, a stalled body) is it answered at once: it can never finish.
 */
import { type IncomingMessage, type Server, type ServerResponse, STATUS_CODES } from 'node:http';
import type { Socket } from 'node:net';
import { statusForHttpCode } from '../errors/index.js';

function statusOf(err: Error & { code?: string }): number {
  if (err.code === 'HPE_HEADER_OVERFLOW') return 431;
  if (err.code === 'ERR_HTTP_REQUEST_TIMEOUT') return 408;
  return 400;
}

/** Writes the refusal (spec error body, `connection: close`) and closes once it is flushed. */
function refuse(socket: Socket, code: number): void {
  if (!socket.writable) {
    socket.destroy();
    return;
  }
  const body = JSON.stringify({
    error: {
      code,
      message: 'the request could not be parsed as HTTP/1.1',
      status: statusForHttpCode(code),
      details: [],
    },
  });
  socket.end(
    `HTTP/1.1 ${code} ${STATUS_CODES[code]}\r\n` +
      'content-type: application/json\r\n' +
      `content-length: ${Buffer.byteLength(body)}\r\n` +
      'connection: close\r\n\r\n' +
      body,
  );
  // A client that never closes its side must not hold the connection.
  socket.destroySoon();
}

/** Installs the `clientError` handling on `server`. */
export function answerClientErrors(server: Server): void {
  const owed = new WeakMap<Socket, Set<ServerResponse>>();
  const refused = new WeakSet<Socket>();

  server.on('request', (req: IncomingMessage, res: ServerResponse) => {
    const socket = req.socket;
    const pending = owed.get(socket) ?? new Set<ServerResponse>();
    owed.set(socket, pending);
    pending.add(res);
    res.once('close', () => pending.delete(res));
  });

  server.on('clientError', (err: Error & { code?: string }, socket: Socket) => {
    if (err.code === 'ECONNRESET') {
      socket.destroy();
      return;
    }
    // The parser stays in error: every later chunk would report again.
    if (refused.has(socket)) return;
    refused.add(socket);
    const code = statusOf(err);
    const pending = [...(owed.get(socket) ?? [])];
    if (pending.length === 0 || pending.some((res) => !res.req.complete)) {
      refuse(socket, code);
      return;
    }
    socket.pause();
    let left = pending.length;
    for (const res of pending) {
      res.once('close', () => {
        if (--left === 0) refuse(socket, code);
      });
    }
  });
}
