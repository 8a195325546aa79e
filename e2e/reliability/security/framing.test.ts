/**
 * Request smuggling and framing (hostile input) against the ingestion service as a real
 * process: ambiguous message lengths are refused with 400 and the connection closed (so nothing
 * after them is read as a second request), oversized header blocks with 431, oversized bodies with
 * 413 before they are read, slow clients with 408 or a close within the configured timeouts; and
 * a burst of all of them leaves the process's resident memory bounded.
 */
import { randomUUID } from 'node:crypto';
import { signDevToken } from '@event-observatory/service-kit';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createPipelineTopics } from '../../support/services.js';
import { type ServiceProcess, spawnService } from './processes.js';
import { exchange, head } from './raw-http.js';

const SECRET = `framing-${randomUUID()}-${randomUUID()}`;
const MAX_EVENT_BYTES = 65_536;
const TIMEOUTS = { request: 3_000, headers: 2_000 };

let ingest: ServiceProcess;
let token: string;

beforeAll(async () => {
  const topic = `security-framing-${randomUUID().slice(0, 8)}`;
  await createPipelineTopics(topic);
  ingest = await spawnService('ingest', {
    BROKER_BOOTSTRAP_SERVERS: inject('stack').bootstrapServers,
    BROKER_TOPIC: topic,
    AUTH_SECRET: SECRET,
    INGEST_MAX_EVENT_BYTES: String(MAX_EVENT_BYTES),
    HTTP_REQUEST_TIMEOUT: `${TIMEOUTS.request}ms`,
    HTTP_HEADERS_TIMEOUT: `${TIMEOUTS.headers}ms`,
    LOG_LEVEL: 'warn',
  });
  token = await signDevToken({ secret: SECRET, scopes: ['events:write'] });
});

afterAll(async () => {
  await ingest?.stop();
});

/** Headers of a valid binary-mode event, with the suite's token. */
function eventHeaders(id = randomUUID()): [string, string][] {
  return [
    ['host', 'localhost'],
    ['authorization', `Bearer ${token}`],
    ['ce-specversion', '1.0'],
    ['ce-id', id],
    ['ce-source', '/security/framing'],
    ['ce-type', 'security.framing'],
    ['ce-time', new Date().toISOString()],
    ['content-type', 'text/plain'],
  ];
}

const POST = 'POST /v1/events HTTP/1.1';
/** A second request smuggled behind the first: answered only if the framing was misread. */
const SMUGGLED = 'GET /health/live HTTP/1.1\r\nhost: localhost\r\n\r\n';

async function statuses(parts: (string | Buffer)[]): Promise<number[]> {
  const { responses } = await exchange(ingest.port, parts, { end: false });
  for (const r of responses) {
    if (r.status >= 400) expect(JSON.parse(r.body).error).toMatchObject({ code: r.status });
  }
  return responses.map((r) => r.status);
}

describe('ambiguous message lengths are refused with 400 and nothing behind them is read', () => {
  it.each([
    [
      'two different content-lengths',
      [
        ['content-length', '5'],
        ['content-length', '6'],
      ],
      'hello!',
    ],
    ['a content-length list', [['content-length', '5, 6']], 'hello!'],
    [
      'content-length with transfer-encoding chunked (CL.TE)',
      [
        ['content-length', '6'],
        ['transfer-encoding', 'chunked'],
      ],
      '0\r\n\r\n',
    ],
    [
      'transfer-encoding chunked with content-length (TE.CL)',
      [
        ['transfer-encoding', 'chunked'],
        ['content-length', '3'],
      ],
      '5\r\nhello\r\n0\r\n\r\n',
    ],
    ['transfer-encoding that does not end in chunked', [['transfer-encoding', 'chunked, identity']], 'hello'],
    ['transfer-encoding gzip alone', [['transfer-encoding', 'gzip']], 'hello'],
    [
      'a space before the colon of transfer-encoding',
      [['transfer-encoding ', 'chunked']],
      '5\r\nhello\r\n0\r\n\r\n',
    ],
    ['a negative content-length', [['content-length', '-5']], 'hello'],
    ['a hexadecimal content-length', [['content-length', '0x5']], 'hello'],
    ['a signed content-length', [['content-length', '+5']], 'hello'],
    ['a chunk size that is not hexadecimal', [['transfer-encoding', 'chunked']], 'zz\r\nhello\r\n0\r\n\r\n'],
  ] as [string, [string, string][], string][])('%s', async (_name, framing, body) => {
    expect(await statuses([head(POST, [...eventHeaders(), ...framing]) + body + SMUGGLED])).toEqual([400]);
  });

  it('a header folded over two lines (obs-fold)', async () => {
    const folded = `${head(POST, eventHeaders()).slice(0, -2)}transfer-encoding: identity\r\n chunked\r\n\r\n`;
    expect(await statuses([`${folded}0\r\n\r\n${SMUGGLED}`])).toEqual([400]);
  });

  it('two transfer-encoding headers both chunked', async () => {
    const twice = head(POST, [
      ...eventHeaders(),
      ['transfer-encoding', 'chunked'],
      ['transfer-encoding', 'chunked'],
    ]);
    expect(await statuses([`${twice}5\r\nhello\r\n0\r\n\r\n${SMUGGLED}`])).toEqual([400]);
  });
});

