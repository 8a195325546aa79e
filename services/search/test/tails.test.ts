/**
 * Live tails cannot starve page views: ten tails polling every 20 ms (fifty times the default
 * rate) share two concurrent queries of the read pool (checked by watching the pool), so a search
 * page still answers within its budget; one tail more than the cap answers 429. The caps count
 * per viewer: two users behind one proxy address each get their own streams, up to the pod's cap.
 * A HEAD of the tail (or of an export) is answered with GET's headers and holds no stream.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseTrustedProxies, proxyAuthenticator } from '../src/auth/proxy.js';
import { readSearchConfig } from '../src/config.js';
import { TAIL_LIMITS } from '../src/tail.js';
import { type Harness, SECRET, startHarness } from './harness.js';

const TAILS = 10;
/**
 * The page's budget while the tails run: half the read pool's 2 s statement timeout (a search page
 * on this seed answers in tens of ms alone).
 */
const PAGE_BUDGET_MS = 1_000;
/** The tails' share of the 8 read connections (`queries` below). */
const TAIL_QUERIES = 2;
let h: Harness;
const streams = new AbortController();

beforeAll(async () => {
  h = await startHarness('tails', {
    seed: 2_000,
    tailPollMs: 20,
    tailLimits: { perPod: TAILS, perViewer: TAILS, maxAgeMs: 60_000, queries: TAIL_QUERIES },
  });
});

afterAll(async () => {
  streams.abort();
  await h?.close();
});

describe('live tails and page views', () => {
  it('ten tails and a page view together: the page answers within its budget; an eleventh tail is refused', async () => {
    const opened = await Promise.all(
      Array.from({ length: TAILS }, () =>
        fetch(`${h.url}/events/tail?range=all`, { signal: streams.signal }),
      ),
    );
    for (const res of opened) expect(res.status).toBe(200);
    expect(await h.metric(/^tail_connections/)).toBe(TAILS);
    // The tails are polling now: watch the read pool for 500 ms; they never hold more than their share.
    const pool = h.service.pool;
    let peak = 0;
    for (const end = performance.now() + 500; performance.now() < end; ) {
      peak = Math.max(peak, pool.totalCount - pool.idleCount);
      await new Promise((r) => setTimeout(r, 1));
    }
    expect(peak).toBeGreaterThan(0);
    expect(peak).toBeLessThanOrEqual(TAIL_QUERIES);
    for (let i = 0; i < 3; i++) {
      const started = performance.now();
      const res = await h.get('/events?range=all&q=overflow');
      expect(res.status).toBe(200);
      await res.text();
      expect(performance.now() - started).toBeLessThan(PAGE_BUDGET_MS);
    }
    const extra = await h.get('/events/tail?range=all');
    expect(extra.status).toBe(429);
    expect(await extra.text()).toContain('tail-limit');
  });
});

describe('tail caps per viewer', () => {
  /** Two users through one authenticating proxy: every request comes from 127.0.0.1. */
  const as = (user: string) => ({ 'x-auth-request-user': user });
  let proxied: Harness;
  const held = new AbortController();

  beforeAll(async () => {
    proxied = await startHarness('tailcaps', {
      tailPollMs: 200,
      tailLimits: { perPod: 5, perViewer: 2, maxAgeMs: 60_000, queries: 2 },
      authenticate: proxyAuthenticator(parseTrustedProxies('127.0.0.1')),
    });
  });

  afterAll(async () => {
    held.abort();
    await proxied?.close();
  });

  const open = (user: string) => proxied.get('/events/tail?range=all', as(user), held.signal);

  it('two viewers behind one address each get their own streams; the pod cap still holds', async () => {
    for (const user of ['ada', 'ada', 'bob', 'bob']) expect((await open(user)).status, user).toBe(200);
    for (const user of ['ada', 'bob']) {
      const refused = await open(user);
      expect(refused.status, user).toBe(429);
      expect(await refused.text()).toContain('tail-limit');
    }
    expect((await open('cyd')).status).toBe(200);
    // Five streams open: the pod's cap refuses a viewer who has none.
    expect((await open('dan')).status).toBe(429);
    expect(await proxied.metric(/^tail_connections/)).toBe(5);
  });

  it('reads SEARCH_TAIL_MAX_PER_VIEWER and SEARCH_TAIL_MAX_PER_POD', () => {
    expect(readSearchConfig({ APPLICATION_SECRET: SECRET })).toMatchObject({
      tailMaxPerViewer: TAIL_LIMITS.perViewer,
      tailMaxPerPod: TAIL_LIMITS.perPod,
    });
    const set = readSearchConfig({
      APPLICATION_SECRET: SECRET,
      SEARCH_TAIL_MAX_PER_VIEWER: '3',
      SEARCH_TAIL_MAX_PER_POD: '20',
    });
    expect(set).toMatchObject({ tailMaxPerViewer: 3, tailMaxPerPod: 20 });
    expect(() => readSearchConfig({ APPLICATION_SECRET: SECRET, SEARCH_TAIL_MAX_PER_VIEWER: '0' })).toThrow(
      /SEARCH_TAIL_MAX_PER_VIEWER/,
    );
  });
});

describe('HEAD of a stream', () => {
  let headed: Harness;

  beforeAll(async () => {
    headed = await startHarness('tailhead', {
      seed: 50,
      tailPollMs: 50,
      tailLimits: { perPod: 2, perViewer: 2, maxAgeMs: 60_000, queries: 2, keepAliveMs: 200 },
    });
  });

  afterAll(async () => {
    await headed?.close();
  });

  it('answers HEAD of the tail without opening one: a GET after more HEADs than the cap still streams', async () => {
    for (let i = 0; i < 4; i++) {
      const res = await fetch(`${headed.url}/events/tail?range=all`, { method: 'HEAD' });
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toContain('text/event-stream');
    }
    expect(await headed.metric(/^tail_connections/)).toBe(0);
    const tail = new AbortController();
    const res = await headed.get('/events/tail?range=all', {}, tail.signal);
    expect(res.status).toBe(200);
    expect(await headed.metric(/^tail_connections/)).toBe(1);
    tail.abort();
  });

  it('keeps a quiet stream alive with a comment line', async () => {
    const tail = new AbortController();
    const res = await headed.get('/events/tail?range=all&q=nothing-matches-this', {}, tail.signal);
    const reader = res.body!.getReader();
    let text = '';
    for (const end = Date.now() + 2_000; !text.includes(': keep-alive') && Date.now() < end; )
      text += new TextDecoder().decode((await reader.read()).value);
    tail.abort();
    expect(text).toContain(': keep-alive\n\n');
  });

  it("answers HEAD of an export with GET's headers", async () => {
    const res = await fetch(`${headed.url}/events.csv?range=all`, { method: 'HEAD' });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-disposition')).toBe('attachment; filename="events.csv"');
    expect(await res.text()).toBe('');
  });
});
