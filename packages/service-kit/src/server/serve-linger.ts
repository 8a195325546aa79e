/**
 * Lingering close (RFC 9112 section 9.6, "staged disconnect"). When the server closes a connection
 * after an answer while the client is still sending (a 413 written before the body was read, a
 * refusal of the parser), closing the socket at once makes the server's kernel answer the unread
 * bytes with a reset, and the client's kernel then drops the answer it had not read yet: the
 * client sees EPIPE or ECONNRESET instead of the 413. So the connection is half-closed after the
 * answer (FIN), and what still arrives is read and discarded until the client closes its side, for
 * at most `lingerMs`; only then is the socket destroyed.
 */
import type { Server } from 'node:http';
import type { Socket } from 'node:net';

/**
 * How long a closing connection keeps reading: nginx's `lingering_timeout`, 5 s. A client that
 * reads only after sending its whole body must get the rest of it out within that (a slow uplink,
 * a loaded machine: 1 s lost the answer of some of 20 clients sending 4 MiB at once in a full test
 * run); a client that reads closes at once, and a slow-loris client gets no longer.
 */
export const LINGER_MS = 5_000;

function linger(socket: Socket, lingering: WeakSet<Socket>, lingerMs: number): void {
  if (lingering.has(socket) || socket.destroyed) return;
  lingering.add(socket);
  // Half-close after what is written; Node destroys the socket itself once the client's FIN
  // arrives too (both sides ended).
  socket.end();
  const timer = setTimeout(() => socket.destroy(), lingerMs);
  timer.unref();
  socket.once('close', () => clearTimeout(timer));
}

/**
 * Makes every connection of `server` close by lingering. Node's HTTP server (after a
 * `connection: close` answer), `@hono/node-server` (after draining an unread body) and the
 * refusals of `client-error.ts` all close through `socket.destroySoon()`, which writes FIN and
 * destroys the socket as soon as it is flushed; here it lingers instead.
 */
export function lingerOnClose(server: Server, lingerMs = LINGER_MS): void {
  const lingering = new WeakSet<Socket>();
  server.on('connection', (socket: Socket) => {
    socket.destroySoon = () => linger(socket, lingering, lingerMs);
  });
}
