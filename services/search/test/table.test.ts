/**
 * The results table's parameters over HTTP on a seeded store: the order (`sort`) and its cursors,
 * the chosen columns (`col`), the time zone (`tz`); a bad value answers 400 naming the parameter.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Harness, startHarness } from './harness.js';

const SEED = 230;
let h: Harness;

beforeAll(async () => {
  h = await startHarness('table', { seed: SEED });
});

afterAll(async () => {
  await h?.close();
});

interface Page {
  status: number;
  body: string;
  /** The key time of each row's event link, in the order shown. */
  times: string[];
  uids: string[];
  previous: string | undefined;
  next: string | undefined;
}

/** An href as the browser reads it. */
const hrefOf = (html: string) => html.replace(/&amp;/g, '&');

function hrefAt(body: string, rel: string): string | undefined {
  const html = new RegExp(`<a href="([^"]*)" rel="${rel}"`).exec(body)?.[1];
  return html === undefined ? undefined : hrefOf(html);
}

async function page(path: string): Promise<Page> {
  const res = await h.get(path);
  const body = await res.text();
  const links = [...body.matchAll(/<a href="\/events\/([0-9a-f-]{36})\?t=([^&"]+)/g)];
  return {
    status: res.status,
    body,
    uids: links.map((m) => m[1]!),
    times: links.map((m) => decodeURIComponent(m[2]!.replace(/\+/g, ' '))),
    previous: hrefAt(body, 'prev'),
    next: hrefAt(body, 'next'),
  };
}

/** Every page from `first` on, following "next". */
async function walk(first: string): Promise<Page[]> {
  const pages: Page[] = [];
  let path: string | undefined = first;
  while (path !== undefined && pages.length < 20) {
    const p = await page(path);
    expect(p.status, path).toBe(200);
    pages.push(p);
    path = p.next;
  }
  return pages;
}

const cursorOf = (href: string | undefined) => new URLSearchParams(href?.split('?')[1]).get('cursor')!;

describe('sort', () => {
  it('pages through every match oldest first, the reverse of newest first, and back', async () => {
    const oldest = await walk('/events?range=all&limit=50&sort=oldest');
    const newest = await walk('/events?range=all&limit=50');
    const ascending = oldest.flatMap((p) => p.uids);
    expect(ascending).toHaveLength(SEED);
    expect(new Set(ascending).size).toBe(SEED);
    expect(newest.flatMap((p) => p.uids)).toEqual([...ascending].reverse());
    const times = oldest.flatMap((p) => p.times);
    expect(times).toEqual([...times].sort());
    // Every link keeps the order: the second page's "previous" is the first page again.
    expect(oldest[1]!.next).toContain('sort=oldest');
    expect(oldest[1]!.body).toContain('Newer →');
    expect(oldest[1]!.body).toContain('← Older');
    const back = await page(oldest[1]!.previous!);
    expect(back.uids).toEqual(oldest[0]!.uids);
    expect(back.previous).toBeUndefined();
  });

  it('refuses a cursor of one order in the other with 400, naming the cursor', async () => {
    const oldest = await page('/events?range=all&limit=5&sort=oldest');
    const newest = await page('/events?range=all&limit=5');
    const mixed = [
      `/events?range=all&limit=5&cursor=${encodeURIComponent(cursorOf(oldest.next))}`,
      `/events?range=all&limit=5&sort=newest&cursor=${encodeURIComponent(cursorOf(oldest.next))}`,
      `/events?range=all&limit=5&sort=oldest&cursor=${encodeURIComponent(cursorOf(newest.next))}`,
    ];
    for (const path of mixed) {
      const res = await h.get(path);
      expect(res.status, path).toBe(400);
      expect(await res.text()).toMatch(/cursor: belongs to the (oldest|newest)-first order/);
    }
  });

  it('answers 400 naming sort for an unknown order', async () => {
    const res = await h.get('/events?sort=random');
    expect(res.status).toBe(400);
    expect(await res.text()).toContain('sort: expected one of newest, oldest');
  });

  it('keeps the order in the filter form, the query bar and the facet links', async () => {
    const { body } = await page('/events?range=all&sort=oldest');
    expect(body.match(/<input type="hidden" name="sort" value="oldest"/g)?.length).toBeGreaterThanOrEqual(2);
    const facetLinks = [...body.matchAll(/<a href="([^"]*)" aria-label="only [^"]*"/g)].map((m) =>
      hrefOf(m[1]!),
    );
    expect(facetLinks.length).toBeGreaterThan(0);
    for (const link of facetLinks) expect(link).toContain('sort=oldest');
  });
});

