/** The tail and the dead-letter calls against small HTTP servers on loopback that answer as the services do. */
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { listDeadLetters, replayDeadLetters } from './dlq.js';
import { tail } from './tail.js';

let server: Server | undefined;
afterEach(() => new Promise<void>((done) => (server ? server.close(() => done()) : done())));

async function serve(
  handler: (req: IncomingMessage, res: import('node:http').ServerResponse) => void,
): Promise<string> {
  server = createServer(handler);
  await new Promise<void>((done) => server?.listen(0, '127.0.0.1', done));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

describe('tail', () => {
  it('prints each streamed event on a line, with the filters in the query', async () => {
    let asked = '';
    const url = await serve((req, res) => {
      asked = req.url ?? '';
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      const e = {
        time: '2026-01-01 10:00:00',
        severity: 'error',
        type: 'com.x.alarm',
        source: '/boiler/1',
        subject: 'temp',
      };
      res.write(`event: event\nid: c1\ndata: ${JSON.stringify(e)}\n\n`);
      res.end(`event: event\ndata: ${JSON.stringify({ ...e, severity: null, subject: null })}\n\n`);
    });
    const lines: string[] = [];
    await tail(url, 'severity=error', (l) => lines.push(l), new AbortController().signal);
    expect(asked).toBe('/events/tail?severity=error');
    expect(lines).toEqual([
      '2026-01-01 10:00:00  error    com.x.alarm  /boiler/1  temp',
      '2026-01-01 10:00:00  -        com.x.alarm  /boiler/1',
    ]);
  });
});

describe('dlq', () => {
  it('lists with the bearer token and the filters; replay plans unless committed', async () => {
    const seen: string[] = [];
    const url = await serve((req, res) => {
      seen.push(`${req.method} ${req.url} ${req.headers.authorization}`);
      const record = { key: 'events/0/7', time: 't', reason: 'malformed', detail: 'not JSON' };
      const body = req.url?.startsWith('/admin/dlq:replay')
        ? {
            dryRun: req.url.includes('dryRun=true'),
            scanned: 1,
            truncated: false,
            planned: 1,
            replayed: 0,
            failed: 0,
            records: [{ ...record, outcome: 'skipped' }],
          }
        : { records: [record], scanned: 3, truncated: true, returned: 1 };
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(body));
    });
    const req = { consumerUrl: url, token: 'tok', limit: 5, reason: 'malformed' };
    expect(await listDeadLetters(req)).toBe(
      't  malformed  events/0/7  not JSON\n1 listed, 3 scanned (truncated)',
    );
    expect(await replayDeadLetters(req, false)).toBe(
      't  malformed  events/0/7  skipped  not JSON\ndry run: 1 planned, 0 replayed, 0 failed, 1 scanned',
    );
    await replayDeadLetters(req, true);
    expect(seen).toEqual([
      'GET /admin/dlq/records?limit=5&reason=malformed Bearer tok',
      'POST /admin/dlq:replay?dryRun=true&limit=5&reason=malformed Bearer tok',
      'POST /admin/dlq:replay?dryRun=false&limit=5&reason=malformed Bearer tok',
    ]);
  });

  it('an error answer becomes one line with the status, not the token', async () => {
    const url = await serve((_req, res) => res.writeHead(401).end('{"code":"UNAUTHENTICATED"}'));
    await expect(listDeadLetters({ consumerUrl: url, token: 'secret-token' })).rejects.toThrow(
      /^GET http:\/\/127\.0\.0\.1:\d+\/admin\/dlq\/records answered 401: \{"code":"UNAUTHENTICATED"\}$/,
    );
  });
});
