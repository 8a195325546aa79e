import { spawn } from 'node:child_process';
import http from 'node:http';
import net, { type AddressInfo } from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { ForgeClient } from './client.js';
import { basicAuth, DEFAULT_RETRY_POLICY, ForgeConfig, type ForgeConfigInput, tokenAuth } from './config.js';
import { pullRequestNumber } from './ids.js';
import { formatJsonPath } from './json.js';
import type { ForgeResult } from './result.js';
import { parseRetryAfter, redactUri, retryDelayMs } from './transport.js';

type Handler = (req: http.IncomingMessage, res: http.ServerResponse, body: string) => void;

/** A local HTTP server whose behaviour each test sets; records every request it sees. */
let handler: Handler = (_q, res) => res.end();
const seen: { method: string; url: string; headers: http.IncomingHttpHeaders; body: string }[] = [];
const server = http.createServer((req, res) => {
  let body = '';
  req.on('data', (c) => {
    body += c;
  });
  req.on('end', () => {
    seen.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers, body });
    handler(req, res, body);
  });
});
let base = '';
const clients: ForgeClient[] = [];
const repo = { owner: 'acme', repo: 'web' };
const TOKEN = '0123456789abcdef0123456789abcdef01234567';

beforeAll(async () => {
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}/api/v1`;
});
afterEach(() => {
  seen.length = 0;
  for (const c of clients.splice(0)) c.close();
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise((r) => server.close(r));
});

function client(extra: Partial<ForgeConfigInput> = {}, sleeps: number[] = []) {
  const config = ForgeConfig.create({
    baseUri: base,
    userAgent: 'unit/1.0',
    auth: tokenAuth(TOKEN),
    ...extra,
  });
  if (!config.ok) throw new Error(config.error.message);
  const c = new ForgeClient(config.value, { sleep: async (ms) => void sleeps.push(ms) });
  clients.push(c);
  return c;
}

const json = (
  res: http.ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
) => {
  res.writeHead(status, { 'content-type': 'application/json', ...headers });
  res.end(JSON.stringify(body));
};

function failure<T>(r: ForgeResult<T>) {
  if (r.ok) throw new Error('expected a failure');
  return r.failure;
}

describe('request shape', () => {
  it('sends the user agent and the token in the Authorization header, never in the URL', async () => {
    handler = (_q, res) => json(res, 200, { version: '1.2.3' });
    const r = await client().version();
    expect(r.ok).toBe(true);
    expect(seen[0]?.headers['user-agent']).toBe('unit/1.0');
    expect(seen[0]?.headers.authorization).toBe(`token ${TOKEN}`);
    expect(seen[0]?.url).toBe('/api/v1/version');
    expect(r.ok && r.context.uri).toBe(`${base}/version`);
  });

  it('places sudo in a header and basic credentials with the one-time password in headers', async () => {
    handler = (_q, res) => json(res, 200, { version: 'x' });
    await client({ auth: tokenAuth(TOKEN, { sudo: 'alice' }) }).version();
    expect(seen[0]?.headers.sudo).toBe('alice');
    await client({ auth: basicAuth('bob', 'pw', { otp: '123456' }) }).version();
    expect(seen[1]?.headers.authorization).toBe(`Basic ${Buffer.from('bob:pw').toString('base64')}`);
    expect(seen[1]?.headers['x-gitea-otp']).toBe('123456');
    expect(seen[1]?.headers['x-forgejo-otp']).toBe('123456');
    expect(seen[1]?.url).not.toContain('sudo');
  });

  it('records the x-request-id, the status and the duration in the call context', async () => {
    handler = (_q, res) =>
      json(res, 404, { message: 'not found', url: 'http://x/api/swagger' }, { 'x-request-id': 'req-42' });
    const f = failure(await client().pulls.get(repo, pullRequestNumber(5)));
    expect(f).toMatchObject({
      kind: 'api',
      status: 404,
      body: { message: 'not found', url: 'http://x/api/swagger', errors: [] },
      context: { operation: 'pulls.get', method: 'GET', status: 404, requestId: 'req-42', attempts: 1 },
    });
    expect(f.kind === 'api' && f.context.durationMs).toBeGreaterThanOrEqual(0);
  });

  it('validates before building any request: no context, nothing sent', async () => {
    const r = await client().pulls.get({ owner: '../etc', repo: 'web' }, pullRequestNumber(1));
    expect(r).toEqual({
      ok: false,
      failure: { kind: 'validation', error: expect.objectContaining({ field: 'owner' }) },
    });
    const n = await client().pulls.get(repo, pullRequestNumber(0));
    expect(failure(n)).toEqual({
      kind: 'validation',
      error: { field: 'number', message: 'must be a positive integer' },
    });
    expect(seen).toHaveLength(0);
  });

  it('reports a malformed success payload as a decode failure with its JSON path', async () => {
    handler = (_q, res) =>
      json(res, 200, { id: 1, number: 1, state: 'open', base: { repo_id: 1 }, head: { repo_id: 'x' } });
    const f = failure(await client().pulls.get(repo, pullRequestNumber(1)));
    expect(f.kind).toBe('decode');
    expect(f.kind === 'decode' && formatJsonPath(f.path)).toBe('$.head.repo_id');
  });

  it('turns an HTML error page into an api failure with the empty error body', async () => {
    handler = (_q, res) => {
      res.writeHead(502, { 'content-type': 'text/html' });
      res.end('<html>bad gateway</html>');
    };
    const f = failure(await client({ retry: { maxAttempts: 1 } }).pulls.get(repo, pullRequestNumber(1)));
    expect(f).toMatchObject({ kind: 'api', status: 502, body: { errors: [] } });
  });
});

describe('redaction of recorded URIs', () => {
  it('drops token, access_token, sudo and user info', () => {
    expect(redactUri('https://u:p@h.example/api/v1/x?token=a&page=2&access_token=b&SUDO=c&limit=3')).toBe(
      'https://h.example/api/v1/x?page=2&limit=3',
    );
  });

  it('refuses a raw body JSON cannot represent as a validation failure, sending nothing', async () => {
    const circular: Record<string, unknown> = {};
    circular.self = circular;
    for (const body of [{ n: 1n }, circular, () => 1]) {
      const r = await client().request({ method: 'POST', path: '/markdown', body });
      expect(r).toEqual({
        ok: false,
        failure: { kind: 'validation', error: { field: 'body', message: 'is not serialisable as json' } },
      });
    }
    expect(seen).toHaveLength(0);
  });

  it('keeps raw calls with credential parameters out of the failure context', async () => {
    handler = (_q, res) => json(res, 403, { message: 'forbidden' });
    const f = failure(
      await client().request({
        method: 'GET',
        path: '/user',
        query: [
          ['sudo', 'alice'],
          ['access_token', TOKEN],
          ['page', '1'],
        ],
      }),
    );
    expect(f.kind === 'api' && f.context.uri).toBe(`${base}/user?page=1`);
    expect(JSON.stringify(f)).not.toContain(TOKEN);
    expect(seen[0]?.url).toContain('sudo=alice'); // it was sent, only the record is clean
  });
});

describe('retry policy', () => {
  it('retries a safe method on 503 with growing delays and waits at least the Retry-After', async () => {
    let n = 0;
    handler = (_q, res) => {
      n += 1;
      if (n < 3) json(res, 503, { message: 'busy' }, n === 2 ? { 'retry-after': '1' } : {});
      else json(res, 200, { version: 'v' });
    };
    const sleeps: number[] = [];
    const r = await client(
      { retry: { maxAttempts: 3, initialDelayMs: 100, maxDelayMs: 2000, jitter: false } },
      sleeps,
    ).version();
    expect(r.ok && r.context.attempts).toBe(3);
    expect(sleeps).toEqual([100, 1000]); // 100, then Retry-After 1 s (longer than the 200 ms backoff)
  });

  it('returns the status instead of retrying when Retry-After exceeds maxDelayMs', async () => {
    handler = (_q, res) => json(res, 503, { message: 'busy' }, { 'retry-after': '3', 'x-request-id': 'r-1' });
    const sleeps: number[] = [];
    const f = failure(
      await client({ retry: { maxAttempts: 3, maxDelayMs: 2000, jitter: false } }, sleeps).version(),
    );
    expect(f).toMatchObject({ kind: 'api', status: 503, context: { attempts: 1, requestId: 'r-1' } });
    expect(sleeps).toEqual([]);
    expect(seen).toHaveLength(1);
  });

  it('stops waiting for the next attempt as soon as the caller aborts', async () => {
    handler = (_q, res) => json(res, 503, { message: 'busy' });
    const config = ForgeConfig.create({
      baseUri: base,
      userAgent: 'unit/1.0',
      retry: { maxAttempts: 3, initialDelayMs: 3000, jitter: false },
    });
    if (!config.ok) throw new Error(config.error.message);
    const c = new ForgeClient(config.value); // the real backoff sleep
    clients.push(c);
    const ac = new AbortController();
    setTimeout(() => ac.abort(), 100);
    const started = performance.now();
    const f = failure(await c.version({ signal: ac.signal }));
    expect(performance.now() - started).toBeLessThan(1500);
    expect(f).toMatchObject({ kind: 'transport', cause: 'aborted', context: { attempts: 1 } });
    expect(seen).toHaveLength(1);
  });

  it('gives up after maxAttempts and returns the last status', async () => {
    handler = (_q, res) => json(res, 503, { message: 'busy' });
    const f = failure(await client({ retry: { maxAttempts: 2, jitter: false } }).version());
    expect(f).toMatchObject({ kind: 'api', status: 503, context: { attempts: 2 } });
  });

  it('does not retry statuses outside the policy (404, 422)', async () => {
    handler = (_q, res) => json(res, 422, { message: 'no' });
    const f = failure(await client().version());
    expect(f.kind !== 'validation' && f.context.attempts).toBe(1);
  });

  it('never retries merge or any other unsafe method', async () => {
    handler = (_q, res) => json(res, 503, { message: 'busy' });
    const c = client({ retry: { maxAttempts: 5 } });
    const merge = failure(await c.pulls.merge(repo, pullRequestNumber(1), { style: 'Merge' }));
    expect(merge.kind !== 'validation' && merge.context.attempts).toBe(1);
    const edit = failure(await c.pulls.edit(repo, pullRequestNumber(1), { title: 'x' }));
    expect(edit.kind !== 'validation' && edit.context.attempts).toBe(1);
    expect(seen.filter((s) => s.method === 'POST')).toHaveLength(1);
  });

  it('retries a safe method after a refused connection', async () => {
    const closed = http.createServer();
    await new Promise<void>((r) => closed.listen(0, '127.0.0.1', r));
    const port = (closed.address() as AddressInfo).port;
    await new Promise((r) => closed.close(r));
    const sleeps: number[] = [];
    const c = client(
      { baseUri: `http://127.0.0.1:${port}/api/v1`, retry: { maxAttempts: 3, jitter: false } },
      sleeps,
    );
    const f = failure(await c.version());
    expect(f).toMatchObject({
      kind: 'transport',
      cause: 'connect-failed',
      detail: 'ECONNREFUSED',
      context: { attempts: 3 },
    });
    expect(sleeps).toEqual([250, 500]);
  });

  it('computes jittered delays within [d/2, d] and parses Retry-After dates', () => {
    const p = { ...DEFAULT_RETRY_POLICY, jitter: true };
    expect(retryDelayMs(p, 1, undefined, () => 0)).toBe(125);
    expect(retryDelayMs(p, 1, undefined, () => 1)).toBe(250);
    expect(retryDelayMs(p, 10, undefined, () => 1)).toBe(5000);
    expect(parseRetryAfter('7')).toBe(7000);
    expect(
      parseRetryAfter('Wed, 21 Oct 2015 07:28:10 GMT', Date.parse('Wed, 21 Oct 2015 07:28:00 GMT')),
    ).toBe(10_000);
    expect(parseRetryAfter('soon')).toBeUndefined();
  });
});

