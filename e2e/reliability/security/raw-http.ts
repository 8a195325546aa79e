/**
 * HTTP/1.1 over a raw socket: the bytes exactly as written (no client library normalises a
 * conflicting `content-length` away), and the responses exactly as the server framed them.
 */
import { connect, type Socket } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { withTimeout } from '@event-observatory/service-kit/resilience';

export interface RawResponse {
  status: number;
  headers: Record<string, string>;
  body: string;
}

export interface Exchange {
  responses: RawResponse[];
  /** Milliseconds from the first write until the server closed the connection. */
  closedAfterMs: number;
}

/** Splits what the server wrote into responses (content-length framed, as these servers answer). */
export function parseResponses(text: string): RawResponse[] {
  const out: RawResponse[] = [];
  let rest = text;
  while (rest.startsWith('HTTP/1.1 ')) {
    const headEnd = rest.indexOf('\r\n\r\n');
    if (headEnd === -1) break;
    const lines = rest.slice(0, headEnd).split('\r\n');
    const headers: Record<string, string> = {};
    for (const line of lines.slice(1)) {
      const colon = line.indexOf(':');
      headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
    }
    const length = Number(headers['content-length'] ?? 0);
    out.push({
      status: Number(lines[0]!.slice(9, 12)),
      headers,
      body: rest.slice(headEnd + 4, headEnd + 4 + length),
    });
    rest = rest.slice(headEnd + 4 + length);
  }
  return out;
}

export interface ExchangeOptions {
  /** Written one after another with `pauseMs` between them (a slow client). */
  pauseMs?: number;
  /** Give up (and fail) when the server has not closed the connection by then. */
  timeoutMs?: number;
  /** Half-close after writing, as a client that has nothing more to send. */
  end?: boolean;
}

/**
 * Writes `parts` to `port` and collects everything the server answers until it closes the
 * connection. Rejects (a `TimeoutError`) when the server keeps it open beyond `timeoutMs`.
 */
export async function exchange(
  port: number,
  parts: (string | Buffer)[],
  opts: ExchangeOptions = {},
): Promise<Exchange> {
  const { pauseMs = 0, timeoutMs = 15_000, end = false } = opts;
  const socket: Socket = connect(port, '127.0.0.1');
  const chunks: Buffer[] = [];
  const started = Date.now();
  socket.on('data', (d) => chunks.push(d));
  socket.on('error', () => {}); // a reset after the answer is the server closing: judged by the answer
  const closed = new Promise<void>((resolve) => socket.once('close', () => resolve()));
  socket.once('connect', async () => {
    for (const [i, part] of parts.entries()) {
      if (socket.destroyed) return;
      if (i > 0 && pauseMs > 0) await sleep(pauseMs);
      socket.write(part);
    }
    if (end && !socket.destroyed) socket.end();
  });
  try {
    await withTimeout(closed, timeoutMs, 'the server closing the connection');
  } finally {
    socket.destroy();
  }
  return {
    responses: parseResponses(Buffer.concat(chunks).toString('latin1')),
    closedAfterMs: Date.now() - started,
  };
}

/** The head of a request: request line, then `headers` in order (repeats allowed), then CRLF. */
export function head(requestLine: string, headers: [string, string][]): string {
  return `${requestLine}\r\n${headers.map(([k, v]) => `${k}: ${v}\r\n`).join('')}\r\n`;
}