describe('oversized input is refused without reading it', () => {
  it('a 32 KiB header value gets 431', async () => {
    expect(await statuses([head(POST, [...eventHeaders(), ['x-padding', 'p'.repeat(32 * 1024)]])])).toEqual([
      431,
    ]);
  });

  it('a declared content-length of 10 GB gets 413 before a byte of the body is sent', async () => {
    const started = Date.now();
    expect(await statuses([head(POST, [...eventHeaders(), ['content-length', '10000000000']])])).toEqual([
      413,
    ]);
    expect(Date.now() - started).toBeLessThan(TIMEOUTS.request);
  });

  it('a chunked body that grows past the ceiling is refused as too-large at the first chunk over it', async () => {
    const chunk = `4000\r\n${'c'.repeat(0x4000)}\r\n`;
    const parts = [
      head(POST, [...eventHeaders(), ['transfer-encoding', 'chunked']]),
      ...Array(8).fill(chunk),
    ];
    const before = await tooLargeCount();
    // The 413 is written while the client is still sending; the service lingers (reads and
    // discards) before closing, so no reset drops the answer (see the README).
    expect(await statuses(parts)).toEqual([413]);
    expect(await tooLargeCount()).toBe(before + 1);
  });
});

/** `ingest_events_rejected_total{reason="too-large"}` of the service's own `/metrics`. */
async function tooLargeCount(): Promise<number> {
  const text = await (await fetch(`${ingest.metricsUrl}/metrics`)).text();
  const line = text
    .split('\n')
    .find((l) => l.startsWith('ingest_events_rejected_total{') && l.includes('reason="too-large"'));
  return line === undefined ? 0 : Number(line.slice(line.lastIndexOf(' ') + 1));
}

describe('slow clients are cut off by the configured timeouts', () => {
  it(`a body that stalls mid-way gets 408 within HTTP_REQUEST_TIMEOUT (${TIMEOUTS.request} ms)`, async () => {
    const { responses, closedAfterMs } = await exchange(ingest.port, [
      `${head(POST, [...eventHeaders(), ['content-length', '100']])}only ten b`,
    ]);
    expect(responses.map((r) => r.status)).toEqual([408]);
    expect(closedAfterMs).toBeLessThan(TIMEOUTS.request + 2_000);
  });

  it(`a header block sent a byte at a time is closed within HTTP_HEADERS_TIMEOUT (${TIMEOUTS.headers} ms)`, async () => {
    const bytes = `${POST}\r\nhost: localhost\r\nx-slow: ${'s'.repeat(200)}`.split('');
    const { responses, closedAfterMs } = await exchange(ingest.port, bytes, { pauseMs: 50 });
    expect(responses.every((r) => r.status === 408)).toBe(true);
    expect(closedAfterMs).toBeLessThan(TIMEOUTS.headers + 2_000);
  });
});

describe('a burst of hostile connections', () => {
  it('leaves resident memory bounded and the service answering', async () => {
    const valid = () =>
      statuses([`${head(POST, [...eventHeaders(), ['content-length', '5'], ['connection', 'close']])}hello`]);
    for (let i = 0; i < 20; i++) expect(await valid()).toEqual([200]);
    const before = ingest.rssBytes();
    const oversize = `4000\r\n${'o'.repeat(0x4000)}\r\n`;
    const hostile = Array.from({ length: 30 }, () => [
      // bodies streamed past the ceiling
      exchange(ingest.port, [
        head(POST, [...eventHeaders(), ['transfer-encoding', 'chunked']]),
        ...Array(64).fill(oversize),
      ]),
      // header blocks over the limit
      exchange(ingest.port, [head(POST, [...eventHeaders(), ['x-padding', 'p'.repeat(60_000)]])]),
      // bodies that stall until the request timeout
      exchange(ingest.port, [
        head(POST, [...eventHeaders(), ['content-length', String(MAX_EVENT_BYTES)]]) + 'x'.repeat(1000),
      ]),
      // smuggling attempts
      exchange(ingest.port, [
        head(POST, [...eventHeaders(), ['content-length', '6'], ['transfer-encoding', 'chunked']]) +
          '0\r\n\r\n' +
          SMUGGLED,
      ]),
    ]).flat();
    let peak = before;
    const peakSampler = setInterval(() => {
      peak = Math.max(peak, ingest.rssBytes());
    }, 100);
    const results = await Promise.allSettled(hostile);
    clearInterval(peakSampler);
    expect(results.filter((r) => r.status === 'rejected')).toEqual([]);
    const answered = results.flatMap((r) =>
      r.status === 'fulfilled' ? r.value.responses.map((x) => x.status) : [],
    );
    expect(answered.every((s) => s >= 400 && s < 500)).toBe(true);
    for (let i = 0; i < 5; i++) expect(await valid()).toEqual([200]);
    const after = ingest.rssBytes();
    const mib = (n: number) => (n / 1024 / 1024).toFixed(1);
    console.log(
      `ingest RSS under ${hostile.length} hostile connections: before ${mib(before)} MiB, peak ${mib(peak)} MiB, after ${mib(after)} MiB`,
    );
    // 30 connections each streaming 1 MiB at a 64 KiB ceiling: bounded means well under 30 MiB held.
    expect(peak - before).toBeLessThan(64 * 1024 * 1024);
  });
});
