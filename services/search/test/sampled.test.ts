/**
 * A payload comparison over a store larger than a sample (`HISTOGRAM_SAMPLE_ROWS`): no index
 * narrows it, so its histogram, facets and total are estimated from one block sample of the range,
 * and the page says so (store README, "Facets" and "Histogram").
 */
import { HISTOGRAM_SAMPLE_ROWS } from '@event-observatory/store';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Harness, startHarness } from './harness.js';

/** A little more than a sample reads, so a comparison over all of it is sampled. */
const SEED = HISTOGRAM_SAMPLE_ROWS + 10_000;
let h: Harness;

beforeAll(async () => {
  h = await startHarness('sampled', { seed: SEED });
  // The statistics autovacuum would take by itself a while after such a load.
  await h.db.query('ANALYZE events.cloud_event');
}, 120_000);

afterAll(async () => {
  await h?.close();
});

/** The seed's matches of `temperature > n` (its temperature is the row number modulo 100). */
async function matches(n: number): Promise<number> {
  // sql-witness: the comparison's matches by its own SQL.
  const { rows } = await h.db.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM events.cloud_event WHERE (data->>'temperature')::int > $1`,
    [n],
  );
  return rows[0]!.n;
}

/** The page's text: tags out, entities decoded. */
const text = (html: string) =>
  html
    .replace(/<[^>]+>/g, '')
    .replace(/\s+/g, ' ')
    .replace(/&#(x?)([0-9a-f]+);/gi, (_, hex: string, code: string) =>
      String.fromCodePoint(Number.parseInt(code, hex ? 16 : 10)),
    )
    .replace(/&quot;/g, '"')
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&amp;/g, '&');

describe('a payload comparison over more rows than a sample', () => {
  it('shows its total, facets and histogram as estimates from a sample of the range', async () => {
    const res = await h.get(`/events?range=all&payload=${encodeURIComponent('temperature > 94')}`);
    expect(res.status).toBe(200);
    const page = text(await res.text());
    const exact = await matches(94);
    const about = /Matching events: about ([\d,]+) \(estimated from a sample of the range\)/.exec(page);
    expect(about, page.slice(0, 2000)).not.toBeNull();
    const estimate = Number(about![1]!.replace(/,/g, ''));
    expect(estimate).toBeGreaterThan(exact * 0.75);
    expect(estimate).toBeLessThan(exact * 1.25);
    expect(page).toMatch(/Estimated from a [\d.]+ % sample of the range's events, scaled/);
    expect(page).toMatch(/estimated from a [\d.]+ % sample of the range, scaled/);
    expect(page).not.toMatch(/unavailable/i);
  });

  it('caps an estimate past the total cap as any total', async () => {
    const res = await h.get(`/events?range=all&payload=${encodeURIComponent('temperature > 49')}`);
    expect(res.status).toBe(200);
    const page = text(await res.text());
    expect(page).toContain('Matching events: 10,000+');
    expect(page).toMatch(/Estimated from a [\d.]+ % sample of the range's events, scaled/);
  });

  it('counts a comparison its other conditions narrow to fewer rows than a sample', async () => {
    // One source of the seed's 50: about 2,200 rows.
    const source = 'urn:seed:source-7';
    const res = await h.get(
      `/events?range=all&source=${encodeURIComponent(source)}&payload=${encodeURIComponent('temperature > 49')}`,
    );
    expect(res.status).toBe(200);
    const page = text(await res.text());
    // sql-witness: the same matches of one source.
    const { rows } = await h.db.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM events.cloud_event
        WHERE ce_source = $1 AND (data->>'temperature')::int > 49`,
      [source],
    );
    expect(page).toContain(`Matching events: ${rows[0]!.n.toLocaleString('en-US')}`);
    expect(page).toContain('Counted over every match in the range');
  });
});
