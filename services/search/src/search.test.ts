import { DAY_MS, type EventPage, type EventRow, type Facets, TOTAL_CAP } from '@event-observatory/store';
import { describe, expect, it } from 'vitest';
import { bucketFor, histogramRange, MAX_BUCKETS, totalFromFacets } from './search.js';

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

describe('totalFromFacets', () => {
  const facets = (counted: number, samplePercent?: number): Facets => ({
    types: [],
    sources: [],
    subjects: [],
    severities: [],
    extensions: [],
    capped: false,
    counted,
    hidden: { types: 0, sources: 0, subjects: 0, severities: 0, extensions: 0 },
    ...(samplePercent === undefined ? {} : { samplePercent }),
  });
  const page = (rows: number, more: boolean): EventPage => ({
    rows: Array.from({ length: rows }, () => ({}) as EventRow),
    more,
  });

  it('gives a sampled count as an estimate, capped past the total cap as any total', () => {
    expect(totalFromFacets(facets(4_321, 2), page(50, true))).toEqual({
      total: 4_321,
      capped: false,
      estimated: true,
    });
    expect(totalFromFacets(facets(250_000, 2), page(50, true))).toEqual({
      total: TOTAL_CAP,
      capped: true,
      estimated: true,
    });
  });

  it('never estimates fewer matches than the page shows: a rare match may fall outside the sample', () => {
    expect(totalFromFacets(facets(0, 2), page(50, true))).toEqual({
      total: 51,
      capped: false,
      estimated: true,
    });
    expect(totalFromFacets(facets(0, 2), page(7, false)).total).toBe(7);
  });

  it('gives a counted one as it is', () => {
    expect(totalFromFacets(facets(812), page(50, true))).toEqual({
      total: 812,
      capped: false,
      estimated: false,
    });
  });
});
