/**
 * Live tails cannot starve page views: ten tails polling every 20 ms (fifty times the default
 * rate) share two concurrent queries of the read pool, so a search page still answers within its
 * budget; one tail more than the cap answers 429.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Harness, startHarness } from './harness.js';

const TAILS = 10;
/** The page's budget while the tails run (a search page on this seed answers in tens of ms alone). */
const PAGE_BUDGET_MS = 1_000;
let h: Harness;
const streams = new AbortController();

beforeAll(async () => {
  h = await startHarness('tails', {
    seed: 2_000,
    tailPollMs: 20,
    tailLimits: { perPod: TAILS, perClient: TAILS, maxAgeMs: 60_000, queries: 2 },
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
    await new Promise((r) => setTimeout(r, 300)); // the tails are polling now
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
