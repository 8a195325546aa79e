import { connect } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { Hono } from 'hono';
import { Agent, request } from 'undici';
import { afterEach, describe, expect, it } from 'vitest';
import { type RunningServer, serveApp } from './index.js';

/** How one request ended: its status, `refused` (no connection), or `reset` (cut under it). */
type Answer = { status: number; connection: string | undefined } | 'refused' | 'reset';

async function post(dispatcher: Agent, url: string, body: string | Buffer): Promise<Answer> {
  try {
    const res = await request(`${url}/in`, { method: 'POST', body, dispatcher });
    await res.body.dump();
    return { status: res.statusCode, connection: res.headers.connection as string | undefined };
  } catch (err) {
    const code = (err as { code?: string }).code;
    if (code === 'ECONNREFUSED') return 'refused';
    return 'reset';
  }
}

/**
 * POST /in answers 200 after `delayMs`; POST /big refuses any body with 413 and `connection: close`
 * before reading it, as ingest refuses a declared length over its ceiling.
 */
function app(delayMs = 0) {
  const hono = new Hono();
  hono.post('/big', (c) => c.json({ error: 'too large' }, 413, { connection: 'close' }));
  hono.post('/in', async (c) => {
    await c.req.arrayBuffer();
    if (delayMs > 0) await sleep(delayMs);
    return c.json({ ok: true });
  });
  return hono;
}

let server: RunningServer | undefined;
let agent: Agent | undefined;
afterEach(async () => {
  await server?.close();
  await agent?.close();
  server = undefined;
  agent = undefined;
});

describe('closing under keep-alive load', () => {
  it('resets no request: those sent before the listener closed are answered, later ones refused', async () => {
    server = await serveApp(app(), { host: '127.0.0.1', port: 0, drainMs: 10_000 });
    agent = new Agent({ connections: 16 });
    const answers: Answer[] = [];
    let stop = false;
    // 16 clients, each sending its next request as soon as the last is answered: every
    // connection is idle, for the server, between an answer and the next request.
    const clients = Array.from({ length: 16 }, async () => {
      while (!stop) answers.push(await post(agent!, server!.url, 'x'));
    });
    await sleep(500);
    const closing = server.close();
    await closing;
    stop = true;
    await Promise.all(clients);
    const resets = answers.filter((a) => a === 'reset').length;
    const served = answers.filter((a) => typeof a === 'object' && a.status === 200).length;
    expect({ resets, served: served > 100 }).toEqual({ resets: 0, served: true });
  });

  it('answers a request sent on an idle keep-alive connection during the drain, with connection: close', async () => {
    server = await serveApp(app(), { host: '127.0.0.1', port: 0, drainMs: 10_000 });
    agent = new Agent({ connections: 1 });
    expect(await post(agent, server.url, 'first')).toEqual({ status: 200, connection: 'keep-alive' });
    const closing = server.close();
    await sleep(100);
    // The agent reuses the idle connection: the draining server still reads it.
    expect(await post(agent, server.url, 'second')).toEqual({ status: 200, connection: 'close' });
    await closing;
  });

  it('answers the request in flight when closing starts with connection: close', async () => {
    server = await serveApp(app(300), { host: '127.0.0.1', port: 0, drainMs: 10_000 });
    agent = new Agent({ connections: 1 });
    const pending = post(agent, server.url, 'slow');
    await sleep(100);
    const closing = server.close();
    expect(await pending).toEqual({ status: 200, connection: 'close' });
    await closing;
  });

  it('cuts a connection still open when drainMs is over', async () => {
    server = await serveApp(app(), { host: '127.0.0.1', port: 0, drainMs: 300 });
    // A client that keeps its connection open and never sends a request.
    const socket = connect(server.port, '127.0.0.1');
    await new Promise((resolve) => socket.once('connect', resolve));
    const closedByServer = new Promise((resolve) => socket.once('close', resolve));
    const started = Date.now();
    await server.close();
    await closedByServer;
    expect(Date.now() - started).toBeGreaterThanOrEqual(290);
    expect(Date.now() - started).toBeLessThan(2_000);
  });
});

/** Sends a 16 MiB body on a raw socket as fast as it can, and returns what came back. */
function rawUpload(port: number): Promise<string> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    const chunk = Buffer.alloc(64 * 1024, 'b');
    let text = '';
    let sent = 0;
    const pump = () => {
      while (sent < 256 && socket.write(chunk)) sent++;
    };
    socket.on('drain', pump);
    socket.on('data', (d) => {
      text += d.toString('latin1');
    });
    socket.on('error', () => {});
    socket.on('close', () => resolve(text));
    socket.write(`POST /big HTTP/1.1\r\nhost: localhost\r\ncontent-length: ${256 * chunk.length}\r\n\r\n`);
    pump();
  });
}

describe('a refusal written while the client is still sending its body', () => {
  it('is read by undici as the 413, every time', async () => {
    server = await serveApp(app(), { host: '127.0.0.1', port: 0 });
    agent = new Agent({ connections: 4 });
    const body = Buffer.alloc(8 * 1024 * 1024, 'b');
    const answers = await Promise.all(
      Array.from({ length: 20 }, () =>
        request(`${server!.url}/big`, { method: 'POST', body, dispatcher: agent }).then(
          async (res) => {
            await res.body.dump();
            return res.statusCode;
          },
          (err: { code?: string }) => err.code ?? 'error',
        ),
      ),
    );
    expect(answers).toEqual(Array(20).fill(413));
  });

  it('is read by a raw socket still writing, every time', async () => {
    server = await serveApp(app(), { host: '127.0.0.1', port: 0 });
    const texts = await Promise.all(Array.from({ length: 20 }, () => rawUpload(server!.port)));
    expect(texts.map((t) => t.slice(0, 12))).toEqual(Array(20).fill('HTTP/1.1 413'));
  });
});