describe('byte bound and timeouts', () => {
  it('abandons a body whose declared length exceeds the bound', async () => {
    handler = (_q, res) => json(res, 200, { version: 'x'.repeat(5000) });
    const f = failure(await client({ maxResponseBodyBytes: 1000 }).version());
    expect(f).toMatchObject({
      kind: 'transport',
      cause: 'response-too-large',
      detail: 'response body exceeds 1000 bytes',
    });
  });

  it('stops reading a chunked body the moment it crosses the bound', async () => {
    let written = 0;
    let aborted = false;
    handler = (_q, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      const tick = () => {
        if (res.destroyed || written > 10_000_000) {
          aborted = res.destroyed;
          res.end();
          return;
        }
        written += 16_384;
        res.write('x'.repeat(16_384), () => setImmediate(tick));
      };
      res.on('close', () => {
        aborted = true;
      });
      tick();
    };
    const f = failure(await client({ maxResponseBodyBytes: 50_000 }).version());
    expect(f.kind === 'transport' && f.cause).toBe('response-too-large');
    await new Promise((r) => setTimeout(r, 50));
    expect(aborted).toBe(true);
    expect(written).toBeLessThan(10_000_000);
  });

  it('bounds diff and patch documents by maxResponseBodyBytes, like every textual response', async () => {
    handler = (_q, res) => {
      res.writeHead(200, { 'content-type': 'text/plain' });
      res.end('d'.repeat(4000));
    };
    const c = client({ maxResponseBodyBytes: 8000, maxDownloadBodyBytes: 100 });
    const r = await c.pulls.diff(repo, pullRequestNumber(1), { format: 'Diff', includeBinary: true });
    expect(r.ok && r.value.length).toBe(4000);
    expect(seen[0]?.url).toBe('/api/v1/repos/acme/web/pulls/1.diff?binary=true');
    const small = client({ maxResponseBodyBytes: 1000, maxDownloadBodyBytes: 1_000_000 });
    expect(failure(await small.pulls.diff(repo, pullRequestNumber(1), { format: 'Patch' }))).toMatchObject({
      cause: 'response-too-large',
    });
  });

  it('keeps the status of an error whose body is over the bound', async () => {
    handler = (_q, res) => json(res, 500, { message: 'x'.repeat(5000) });
    const f = failure(await client({ maxResponseBodyBytes: 100, retry: { maxAttempts: 1 } }).version());
    expect(f).toMatchObject({ kind: 'api', status: 500, body: { errors: [] } });
  });

  it('times the connection, not the wait for one of the 8: ten slow calls at once all answer', async () => {
    handler = (_q, res) => setTimeout(() => json(res, 200, { version: '1.2.3' }), 600);
    const c = client({ connectTimeoutMs: 400, retry: { maxAttempts: 1 } });
    const answers = await Promise.all(Array.from({ length: 10 }, () => c.version()));
    expect(answers.map((r) => r.ok)).toEqual(Array(10).fill(true));
  });

  it('fails every call with a zero or negative timeout once, without connecting or retrying', async () => {
    const sleeps: number[] = [];
    expect(failure(await client({ connectTimeoutMs: 0 }, sleeps).version())).toMatchObject({
      cause: 'connect-timeout',
      context: { attempts: 1 },
    });
    expect(failure(await client({ readTimeoutMs: -1 }, sleeps).version())).toMatchObject({
      cause: 'read-timeout',
      context: { attempts: 1 },
    });
    expect(sleeps).toEqual([]);
    expect(seen).toHaveLength(0);
  });

  it('keeps the status and x-request-id of a response abandoned past the bound', async () => {
    handler = (_q, res) => json(res, 200, { version: 'x'.repeat(5000) }, { 'x-request-id': 'big-1' });
    const f = failure(await client({ maxResponseBodyBytes: 1000 }).version());
    expect(f).toMatchObject({
      kind: 'transport',
      cause: 'response-too-large',
      context: { status: 200, requestId: 'big-1', attempts: 1 },
    });
  });

  it('reports a connection reset in the middle of the body as unknown, with the status received', async () => {
    handler = (_q, res) => {
      res.writeHead(200, {
        'content-type': 'application/json',
        'content-length': '1000',
        'x-request-id': 'rst',
      });
      res.write('{"version":"', () => setTimeout(() => res.socket?.resetAndDestroy(), 20));
    };
    const sleeps: number[] = [];
    const f = failure(await client({ retry: { maxAttempts: 3 } }, sleeps).version());
    expect(f).toMatchObject({
      kind: 'transport',
      cause: 'unknown',
      context: { status: 200, requestId: 'rst', attempts: 1 },
    });
    expect(sleeps).toEqual([]); // a response began: not retried
  });

  it('reports a body that stalls after the headers as unknown, not read-timeout, and does not retry', async () => {
    handler = (_q, res) => {
      res.writeHead(200, {
        'content-type': 'application/json',
        'content-length': '100',
        'x-request-id': 'slow',
      });
      res.write('{"ver');
    };
    const f = failure(await client({ readTimeoutMs: 150, retry: { maxAttempts: 3 } }).version());
    expect(f).toMatchObject({
      kind: 'transport',
      cause: 'unknown',
      detail: 'stalled reading the body: no data for 150 ms',
      context: { status: 200, requestId: 'slow', attempts: 1 },
    });
    expect(seen).toHaveLength(1);
  });

  it('reports an abort after the response began as unknown', async () => {
    handler = (_q, res) => {
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': '100' });
      res.write('{"ver');
    };
    const ac = new AbortController();
    setTimeout(() => ac.abort(), 100);
    const f = failure(await client().version({ signal: ac.signal }));
    expect(f).toMatchObject({ kind: 'transport', cause: 'unknown', context: { status: 200 } });
  });

  it('gives up on a server that accepts and never answers (read timeout), retrying safe calls', async () => {
    handler = () => undefined; // never respond
    const f = failure(
      await client({ readTimeoutMs: 150, retry: { maxAttempts: 2, jitter: false } }).version(),
    );
    expect(f).toMatchObject({ kind: 'transport', cause: 'read-timeout', context: { attempts: 2 } });
  });

  it('reports an aborted call as a value', async () => {
    handler = () => undefined;
    const ac = new AbortController();
    setTimeout(() => ac.abort(), 50);
    const f = failure(await client({ retry: { maxAttempts: 1 } }).version({ signal: ac.signal }));
    expect(f).toMatchObject({ kind: 'transport', cause: 'aborted' });
  });
});

