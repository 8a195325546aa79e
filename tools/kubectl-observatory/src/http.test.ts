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
  const e = {
    time: '2026-01-01 10:00:00',
    severity: 'error',
    type: 'com.x.alarm',
    source: '/boiler/1',
    subject: 'temp',
  };

  it('prints each streamed event on a line with its token and filters, and resumes after the server ends the stream', async () => {
    const asked: { url: string; auth?: string; last?: string }[] = [];
    const stop = new AbortController();
    const url = await serve((req, res) => {
      asked.push({
        url: req.url ?? '',
        auth: req.headers.authorization,
        last: req.headers['last-event-id'] as string,
      });
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      if (asked.length === 1) {
        // The first stream: two events, then the server ends it (its age limit).
        res.write('retry: 10\n\n');
        res.write(`event: event\nid: c1\ndata: ${JSON.stringify(e)}\n\n`);
        res.end(`event: event\nid: c2\ndata: ${JSON.stringify({ ...e, severity: null, subject: null })}\n\n`);
      } else {
        res.end(`event: event\nid: c3\ndata: ${JSON.stringify({ ...e, type: 'com.x.after' })}\n\n`);
      }
    });
    const lines: string[] = [];
    const warnings: string[] = [];
    await tail({
      searchUrl: url,
      query: 'severity=error',
      token: () => 'search-token',
      write: (l) => {
        lines.push(l);
        if (l.includes('com.x.after')) stop.abort();
      },
      warn: (l) => warnings.push(l),
      signal: stop.signal,
    });
    expect(asked).toEqual([
      { url: '/events/tail?severity=error', auth: 'Bearer search-token', last: undefined },
      { url: '/events/tail?severity=error', auth: 'Bearer search-token', last: 'c2' },
    ]);
    expect(lines).toEqual([
      '2026-01-01 10:00:00  error    com.x.alarm  /boiler/1  temp',
      '2026-01-01 10:00:00  -        com.x.alarm  /boiler/1',
      '2026-01-01 10:00:00  error    com.x.after  /boiler/1  temp',
    ]);
    expect(warnings).toEqual([]);
  });

  it('asks for the token again at each connection: a rotated token carries it past the old one', async () => {
    const asked: (string | undefined)[] = [];
    const stop = new AbortController();
    const url = await serve((req, res) => {
      asked.push(req.headers.authorization);
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      // The server ends the first stream, as it does at its token's expiry.
      res.end(`retry: 10\n\nevent: event\nid: c${asked.length}\ndata: ${JSON.stringify(e)}\n\n`);
      if (asked.length === 2) stop.abort();
    });
    const tokens = ['first-token', 'rotated-token'];
    await tail({
      searchUrl: url,
      query: '',
      token: () => tokens[Math.min(asked.length, 1)],
      write: () => {},
      warn: () => {},
      signal: stop.signal,
    });
    expect(asked).toEqual(['Bearer first-token', 'Bearer rotated-token']);
  });

  it('tries again after a 429 or a 503, and gives up on a 401 without printing the token', async () => {
    const statuses = [429, 503, 401];
    const url = await serve((_req, res) => res.writeHead(statuses.shift() ?? 500).end('{"error":"no"}'));
    const warnings: string[] = [];
    const run = tail({
      searchUrl: url,
      query: '',
      token: () => 'secret-token',
      write: () => {},
      warn: (l) => warnings.push(l),
      signal: new AbortController().signal,
      backoffMs: () => 5,
    });
    await expect(run).rejects.toThrow(/answered 401/);
    expect(warnings.map((w) => w.match(/answered (\d+)/)?.[1])).toEqual(['429', '503']);
    expect(warnings.join('\n')).not.toContain('secret-token');
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
    expect(await replayDeadLetters(req, false)).toEqual({
      text: 't  malformed  events/0/7  skipped  not JSON\ndry run: 1 planned, 0 replayed, 0 failed, 1 scanned',
      failed: 0,
    });
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
