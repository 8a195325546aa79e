import { connect } from 'node:net';
import { Hono } from 'hono';
import { afterEach, describe, expect, it } from 'vitest';
import { type RunningServer, serveApp } from './index.js';

/** What a raw socket received, and when the server closed it (ms after the first write). */
interface Exchange {
  text: string;
  closedAfterMs: number;
}

/** Writes `bytes` on a fresh connection (nothing more) and collects the answer until the server closes it. */
function exchange(server: RunningServer, bytes: string): Promise<Exchange> {
  return new Promise((resolve, reject) => {
    const started = Date.now();
    const socket = connect(server.port, '127.0.0.1');
    let text = '';
    socket.on('data', (d) => {
      text += d.toString();
    });
    socket.on('close', () => resolve({ text, closedAfterMs: Date.now() - started }));
    socket.on('error', reject);
    socket.write(bytes);
  });
}

/** The responses in `text`, in order: status and body (bodies here are small and length-delimited). */
function responses(text: string): Array<{ status: number; body: string }> {
  const out: Array<{ status: number; body: string }> = [];
  let rest = text;
  while (rest.startsWith('HTTP/1.1 ')) {
    const headEnd = rest.indexOf('\r\n\r\n');
    const head = rest.slice(0, headEnd);
    const length = Number(/\r\ncontent-length: (\d+)/i.exec(head)?.[1] ?? 0);
    out.push({ status: Number(head.slice(9, 12)), body: rest.slice(headEnd + 4, headEnd + 4 + length) });
    rest = rest.slice(headEnd + 4 + length);
  }
  return out;
}

/** An app whose POST /in answers after a delay with the length of the body it read. */
function slowEcho(delayMs: number) {
  const app = new Hono();
  app.post('/in', async (c) => {
    const length = (await c.req.arrayBuffer()).byteLength;
    await new Promise((r) => setTimeout(r, delayMs));
    return c.json({ length });
  });
  return app;
}

let server: RunningServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

describe('pipelined bytes that are not HTTP', () => {
  it('let the request before them finish and be answered, then answer 400 with the spec error body and close', async () => {
    server = await serveApp(slowEcho(150), { host: '127.0.0.1', port: 0 });
    // Two bytes announced and sent; what follows in the same write is parsed as a second request.
    const { text } = await exchange(
      server,
      'POST /in HTTP/1.1\r\nhost: x\r\ncontent-length: 2\r\n\r\nabcdef garbage\r\n\r\n',
    );
    const [first, second, ...more] = responses(text);
    expect(first).toEqual({ status: 200, body: '{"length":2}' });
    expect(second?.status).toBe(400);
    expect(JSON.parse(second!.body)).toEqual({
      error: { code: 400, message: expect.any(String), status: 'INVALID_ARGUMENT', details: [] },
    });
    expect(more).toEqual([]);
  });

  it('wait for a request that asked for `100 Continue` as for any other', async () => {
    server = await serveApp(slowEcho(150), { host: '127.0.0.1', port: 0 });
    // The client sends its body without waiting for `100 Continue`, as it may.
    const { text } = await exchange(
      server,
      'POST /in HTTP/1.1\r\nhost: x\r\ncontent-length: 2\r\nexpect: 100-continue\r\n\r\nabcdef garbage\r\n\r\n',
    );
    expect(responses(text).map(({ status, body }) => [status, status === 400 ? '' : body])).toEqual([
      [100, ''],
      [200, '{"length":2}'],
      [400, ''],
    ]);
  });

  it('answer 400 at once when the request they interrupt is itself incomplete (a broken chunked body)', async () => {
    server = await serveApp(slowEcho(0), { host: '127.0.0.1', port: 0 });
    const { text } = await exchange(
      server,
      'POST /in HTTP/1.1\r\nhost: x\r\ntransfer-encoding: chunked\r\n\r\n2\r\nab\r\nzz\r\n',
    );
    expect(responses(text).map((r) => r.status)).toEqual([400]);
  });
});

describe('listener timeouts', () => {
  const timeouts = { requestTimeoutMs: 600, headersTimeoutMs: 300, keepAliveTimeoutMs: 200 };

  it('answer a body that stalls mid-way with 408 within the request timeout and close', async () => {
    server = await serveApp(slowEcho(0), { host: '127.0.0.1', port: 0, timeouts });
    const { text, closedAfterMs } = await exchange(
      server,
      'POST /in HTTP/1.1\r\nhost: x\r\ncontent-length: 100\r\n\r\nonly a few bytes',
    );
    expect(responses(text).map((r) => r.status)).toEqual([408]);
    expect(closedAfterMs).toBeGreaterThanOrEqual(timeouts.requestTimeoutMs - 50);
    // The check runs every quarter of the shortest timeout, so one period of slack plus scheduling.
    expect(closedAfterMs).toBeLessThan(timeouts.requestTimeoutMs + 500);
  }, 5_000);

  it('close a connection whose header block stalls within the headers timeout', async () => {
    // The request timeout far above it: the close can only be the headers timeout's, with room
    // for a loaded machine's late timers (852 ms against 300 in one full run).
    const apart = { ...timeouts, requestTimeoutMs: 3_000 };
    server = await serveApp(slowEcho(0), { host: '127.0.0.1', port: 0, timeouts: apart });
    const { text, closedAfterMs } = await exchange(server, 'POST /in HTTP/1.1\r\nhost: x\r\n');
    expect(responses(text).map((r) => r.status)).toEqual([408]);
    expect(closedAfterMs).toBeGreaterThanOrEqual(apart.headersTimeoutMs - 50);
    expect(closedAfterMs).toBeLessThan(apart.headersTimeoutMs + 1_500);
  }, 5_000);

  it('close an idle keep-alive connection after the keep-alive timeout', async () => {
    server = await serveApp(slowEcho(0), { host: '127.0.0.1', port: 0, timeouts });
    const { text, closedAfterMs } = await exchange(
      server,
      'POST /in HTTP/1.1\r\nhost: x\r\ncontent-length: 2\r\n\r\nab',
    );
    expect(responses(text).map((r) => r.status)).toEqual([200]);
    // Node keeps an idle socket one second past keepAliveTimeout (its buffer against racing clients);
    // its timers fire up to a second and a half late on a loaded machine (2,575 ms in a full run).
    // Without the timeout the socket would stay open past the test's 5 s.
    expect(closedAfterMs).toBeLessThan(timeouts.keepAliveTimeoutMs + 1000 + 1500);
  }, 5_000);

  it('refuses a headers timeout longer than the request timeout when serving starts', async () => {
    await expect(
      serveApp(new Hono(), {
        host: '127.0.0.1',
        port: 0,
        timeouts: { requestTimeoutMs: 1000, headersTimeoutMs: 2000, keepAliveTimeoutMs: 100 },
      }),
    ).rejects.toThrow(/HTTP_HEADERS_TIMEOUT/);
  });
});