/** The cells of each body row of the results table (`tr.event`), as HTML. */
function cells(body: string): string[][] {
  return [...body.matchAll(/<tr class="event"[^>]*>(.*?)<\/tr>/gs)].map((row) =>
    [...row[1]!.matchAll(/<td[^>]*>(.*?)<\/td>/gs)].map((m) => m[1]!),
  );
}

function headings(body: string): string[] {
  const head = /<table class="events"[^>]*>.*?<thead>(.*?)<\/thead>/s.exec(body)?.[1] ?? '';
  return [...head.matchAll(/<th scope="col">(.*?)<\/th>/g)].map((m) => m[1]!);
}

/** Plants one event with this payload and extensions (the seed's are all alike). */
async function plant(id: string, data: unknown, extensions: Record<string, string> = {}): Promise<void> {
  const event = {
    specversion: '1.0',
    id,
    source: 'urn:test:table',
    type: 'com.example.table',
    ...extensions,
    data,
  };
  // sql-witness: plants events with payloads and extensions the devstack seed does not make.
  await h.db.query(
    `INSERT INTO events.cloud_event (occurred_at, ce_source, ce_id, ce_type, raw, data, extensions)
     VALUES (now() - interval '1 minute', 'urn:test:table', $1, 'com.example.table', $2::jsonb, $3::jsonb, $4::jsonb)`,
    [id, JSON.stringify(event), JSON.stringify(data), JSON.stringify(extensions)],
  );
}

