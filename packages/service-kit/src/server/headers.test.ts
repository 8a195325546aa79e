import { connect } from 'node:net';
import { Hono } from 'hono';
import { describe, expect, it } from 'vitest';
import { requestHeader, requestHeaderPairs, serveApp } from './index.js';

/** An app echoing what the helpers read. */
function echoApp() {
  const app = new Hono();
  app.get('/h', (c) =>
    c.json({
      auth: requestHeader(c, 'authorization') ?? null,
      list: requestHeader(c, 'x-list') ?? null,
      absent: requestHeader(c, 'x-absent') ?? null,
      pairs: Object.fromEntries(requestHeaderPairs(c)),
    }),
  );
  return app;
}

/** A GET written on a raw socket, so repeated header lines reach the server as sent. */
function rawGet(url: string, headers: Array<[string, string]>): Promise<Record<string, unknown>> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname, () => {
      const lines = headers.map(([name, value]) => `${name}: ${value}\r\n`).join('');
      socket.end(`GET /h HTTP/1.1\r\nhost: ${hostname}\r\nconnection: close\r\n${lines}\r\n`);
    });
    const chunks: Buffer[] = [];
    socket.on('data', (c: Buffer) => chunks.push(c));
    socket.on('error', reject);
    socket.on('end', () => {
      const text = Buffer.concat(chunks).toString();
      resolve(JSON.parse(text.slice(text.indexOf('\r\n\r\n') + 4)));
    });
  });
}

describe('requestHeader / requestHeaderPairs', () => {
  it('read Node.js headers on a served app: case-insensitive, every repeated header joined as Headers does', async () => {
    const server = await serveApp(echoApp(), { host: '127.0.0.1', port: 0 });
    try {
      const body = await rawGet(server.url, [
        ['Authorization', 'Bearer first'],
        ['authorization', 'Bearer second'],
        ['X-List', 'a'],
        ['x-list', 'b'],
        ['CE-Id', 'e-1'],
      ]);
      expect(body).toMatchObject({ auth: 'Bearer first, Bearer second', list: 'a, b', absent: null });
      expect(body.pairs).toMatchObject({
        authorization: 'Bearer first, Bearer second',
        'x-list': 'a, b',
        'ce-id': 'e-1',
      });
    } finally {
      await server.close();
    }
  });

  it('fall back to the WHATWG headers outside Node.js (app.request)', async () => {
    const res = await echoApp().request('/h', { headers: { Authorization: 'Bearer t', 'X-List': 'a, b' } });
    const body = (await res.json()) as Record<string, unknown>;
    expect(body).toMatchObject({ auth: 'Bearer t', list: 'a, b', absent: null });
    expect(body.pairs).toMatchObject({ authorization: 'Bearer t', 'x-list': 'a, b' });
  });
});
