import type { Facets } from '@event-observatory/store';
import { describe, expect, it } from 'vitest';
import { FacetPanel } from './search.js';

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
