/**
 * The facet panel over HTTP on a seeded store: each value's count and share, the only/not links
 * (keeping the rest of the search, the `unknown` severity included), "more" values, and the link
 * to a wider time range when a bounded search finds nothing.
 */
import { FACET_MORE_VALUES, FACET_VALUES } from '@event-observatory/store';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Harness, startHarness } from './harness.js';

const SEED = 600;
/** Planted events without a severity, under their own source. */
const UNKNOWN = 'urn:test:facets-unknown';
const UNKNOWN_COUNT = 4;
/** One planted event two hours old. */
const OLD = 'urn:test:facets-old';
let h: Harness;

beforeAll(async () => {
  h = await startHarness('facets', { seed: SEED });
  // sql-witness: plants events without a severity and one of a chosen age, which the devstack seed does not make.
  await h.db.query(
    `INSERT INTO events.cloud_event (occurred_at, ce_source, ce_id, ce_type, raw)
     SELECT now() - interval '1 minute', $1, 'u-' || n, 'com.example.unknown', '{}'::jsonb FROM generate_series(1, $2::int) AS n
     UNION ALL SELECT now() - interval '2 hours', $3, 'old-1', 'com.example.old', '{}'::jsonb`,
    [UNKNOWN, UNKNOWN_COUNT, OLD],
  );
});

afterAll(async () => {
  await h?.close();
});

interface Item {
  value: string;
  count: number;
  pct: string;
  only?: string;
  not?: string;
}

const decode = (s: string) =>
  s
    .replace(/&amp;/g, '&')
    .replace(/&quot;/g, '"')
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>');

/** The page's HTML and status. */
async function page(path: string): Promise<{ status: number; html: string }> {
  const res = await h.get(path);
  return { status: res.status, html: await res.text() };
}

/** One facet's list as shown: value, count, share, link targets. */
function facet(html: string, title: string): Item[] {
  const list = new RegExp(`<h3>${title}</h3><ul class="facets">(.*?)</ul>`, 's').exec(html)?.[1] ?? '';
  return [...list.matchAll(/<li>(.*?)<\/li>/gs)].map(([, li]) => {
    const text = (cls: string) => decode(new RegExp(`<span class="${cls}">(.*?)</span>`, 's').exec(li!)![1]!);
    const link = (word: string) => {
      const href = new RegExp(`<a href="([^"]*)" aria-label="${word} [^"]*">`).exec(li!)?.[1];
      return href === undefined ? undefined : decode(href);
    };
    return {
      value: text('name'),
      count: Number(text('count').replace(/,/g, '')),
      pct: text('pct'),
      only: link('only'),
      not: link('not'),
    };
  });
}

/** The shown total of a page. */
function total(html: string): number {
  return Number(/Matching events: <strong>([\d,]+)<\/strong>/.exec(html)![1]!.replace(/,/g, ''));
}

async function totalAt(path: string): Promise<number> {
  const { status, html } = await page(path);
  expect(status, path).toBe(200);
  return total(html);
}

const params = (href: string) => new URL(href, 'http://x').searchParams;

describe('facet counts and shares', () => {
  it('shows each value with its count and its share of the matches the total counts', async () => {
    const { html } = await page('/events?range=all&source=urn:seed:source-7');
    const all = total(html);
    expect(all).toBe(SEED / 50);
    expect(html).toContain(`shares are of all ${all}.`);
    const severities = facet(html, 'Severities');
    expect(severities.reduce((n, i) => n + i.count, 0)).toBe(all);
    for (const i of [...severities, ...facet(html, 'Types')])
      expect(i.pct).toBe(`${Math.round((i.count / all) * 100)}%`);
    // The bar is decoration beside the words: hidden from assistive technology.
    expect(html).toMatch(/<svg class="share"[^>]*aria-hidden="true"/);
  });
});

