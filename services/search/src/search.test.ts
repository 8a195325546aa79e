import { DAY_MS } from '@event-observatory/store';
import { describe, expect, it } from 'vitest';
import { bucketFor, histogramRange, MAX_BUCKETS } from './search.js';

describe('histogramRange', () => {
  const to = new Date('2026-12-01T03:20:00Z');
  const oldest = new Date('2026-06-01T21:43:00Z');

  it('starts bars of whole days over an unbounded start at the midnight before the oldest event', () => {
    const range = histogramRange(oldest, to, true);
    expect(range.from).toEqual(new Date('2026-06-01T00:00:00Z'));
    expect(range.bucketMs).toBe(7 * DAY_MS);
    expect((to.getTime() - range.from.getTime()) / range.bucketMs).toBeLessThanOrEqual(MAX_BUCKETS);
  });

  it('keeps a start the viewer chose, and one whose bars are shorter than a day', () => {
    expect(histogramRange(oldest, to, false)).toEqual({ from: oldest, to, bucketMs: 7 * DAY_MS });
    const recent = new Date(to.getTime() - 10 * DAY_MS + 3_600_000 * 5.5);
    expect(histogramRange(recent, to, true)).toEqual({
      from: recent,
      to,
      bucketMs: bucketFor(to.getTime() - recent.getTime()),
    });
    expect(bucketFor(to.getTime() - recent.getTime()) % DAY_MS).not.toBe(0);
  });

  it('lengthens the bars when the earlier start needs it to stay within MAX_BUCKETS', () => {
    // 420 days and 5 hours: weeks from the oldest event, 61 of them from the midnight before.
    const from = new Date(to.getTime() - 420 * DAY_MS + 2 * 3_600_000);
    expect(bucketFor(to.getTime() - from.getTime())).toBe(7 * DAY_MS);
    const range = histogramRange(from, to, true);
    expect(range.bucketMs).toBe(8 * DAY_MS);
    expect(range.from.getTime() % DAY_MS).toBe(0);
  });
});
