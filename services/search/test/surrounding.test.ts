/**
 * The surrounding events of one event, over plain HTTP (the page needs no script): from a search's
 * result link to the event, from there to its neighbours under that search's filters (its time
 * range left out), the event marked in words and for screen readers, "load more" on each side to
 * the end of the matches, the step's bounds.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Harness, startHarness } from './harness.js';

const SOURCE = 'urn:test:around';
const KEPT = 'com.example.kept';
let h: Harness;

beforeAll(async () => {
  h = await startHarness('surrounding');
  // sql-witness: a minute apart, alternating two types, so a filter keeps every other event.
  await h.db.query(
    `INSERT INTO events.cloud_event (occurred_at, ce_source, ce_id, ce_type, raw)
     SELECT date_trunc('second', now()) - g * interval '1 minute', $1::text, 'a-' || g,
            CASE WHEN g % 2 = 0 THEN $2 ELSE 'com.example.other' END, jsonb_build_object('id', 'a-' || g)
       FROM generate_series(1, 80) AS g`,
    [SOURCE, KEPT],
  );
});

afterAll(async () => {
  await h?.close();
});

const htmlText = (href: string) => href.replaceAll('&amp;', '&');

/** The first link whose href matches `pattern`, as a path with its query. */
function link(html: string, pattern: RegExp): string {
  const hrefs = [...html.matchAll(/href="([^"]+)"/g)].map((m) => htmlText(m[1]!));
  const found = hrefs.find((href) => pattern.test(href));
  if (!found) throw new Error(`no link matching ${pattern} in ${hrefs.join(' ')}`);
  return found;
}

/** The rows of the page's table: the event's id, and whether it is the marked one. */
function rows(html: string): { id: string; anchor: boolean }[] {
  return [...html.matchAll(/<tr id="e-[0-9a-f-]+"([^>]*)>(.*?)<\/tr>/gs)].map((m) => ({
    id: /<td class="cell"[^>]*>(a-\d+)<\/td>/.exec(m[2]!)![1]!,
    anchor: m[1]!.includes('aria-current="true"') && m[2]!.includes('This event'),
  }));
}

const ids = (from: number, to: number) =>
  Array.from(
    { length: Math.abs(to - from) / 2 + 1 },
    (_, i) => `a-${from > to ? from - 2 * i : from + 2 * i}`,
  );

async function page(path: string): Promise<string> {
  const res = await h.get(path);
  expect(res.status, path).toBe(200);
  return res.text();
}

describe('surrounding events', () => {
  let around: string;

  beforeAll(async () => {
    // A search whose time range (15 minutes) holds only the newest of them.
    const search = await page(`/events?range=15m&type=${KEPT}&source=${encodeURIComponent(SOURCE)}`);
    expect(search).not.toContain('>a-40<');
    const wide = await page(`/events?range=7d&type=${KEPT}&source=${encodeURIComponent(SOURCE)}&limit=100`);
    const row = /<tr class="event">(.*?)<\/tr>/gs;
    const withAnchor = [...wide.matchAll(row)].find((m) => m[1]!.includes('>a-40<'))![1]!;
    const detailHref = link(withAnchor, /^\/events\/[0-9a-f-]{36}\?/);
    // The result link carries the search's filters; the detail page hands them on.
    expect(new URL(detailHref, h.url).searchParams.getAll('type')).toEqual([KEPT]);
    const narrowed = new URL(detailHref, h.url);
    narrowed.searchParams.set('range', '15m');
    const detail = await page(`${narrowed.pathname}${narrowed.search}`);
    expect(link(detail, /^\/events\?/)).toBe(
      `/events?range=15m&type=${encodeURIComponent(KEPT)}&source=${encodeURIComponent(SOURCE)}`,
    );
    around = link(detail, /\/surrounding\?/);
  });

  it('shows ten events before and after the event under the search filters, oldest first, the event marked', async () => {
    const html = await page(around);
    const shown = rows(html);
    expect(shown.map((r) => r.id)).toEqual([...ids(60, 42), 'a-40', ...ids(38, 20)]);
    expect(shown.filter((r) => r.anchor).map((r) => r.id)).toEqual(['a-40']);
    expect(html).toContain('10 earlier and 10 later events');
    // Links from the rows keep the search, so the next event's page leads on the same way.
    expect(link(html, /^\/events\/[0-9a-f-]{36}\?t=/)).toContain(`type=${encodeURIComponent(KEPT)}`);
  });

  it('loads more on each side through plain links, down to the last match', async () => {
    const first = await page(around);
    const earlier = link(first, /older=20/);
    expect(earlier).toMatch(/#e-[0-9a-f-]{36}$/);
    const more = await page(earlier.replace(/#.*$/, ''));
    expect(rows(more).map((r) => r.id)).toEqual([...ids(80, 42), 'a-40', ...ids(38, 20)]);
    expect(more).toContain('No earlier events match.');
    const later = await page(link(more, /newer=20/).replace(/#.*$/, ''));
    expect(rows(later).map((r) => r.id)).toEqual([...ids(80, 42), 'a-40', ...ids(38, 2)]);
    expect(later).toContain('No later events match.');
    expect(rows(later).filter((r) => r.anchor)).toHaveLength(1);
  });

  it('takes the step from n, within its bounds', async () => {
    const url = new URL(around, h.url);
    url.searchParams.set('n', '3');
    const three = await page(`${url.pathname}${url.search}`);
    expect(rows(three).map((r) => r.id)).toEqual(['a-46', 'a-44', 'a-42', 'a-40', 'a-38', 'a-36', 'a-34']);
    expect(link(three, /older=6/)).toContain('n=3');
    for (const bad of ['0', '51', 'x']) {
      url.searchParams.set('n', bad);
      expect((await h.get(`${url.pathname}${url.search}`)).status).toBe(400);
    }
    url.searchParams.set('n', '10');
    url.searchParams.set('older', '201');
    expect((await h.get(`${url.pathname}${url.search}`)).status).toBe(400);
  });

  it('shows every event around it when opened without a search', async () => {
    const url = new URL(around, h.url);
    const bare = await page(`${url.pathname}?t=${encodeURIComponent(url.searchParams.get('t')!)}&n=2`);
    expect(rows(bare).map((r) => r.id)).toEqual(['a-42', 'a-41', 'a-40', 'a-39', 'a-38']);
    expect(bare).toContain('All events, oldest first.');
  });
});