describe('connect timeout against a real listening socket', () => {
  it('times out when the server never completes the handshake (accept queue full)', async () => {
    // A child process listens on 127.0.0.1 with a backlog of 1 and is then stopped (SIGSTOP), so
    // it accepts nothing: once its accept queue is full, the kernel drops further SYNs and a
    // connect hangs, which is exactly a connect timeout. Nothing leaves the loopback interface.
    const child = spawn(
      process.execPath,
      [
        '-e',
        `const s = require('node:net').createServer();
         s.listen({ port: 0, host: '127.0.0.1', backlog: 1 }, () => console.log(s.address().port));`,
      ],
      { stdio: ['ignore', 'pipe', 'inherit'] },
    );
    const fillers: net.Socket[] = [];
    try {
      const port = await new Promise<number>((resolve, reject) => {
        child.stdout.once('data', (d: Buffer) => resolve(Number(String(d).trim())));
        child.once('exit', () => reject(new Error('listener exited')));
      });
      child.kill('SIGSTOP');
      // Fill the accept queue: connect until one connection stays pending.
      for (let i = 0; i < 16; i++) {
        const s = net.connect({ port, host: '127.0.0.1' });
        s.on('error', () => undefined);
        fillers.push(s);
        const connected = await new Promise<boolean>((resolve) => {
          s.once('connect', () => resolve(true));
          setTimeout(() => resolve(false), 200);
        });
        if (!connected) break;
      }
      const c = client({
        baseUri: `http://127.0.0.1:${port}/api/v1`,
        connectTimeoutMs: 300,
        retry: { maxAttempts: 1 },
      });
      const started = performance.now();
      const f = failure(await c.version());
      expect(f).toMatchObject({
        kind: 'transport',
        cause: 'connect-timeout',
        detail: 'no connection within 300 ms',
      });
      expect(performance.now() - started).toBeGreaterThanOrEqual(290);
    } finally {
      for (const s of fillers) s.destroy();
      child.kill('SIGKILL');
    }
  });
});