describe('only and not', () => {
  const base = '/events?range=all&q=reading&source=urn:seed:source-7&limit=25&more=subjects';

  it('narrow to a value or leave it out, keeping every other parameter', async () => {
    const { html } = await page(base);
    const all = total(html);
    const [first] = facet(html, 'Types');
    const only = params(first!.only!);
    expect(Object.fromEntries(only)).toEqual({
      range: 'all',
      q: 'reading',
      source: 'urn:seed:source-7',
      limit: '25',
      more: 'subjects',
      type: first!.value,
    });
    expect(await totalAt(first!.only!)).toBe(first!.count);
    expect(params(first!.not!).getAll('not_type')).toEqual([first!.value]);
    expect(await totalAt(first!.not!)).toBe(all - first!.count);
  });

  it('narrow within a type prefix to the value, not to "the prefix or the value"', async () => {
    const { html } = await page('/events?range=all&type=com.example.t1*');
    const t12 = facet(html, 'Types').find((i) => i.value === 'com.example.t12')!;
    expect(params(t12.only!).getAll('type')).toEqual(['com.example.t12']);
    expect(await totalAt(t12.only!)).toBe(t12.count);
  });

  it('add an extension name to those every match carries, and compose exclusions', async () => {
    const { html } = await page('/events?range=all&has=region&not_level=debug');
    const region = facet(html, 'Extensions').find((i) => i.value === 'region')!;
    const only = params(region.only!);
    expect(only.getAll('has')).toEqual(['region']);
    expect(only.getAll('not_level')).toEqual(['debug']);
    const info = facet(html, 'Severities').find((i) => i.value === 'info')!;
    const not = params(info.not!);
    expect(not.getAll('not_level')).toEqual(['debug', 'info']);
    expect(await totalAt(info.not!)).toBe(total(html) - info.count);
  });

  it('filter on the unknown severity: only those events, or all others', async () => {
    const { html } = await page(`/events?range=all&source=${encodeURIComponent(UNKNOWN)}`);
    const [unknown] = facet(html, 'Severities');
    expect(unknown).toMatchObject({ value: 'unknown', count: UNKNOWN_COUNT, pct: '100%' });
    expect(params(unknown!.only!).get('level')).toBe('unknown');
    expect(await totalAt(unknown!.only!)).toBe(UNKNOWN_COUNT);
    // Every event without a severity: the planted ones and the old one.
    const unknowns = UNKNOWN_COUNT + 1;
    const critical = await totalAt('/events?range=all&level=critical');
    expect(critical).toBe(2);
    expect(await totalAt('/events?range=all&level=unknown')).toBe(unknowns);
    expect(await totalAt('/events?range=all&level=unknown&level=critical')).toBe(unknowns + critical);
    expect(await totalAt(unknown!.not!)).toBe(0);
    expect(await totalAt('/events?range=all&not_level=unknown')).toBe(SEED);
    // The query language reads the same names.
    expect(
      await totalAt(`/events?range=all&query=${encodeURIComponent('level:unknown OR level:critical')}`),
    ).toBe(unknowns + critical);
  });

  it('refuses "unknown" as a minimum severity rather than searching something else', async () => {
    const { status, html } = await page('/events?severity=unknown');
    expect(status).toBe(400);
    expect(html).toContain('severity: expected one of trace');
  });
});

describe('more values', () => {
  it(`lists ${FACET_VALUES} values, and up to ${FACET_MORE_VALUES} of the facet asked for more`, async () => {
    const { html } = await page('/events?range=all&q=reading');
    expect(facet(html, 'Subjects')).toHaveLength(FACET_VALUES);
    const more = /<a href="([^"]*)">More subjects \(([\d,]+) not listed; up to 50 shown\)<\/a>/.exec(html)!;
    expect(Number(more[2])).toBe(SEED - FACET_VALUES);
    const href = decode(more[1]!);
    expect(Object.fromEntries(params(href))).toEqual({ range: 'all', q: 'reading', more: 'subjects' });
    const expanded = await page(href);
    expect(facet(expanded.html, 'Subjects')).toHaveLength(FACET_MORE_VALUES);
    expect(facet(expanded.html, 'Types')).toHaveLength(FACET_VALUES);
    expect(expanded.html).toContain(`The 50 most frequent subjects of ${SEED}.`);
    expect(expanded.html).toContain('<a href="/events?range=all&amp;q=reading">Fewer subjects</a>');
    // Severities has five values: nothing more to show.
    expect(html).not.toContain('More severities');
  });

  it('answers 400 to a facet name it does not know', async () => {
    const { status, html } = await page('/events?more=colours');
    expect(status).toBe(400);
    expect(html).toContain('more: expected one of types, sources, subjects, severities, extensions');
  });
});

describe('an empty result', () => {
  const link = (html: string) => {
    const m = /<a href="([^"]*)">Same search over ([^<]*)<\/a>/.exec(html);
    return m && { href: decode(m[1]!), label: m[2] };
  };

  it('links to the same search over the next larger range until one finds it', async () => {
    const first = await page(`/events?range=15m&source=${OLD}&limit=25`);
    expect(first.html).toContain('No events match these filters.');
    const hour = link(first.html)!;
    expect(hour.label).toBe('the last hour');
    expect(Object.fromEntries(params(hour.href))).toEqual({ range: '1h', source: OLD, limit: '25' });
    const day = link((await page(hour.href)).html)!;
    expect(day.label).toBe('the last 24 hours');
    expect(await totalAt(day.href)).toBe(1);
  });

  it('offers all time for an absolute range, and nothing when it already searched all time', async () => {
    const from = new Date(Date.now() - 30 * 86_400_000).toISOString();
    const to = new Date(Date.now() - 20 * 86_400_000).toISOString();
    const absolute = link((await page(`/events?from=${from}&to=${to}&source=${OLD}`)).html)!;
    expect(absolute.label).toBe('all time');
    expect(Object.fromEntries(params(absolute.href))).toEqual({ source: OLD, range: 'all' });
    expect(link((await page('/events?range=all&source=urn:test:nothing')).html)).toBeNull();
  });
});