describe('columns', () => {
  it('shows the chosen columns in order, the time first: attributes, payload paths, extensions, the payload', async () => {
    const { status, body } = await page(
      '/events?range=all&id=seed-7&col=type&col=data.device.id&col=ext.region&col=summary',
    );
    expect(status).toBe(200);
    expect(headings(body)).toEqual(['Time', 'Type', 'data.device.id', 'ext.region', 'Payload']);
    const [row] = cells(body);
    expect(row).toHaveLength(5);
    expect(row!.slice(1, 4)).toEqual(['com.example.t7', 'dev-7', 'us']);
    expect(row![4]).toContain('&quot;device&quot;: {&quot;id&quot;: &quot;dev-7&quot;}');
    // Every cell carries its whole value for the hover.
    expect(body).toContain('title="dev-7"');
  });

  it('shows the attribute columns without col, and the time alone for col=time', async () => {
    expect(headings((await page('/events?range=all&id=seed-7')).body)).toEqual([
      'Time',
      'Severity',
      'Type',
      'Source',
      'Id',
      'Subject',
    ]);
    expect(headings((await page('/events?range=all&id=seed-7&col=time')).body)).toEqual(['Time']);
  });

  it('escapes payload text and cuts a long value with an ellipsis', async () => {
    await plant('table-escape', { note: '<script>alert(1)</script>', long: 'x'.repeat(1_000) });
    const { body } = await page('/events?range=all&id=table-escape&col=summary&col=data.note&col=data.long');
    expect(body).not.toContain('<script>alert(1)');
    const [row] = cells(body);
    expect(row![2]).toBe('&lt;script&gt;alert(1)&lt;/script&gt;');
    expect(row![3]).toBe(`${'x'.repeat(300)}…`);
  });

  it('answers 400 naming col for an unknown column, a bad path and a bad extension name', async () => {
    for (const [col, message] of [
      ['bogus', 'col "bogus": expected one of time, severity'],
      ['data..x', 'col "data..x": a payload path'],
      ['ext.Region', 'col "ext.Region": an extension name'],
    ]) {
      const res = await h.get(`/events?col=${encodeURIComponent(col!)}`);
      expect(res.status, col).toBe(400);
      expect(await res.text()).toContain(message!.replace(/"/g, '&quot;'));
    }
  });

  it('keeps the columns in every link and form, and the settings form keeps the filters without the cursor', async () => {
    const first = await page('/events?range=all&limit=5&col=type&col=data.n');
    const second = await page(first.next!);
    expect(first.next).toContain('col=type&col=data.n');
    expect(headings(second.body)).toEqual(['Time', 'Type', 'data.n']);
    const settings = /<form method="get" action="\/events" aria-label="Table settings">(.*?)<\/form>/s.exec(
      second.body,
    )?.[1];
    expect(settings).toContain('<input type="hidden" name="range" value="all"/>');
    expect(settings).not.toContain('name="cursor"');
    expect(settings).toMatch(/<input type="checkbox" name="col" value="type" checked/);
    expect(settings).toContain('value="data.n"');
  });
});

describe('the way back from an event', () => {
  it('keeps the order, the columns and the time zone: the event link carries them, its page links back with them', async () => {
    const search = 'range=all&id=seed-7&sort=oldest&col=type&tz=browser';
    const { body } = await page(`/events?${search}`);
    const event = hrefOf(/<a href="(\/events\/[0-9a-f-]{36}\?[^"]*)"/.exec(body)![1]!);
    expect(event).toContain(`&${search}`);
    const detail = await (await h.get(event)).text();
    expect(detail).toContain(`href="/events?${search.replace(/&/g, '&amp;')}"`);
  });
});

describe('inline expand', () => {
  it('puts each event under its row, as values by path and as JSON; a large one is only linked', async () => {
    await plant('table-large', { blob: 'y'.repeat(20_000) });
    const { body } = await page('/events?range=all&id=seed-7');
    // The toggle in the row's time cell (a row stays one line), the event in the hidden row under it.
    expect(body).toMatch(
      /<td class="time"><details class="toggle"><summary><span class="visually-hidden">Details of com\.example\.t\d+ seed-7</,
    );
    expect(body).toMatch(/<tr class="expand"><td colspan="6"><table class="values">/);
    expect(body).toMatch(
      /<th scope="row">data\.device\.id <button[^>]*>Copy<\/button><\/th><td>dev-7 <button/,
    );
    expect(body).toContain('&quot;id&quot;: &quot;dev-7&quot;');
    const large = await page('/events?range=all&id=table-large');
    expect(large.body).toMatch(/This event is \d+ kB, more than the 16 kB shown here/);
    expect(large.body).not.toContain('y'.repeat(1_000));
  });
});

describe('time zone', () => {
  it('writes UTC times as <time datetime>, marks the table for the browser zone, and refuses an unknown zone', async () => {
    const utc = await page('/events?range=all&id=seed-7');
    expect(utc.body).toMatch(/<time datetime="\d{4}-\d\d-\d\dT[\d:.]+Z">\d{4}-\d\d-\d\d [\d:.]+<\/time>/);
    expect(utc.body).not.toContain('data-tz');
    const browser = await page('/events?range=all&id=seed-7&tz=browser');
    expect(browser.body).toContain('<table class="events" data-tz="browser">');
    expect(browser.body).toContain('times in your browser&#39;s time zone');
    const res = await h.get('/events?tz=mars');
    expect(res.status).toBe(400);
    expect(await res.text()).toContain('tz: expected one of utc, browser');
  });
});