describe('keep-alive', () => {
  it('closes an idle keep-alive socket after the idle timeout', async () => {
    handler = (_q, res) => json(res, 200, { version: 'v' });
    const closedAt: number[] = [];
    const onConnection = (socket: net.Socket) => socket.on('close', () => closedAt.push(performance.now()));
    server.on('connection', onConnection);
    try {
      const config = ForgeConfig.create({ baseUri: base, userAgent: 'unit/1.0' });
      if (!config.ok) throw new Error(config.error.message);
      const c = new ForgeClient(config.value, { idleSocketTimeoutMs: 200 });
      clients.push(c);
      expect((await c.version()).ok).toBe(true);
      const idleSince = performance.now();
      await new Promise((r) => setTimeout(r, 600));
      expect(closedAt).toHaveLength(1);
      expect((closedAt[0] ?? 0) - idleSince).toBeGreaterThanOrEqual(150);
    } finally {
      server.off('connection', onConnection);
    }
  });
});

describe('statuses of the pull request operations', () => {
  it('reads a 201 on PATCH as success and tells a scheduled merge (201) from an immediate one (200)', async () => {
    handler = (req, res) => {
      if (req.url?.endsWith('/merge')) {
        res.writeHead(req.headers['x-test'] ? 200 : 201);
        res.end();
      } else res.writeHead(204).end();
    };
    const c = client();
    const merged = await c.pulls.merge(repo, pullRequestNumber(1), {
      style: 'Merge',
      mergeWhenChecksSucceed: true,
    });
    expect(merged.ok && merged.value).toEqual({ kind: 'scheduled' });
    expect(JSON.parse(seen[0]?.body ?? '{}')).toEqual({
      Do: 'merge',
      delete_branch_after_merge: false,
      merge_when_checks_succeed: true,
    });
    const del = await c.reviews.delete(repo, pullRequestNumber(1), 7 as never);
    expect(del.ok && del.context.status).toBe(204);
    expect(seen[1]).toMatchObject({ method: 'DELETE', url: '/api/v1/repos/acme/web/pulls/1/reviews/7' });
  });

  it('sends the update style as a query parameter', async () => {
    handler = (_q, res) => res.writeHead(200).end();
    await client().pulls.update(repo, pullRequestNumber(3), 'Rebase');
    expect(seen[0]).toMatchObject({
      method: 'POST',
      url: '/api/v1/repos/acme/web/pulls/3/update?style=rebase',
    });
  });
});
