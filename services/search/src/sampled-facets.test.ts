/** What a page says of its facets and total, counted or estimated from a sample. */
import { type EventPage, type EventRow, type Facets, TOTAL_CAP } from '@event-observatory/store';
import { describe, expect, it } from 'vitest';
import { totalFromFacets } from './search.js';
import { FacetPanel } from './views/search.js';

const facets = (counted: number, samplePercent?: number): Facets => ({
  types: counted > 0 ? [{ value: 'com.example.order', count: counted }] : [],
  sources: [],
  subjects: [],
  severities: [],
  extensions: [],
  capped: false,
  counted,
  hidden: { types: 0, sources: 0, subjects: 0, severities: 0, extensions: 0 },
  ...(samplePercent === undefined ? {} : { samplePercent }),
});

const html = (f: Facets) =>
  String(FacetPanel({ facets: f, params: new URLSearchParams() })).replace(/&#39;/g, "'");

describe('FacetPanel', () => {
  it('says facets estimated from a sample are, of what share and of about how many', () => {
    const text = html(facets(4_300, 2));
    expect(text).toContain("Estimated from a 2 % sample of the range's events, scaled");
    expect(text).toContain('shares are of about 4,300.');
  });

  it('says a sample that holds none of the matches found them rare, not absent', () => {
    const text = html(facets(0, 2));
    expect(text).toContain('which holds none of the matches: they are rare.');
    expect(text).not.toContain('about 0');
  });

  it('says counted facets are counted', () => {
    expect(html(facets(812))).toContain('Counted over every match in the range; shares are of all 812.');
  });
});

describe('totalFromFacets', () => {
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

  it('gives at least what the page shows when the sample holds fewer: a rare match may fall outside it', () => {
    expect(totalFromFacets(facets(0, 2), page(50, true))).toEqual({
      total: 51,
      capped: true,
      estimated: true,
    });
    expect(totalFromFacets(facets(50, 2), page(50, true))).toEqual({
      total: 51,
      capped: true,
      estimated: true,
    });
    expect(totalFromFacets(facets(51, 2), page(50, true)).capped).toBe(false);
  });

  it('gives a counted one as it is', () => {
    expect(totalFromFacets(facets(812), page(50, true))).toEqual({
      total: 812,
      capped: false,
      estimated: false,
    });
  });
});
