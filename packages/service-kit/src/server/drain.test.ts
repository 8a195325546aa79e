import { connect } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { Hono } from 'hono';
import { Agent, request } from 'undici';
import { afterEach, describe, expect, it } from 'vitest';
import { type RunningServer, serveApp } from './index.js';

/** How one request ended: its status, `refused` (no connection), or `reset: <code>` (cut under it). */
type Answer = { status: number; connection: string | undefined } | 'refused' | `reset: ${string}`;

async function post(dispatcher: Agent, url: string, body: string | Buffer): Promise<Answer> {
  try {
    const res = await request(`${url}/in`, { method: 'POST', body, dispatcher });
    await res.body.dump();
    return { status: res.statusCode, connection: res.headers.connection as string | undefined };
  } catch (err) {
    const code = (err as { code?: string }).code;
    return code === 'ECONNREFUSED' ? 'refused' : `reset: ${code}`;
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
    // Open the 16 connections first: only requests on established connections are counted (a
    // burst of fresh connections on this loaded machine drew a few resets, with or without a
    // drain: see the README).
    await Promise.all(Array.from({ length: 16 }, () => post(agent!, server!.url, 'warm-up')));
    const answers: Answer[] = [];
    let stop = false;
    // 16 clients, each sending its next request as soon as the last is answered: every
    // connection is idle, for the server, between an answer and the next request.
    const clients = Array.from({ length: 16 }, async () => {
      while (!stop) answers.push(await post(agent!, server!.url, 'x'));
    });
    // Four rounds of back-to-back requests on every connection (at most 10 s on a loaded machine).
    for (let i = 0; i < 1_000 && answers.length < 64; i++) await sleep(10);
    const sent = answers.length;
    await server.close();
    stop = true;
    await Promise.all(clients);
    expect(sent).toBeGreaterThanOrEqual(64);
    expect(answers.filter((a) => typeof a === 'string' && a.startsWith('reset'))).toEqual([]);
    // Every client's request in flight when closing started was answered, with connection: close.
    expect(answers.filter((a) => typeof a === 'object' && a.connection === 'close')).toHaveLength(16);
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

/**
 * Sends a 4 MiB body on a raw socket and reads the answer only once the whole body is written, as
 * clients that write the request before reading (Python's http.client, many SDKs) do.
 */
function uploadThenRead(port: number): Promise<string> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    socket.pause();
    const chunk = Buffer.alloc(64 * 1024, 'b');
    let text = '';
    socket.on('data', (d) => {
      text += d.toString('latin1');
    });
    socket.on('error', () => {});
    socket.on('close', () => resolve(text));
    socket.write(`POST /big HTTP/1.1\r\nhost: localhost\r\ncontent-length: ${64 * chunk.length}\r\n\r\n`);
    for (let i = 0; i < 63; i++) socket.write(chunk);
    socket.write(chunk, () => socket.resume());
  });
}

describe('a refusal written while the client is still sending its body', () => {
  it('is read by a client that reads only after sending the whole body, every time', async () => {
    server = await serveApp(app(), { host: '127.0.0.1', port: 0 });
    const texts = await Promise.all(Array.from({ length: 20 }, () => uploadThenRead(server!.port)));
    expect(texts.map((t) => t.slice(0, 12))).toEqual(Array(20).fill('HTTP/1.1 413'));
  });
});
