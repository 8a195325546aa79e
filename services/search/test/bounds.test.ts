/**
 * No request can hurt search: times outside the plausible window and overlong values answer 400
 * at once, in the HTML page's problems and in the export routes' error body; a page stops at its
 * deadline with 504; a client that leaves takes its statements with it.
 */
import { createMetrics } from '@event-observatory/service-kit/metrics';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAX_VALUE_LENGTH } from '../src/filters.js';
import { createSearchService } from '../src/index.js';
import { type Harness, readerStatements, SECRET, startHarness, withTableLocked } from './harness.js';

let h: Harness;

beforeAll(async () => {
  h = await startHarness('bounds', { seed: 300 });
});

afterAll(async () => {
  await h?.close();
});

describe('times outside the plausible window', () => {
  it('answer 400 naming the parameter on the page and in the export error body, at once', async () => {
    for (const query of ['from=0050-01-01', 'to=9999-12-31']) {
      const res = await h.get(`/events?${query}`);
      const body = await res.text();
      expect(res.status).toBe(400);
      const [name, value] = query.split('=') as [string, string];
      expect(body).toContain(`${name}: &quot;${value}&quot; is`);
      expect(body).toContain('times run from 1970-01-01 to 7 days after now');
      for (const route of ['/events.ndjson', '/events.csv']) {
        const exported = await h.get(`${route}?${query}`);
        expect(exported.status).toBe(400);
        const error = (await exported.json()) as { error: { status: string; message: string } };
        expect(error.error.status).toBe('INVALID_ARGUMENT');
        expect(error.error.message).toContain('times run from 1970-01-01');
      }
    }
  });

  it('answer within a generous bound (the measured figure is printed, not asserted)', async () => {
    const timings: string[] = [];
    for (const query of ['from=0050-01-01', 'to=9999-12-31']) {
      const ms: number[] = [];
      for (let i = 0; i < 5; i++) {
        const started = performance.now();
        const res = await h.get(`/events?${query}`);
        await res.text();
        ms.push(performance.now() - started);
        expect(res.status).toBe(400);
      }
      ms.sort((a, b) => a - b);
      // Catches a walk of the calendar (seconds, then an out-of-memory abort), not a slow machine.
      expect(ms[4]).toBeLessThan(1_000);
      timings.push(`${query}: median ${ms[2]!.toFixed(1)} ms, max ${ms[4]!.toFixed(1)} ms`);
    }
    console.info(`out-of-window requests answered 400 in ${timings.join('; ')}`);
  });
});

describe('length limits', () => {
  it('answer 400 to any value longer than the limit, on the page and the exports', async () => {
    const long = 'x'.repeat(MAX_VALUE_LENGTH + 1);
    for (const name of ['q', 'type', 'source', 'subject', 'payload', 'ext', 'cursor']) {
      const res = await h.get(`/events?${name}=${long}`);
      expect(res.status, name).toBe(400);
      expect(await res.text()).toContain(`${name}: at most`);
    }
    expect((await h.get(`/events.ndjson?subject=${long}`)).status).toBe(400);
    expect((await h.get(`/receipt?topic=t&partition=0&offset=1&time=${long}`)).status).toBe(400);
    expect((await h.get(`/events?bar=${'a'.repeat(2_001)}`)).status).toBe(400);
  });
});

describe('page deadline', () => {
  it('answers 504 when the page runs out of its time, and its statements stop', async () => {
    const { registry } = createMetrics({ service: 'search', version: 'test' });
    const short = createSearchService({
      config: { allowedHosts: ['localhost'], secret: SECRET, pageTimeoutMs: 300 },
      databaseUrl: h.databaseUrl,
      registry,
    });
    try {
      await withTableLocked(h, async () => {
        const started = performance.now();
        const res = await short.app.request('/events?q=alpha', { headers: { host: 'localhost' } });
        const body = await res.text();
        expect(performance.now() - started).toBeLessThan(1_500);
        expect(res.status).toBe(504);
        expect(body).toContain('stopped its queries after 0.3 s');
        // Well before the 2 s statement timeout would end them.
        await expect.poll(() => readerStatements(h), { timeout: 1_000 }).toBe(0);
      });
    } finally {
      await short.close();
    }
  });

  it('cancels the statements of a client that leaves', async () => {
    await withTableLocked(h, async () => {
      const client = new AbortController();
      const page = h.get('/events?q=alpha', {}, client.signal).catch((err: unknown) => err);
      await expect.poll(() => readerStatements(h), { timeout: 1_000 }).toBeGreaterThan(0);
      client.abort();
      await page;
      await expect.poll(() => readerStatements(h), { timeout: 1_000 }).toBe(0);
    });
  });
});
