/**
 * The search UI in Chromium (playwright-core) on a store seeded with 12,000 events (more than the
 * 10,000 total cap): every filter kind through the form, three pages forward and back, the capped
 * total, an event's detail, keyboard use; screenshots of the overview and the search page.
 */
import { mkdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { Page, Request } from 'playwright-core';
import { beforeAll, describe, expect, it } from 'vitest';
import { axeViolations } from './axe.js';
import { withChromium } from './chromium-fixture.js';
import { SEEDED, startHarness } from './harness.js';

/**
 * Every run takes the pictures into an ignored folder (each shows that run's data and clock);
 * `UPDATE_SCREENSHOTS=1` writes them into the committed folder the README shows.
 */
const SCREENSHOTS = fileURLToPath(
  new URL(process.env.UPDATE_SCREENSHOTS ? '../screenshots/' : '../.screenshots/', import.meta.url),
);

const run = withChromium(() => startHarness('browser', { seed: SEEDED }));
let page: Page;

beforeAll(async () => {
  page = await run.browser.newPage({ viewport: { width: 1280, height: 900 } });
});

/** The times of the result rows, as shown. */
async function rowTimes(): Promise<string[]> {
  return page
    .locator('section[aria-labelledby="results"] tbody tr.event td:first-child time')
    .allInnerTexts();
}

async function matching(): Promise<string> {
  return (await page.getByRole('status').filter({ hasText: 'Matching events' }).textContent()) ?? '';
}

/** One value's item in a facet list (a value of letters and digits). */
function facetValue(title: string, value: string) {
  return page.locator(`h3:text("${title}") + ul.facets li`, { hasText: new RegExp(`^${value} `) });
}

async function search(fill: Record<string, string>, select: Record<string, string> = {}): Promise<void> {
  await page.goto(`${run.h.url}/events?range=all`);
  // The form is folded under the query bar: the results come first.
  await page.getByText('Every filter as a form').click();
  for (const [label, value] of Object.entries(fill))
    await page.getByLabel(label, { exact: true }).fill(value);
  for (const [label, value] of Object.entries(select))
    await page.getByLabel(label, { exact: true }).selectOption(value);
  await page.getByRole('button', { name: 'Search' }).click();
  await page.waitForURL(/\/events\?/);
}

describe('search UI in Chromium', () => {
  it('shows the overview from the rollup and writes its screenshot', async () => {
    await page.goto(`${run.h.url}/`);
    await expect(page.getByRole('heading', { name: 'Overview', level: 1 }).isVisible()).resolves.toBe(true);
    const events = (await page.locator('.card', { hasText: /^Events/ }).textContent()) ?? '';
    expect(events.replace(/\D/g, '')).toBe(String(SEEDED));
    expect(await page.locator('#top-types ~ div tbody tr').count()).toBe(10);
    mkdirSync(SCREENSHOTS, { recursive: true });
    await page.screenshot({ path: `${SCREENSHOTS}overview.png`, fullPage: true });
  });

  it('shows 10,000+ for a search with more than 10,000 matches, and facets counted over the newest 10,000', async () => {
    await page.goto(`${run.h.url}/events?range=all`);
    expect(await matching()).toBe('Matching events: 10,000+');
    await page
      .getByText(/^Counted over the newest 10,000 matches \(more match\); shares are of those 10,000\./)
      .waitFor();
    // 20 types in turn, 500 each among the newest 10,000 rows: the real count, not a sample's.
    const t1 = page.locator('ul.facets li', { hasText: /^com\.example\.t1 / });
    expect(await t1.locator('.count').textContent()).toBe('500');
    expect(await t1.locator('.pct').textContent()).toBe('5%');
  });

  it('exports at most 10,000 events and says where it stopped', async () => {
    const lines = (await (await fetch(`${run.h.url}/events.ndjson?range=all`)).text()).trim().split('\n');
    expect(lines).toHaveLength(10_001);
    expect(JSON.parse(lines.at(-1)!)).toEqual({
      export: { complete: true, rows: 10_000, truncated: true, cap: 10_000 },
    });
    await page.goto(`${run.h.url}/events?range=all&q=overflow`);
    expect(await page.getByRole('link', { name: 'CSV' }).getAttribute('href')).toBe(
      '/events.csv?range=all&q=overflow',
    );
  });

  it('includes and excludes facet values with their links', async () => {
    await page.goto(`${run.h.url}/events?range=all&source=urn:seed:source-7`);
    expect(await matching()).toBe('Matching events: 240');
    const types = page.locator('h3:text("Types") + ul.facets li');
    const first = types.first();
    const name = (await first.locator('.name').textContent()) ?? '';

    const count = Number(await first.locator('.count').textContent());
    expect(count).toBeGreaterThan(0);
    await first.getByRole('link', { name: `not ${name}` }).click();
    await page.waitForURL(/not_type=/);
    expect(await matching()).toBe(`Matching events: ${240 - count}`);
    await page.goto(`${run.h.url}/events?range=all&source=urn:seed:source-7`);
    await page
      .locator('h3:text("Severities") + ul.facets li')
      .first()
      .getByRole('link', { name: /^only / })
      .click();
    await page.waitForURL(/level=/);
    const level = new URL(page.url()).searchParams.get('level');
    const shown = await page
      .locator('section[aria-labelledby="results"] tbody tr.event td:nth-child(2)')
      .allInnerTexts();
    expect(new Set(shown)).toEqual(new Set([level]));
    await page.goto(`${run.h.url}/events?range=all&source=urn:seed:source-7`);
    await facetValue('Extensions', 'region').getByRole('link', { name: 'only region' }).click();
    await page.waitForURL(/has=region/);
    expect(await matching()).toBe('Matching events: 240');
  });

  it('shows facet shares in words, filters on the unknown severity, lists more values, and widens an empty range', async () => {
    const source = 'urn:test:browser-unknown';
    await run.h.db.query(
      // sql-witness: plants events without a severity, which the devstack seed does not make.
      `INSERT INTO events.cloud_event (occurred_at, ce_source, ce_id, ce_type, raw)
       SELECT now() - interval '1 minute', $1, 'unknown-' || n, 'com.example.unknown', '{}'::jsonb
         FROM generate_series(1, 3) AS n`,
      [source],
    );
    await page.goto(`${run.h.url}/events?source=${source}`);
    const unknown = facetValue('Severities', 'unknown');
    expect(await unknown.locator('.count').textContent()).toBe('3');
    expect(await unknown.locator('.pct').textContent()).toBe('100%');
    await unknown.getByRole('link', { name: 'only unknown' }).click();
    await page.waitForURL(/level=unknown/);
    expect(await matching()).toBe('Matching events: 3');
    expect(new URL(page.url()).searchParams.get('source')).toBe(source);
    await facetValue('Severities', 'unknown').getByRole('link', { name: 'not unknown' }).click();
    await page.waitForURL(/not_level=unknown/);
    expect(await matching()).toBe('Matching events: 0');

    await page.goto(`${run.h.url}/events?range=all`);
    await page.getByRole('link', { name: /^More subjects / }).click();
    await page.waitForURL(/more=subjects/);
    expect(await page.locator('h3:text("Subjects") + ul.facets li').count()).toBe(50);
    await page.getByRole('link', { name: 'Fewer subjects' }).click();
    await page.waitForURL((url) => !url.searchParams.has('more'));
    expect(await page.locator('h3:text("Subjects") + ul.facets li').count()).toBe(10);

    // Row 997 (the newest "overflow") is about 14 hours old.
    await page.goto(`${run.h.url}/events?range=1h&q=overflow`);
    await page.getByText('No events match these filters.').waitFor();
    await page.getByRole('link', { name: 'Same search over the last 24 hours' }).click();
    await page.waitForURL(/range=24h/);
    expect(await matching()).toBe('Matching events: 1');
    expect(new URL(page.url()).searchParams.get('q')).toBe('overflow');
  });

  it('searches by free text', async () => {
    await search({ Text: 'overflow' });
    // Rows n with n % 997 = 0: 997, 1994, ..., 11964.
    expect(await matching()).toBe('Matching events: 12');
    expect(page.url()).toContain('q=overflow');
  });

  it('searches by payload equality and by payload comparison', async () => {
    await search({ 'Payload condition': 'device.id = dev-7' });
    expect(await matching()).toBe('Matching events: 3');
    await search({ 'Payload condition': 'temperature >= 98' });
    expect(await matching()).toBe('Matching events: 240');
  });

  it('searches by type, source, subject and extension attributes', async () => {
    await search({ Type: 'com.example.t3' });
    expect(await matching()).toBe('Matching events: 600');
    await search({ Source: 'urn:seed:source-7' });
    expect(await matching()).toBe('Matching events: 240');
    await search({ Subject: 'subject-5' });
    expect(await matching()).toBe('Matching events: 12');
    await search({ Extension: 'region=eu', Type: 'com.example.t3' });
    // n % 3 = 0 and n % 20 = 3: one n in 60.
    expect(await matching()).toBe('Matching events: 200');
  });

  it('searches by minimum severity', async () => {
    await search({}, { 'Minimum severity': 'critical' });
    expect(await matching()).toBe('Matching events: 24');
    await search({}, { 'Minimum severity': 'error' });
    expect(await matching()).toBe('Matching events: 144');
  });

  it('searches by time range, and keeps every filter in the URL', async () => {
    const to = new Date(run.h.seedEnd.getTime() - 3_600_000);
    const from = new Date(to.getTime() - 3_600_000);
    await search({ 'From (UTC)': from.toISOString(), 'To (UTC)': to.toISOString(), Type: 'com.example.t1' });
    const times = (await rowTimes()).map((t) => new Date(`${t.replace(' ', 'T')}Z`).getTime());
    expect(times.length).toBeGreaterThan(0);
    for (const t of times) {
      expect(t).toBeGreaterThanOrEqual(from.getTime());
      expect(t).toBeLessThan(to.getTime());
    }
    const url = new URL(page.url());
    expect(url.searchParams.get('from')).toBe(from.toISOString());
    expect(url.searchParams.get('type')).toBe('com.example.t1');
    // The bookmarked URL gives the same page.
    const again = await run.browser.newPage();
    await again.goto(page.url());
    expect(await again.locator('section[aria-labelledby="results"] tbody tr.event').count()).toBe(
      times.length,
    );
    await again.close();
  });

  it('pages forward through three pages with the cursor and back again', async () => {
    await search({ Type: 'com.example.t3' }, { 'Rows per page': '25' });
    const pages = [await rowTimes()];
    for (let i = 0; i < 2; i++) {
      await page.getByRole('link', { name: 'Older →' }).click();
      await page.waitForLoadState();
      pages.push(await rowTimes());
    }
    for (const rows of pages) expect(rows).toHaveLength(25);
    const all = pages.flat();
    expect(new Set(all).size).toBe(75);
    expect([...all].sort().reverse()).toEqual(all);
    expect(page.url()).toContain('type=com.example.t3');
    await page.getByRole('link', { name: '← Newer' }).click();
    await page.waitForLoadState();
    expect(await rowTimes()).toEqual(pages[1]);
    await page.getByRole('link', { name: '← Newer' }).click();
    await page.waitForLoadState();
    expect(await rowTimes()).toEqual(pages[0]);
    expect(await page.getByRole('link', { name: '← Newer' }).count()).toBe(0);
  });

  it('opens an event and shows the verbatim CloudEvent', async () => {
    await search({ 'Payload condition': 'device.id = dev-7' });
    await page.locator('section[aria-labelledby="results"] tbody tr.event a').first().click();
    await page.waitForURL(/\/events\/[0-9a-f-]{36}\?t=/);
    const raw = JSON.parse((await page.locator('pre').textContent()) ?? '') as Record<string, unknown>;
    expect(raw).toMatchObject({
      specversion: '1.0',
      id: 'seed-7',
      source: 'urn:seed:source-7',
      region: 'us',
    });
    expect(raw.data).toMatchObject({ device: { id: 'dev-7' }, n: 7 });
  });

  it('shows the detail: id, name, filter for / filter out, the payload tree, surrounding events, copy buttons', async () => {
    await page.goto(`${run.h.url}/events?range=all&payload=device.id%20%3D%20dev-7`);
    await page.locator('section[aria-labelledby="results"] tbody tr.event a').first().click();
    await page.waitForURL(/\/events\/[0-9a-f-]{36}\?t=/);
    await page.getByText('events/urn%3Aseed%3Asource-7,seed-7').waitFor();
    expect(await page.getByRole('button', { name: 'Copy the JSON' }).isVisible()).toBe(true);
    await page.screenshot({ path: `${SCREENSHOTS}detail.png`, fullPage: true });
    const detail = page.url();
    await page.getByRole('link', { name: 'filter out source urn:seed:source-7' }).waitFor();
    await page.getByRole('link', { name: 'filter for device.id = "dev-7"' }).click();
    await page.waitForURL(/payload=/);
    expect(await matching()).toBe('Matching events: 3');
    await page.goto(detail);
    await page.getByRole('link', { name: 'Surrounding events' }).click();
    await page.waitForURL(/\/surrounding\?.*payload=/);
    // Under the search's payload condition: its three matches, the one opened marked in words.
    expect(await page.locator('tbody tr').count()).toBe(3);
    const marked = page.locator('tr[aria-current="true"]');
    expect(await marked.textContent()).toMatch(/^This event: .*seed-7/);
    // Back to the search it came from.
    await page.getByRole('link', { name: 'Back to search' }).click();
    await page.waitForURL(/\/events\?range=all&payload=/);
    // The query bar finds it by the name ingest answered.
    await page.getByLabel('Query', { exact: true }).fill('events/urn%3Aseed%3Asource-7,seed-7');
    await page.keyboard.press('Enter');
    await page.waitForURL(/id=seed-7/);
    expect(await matching()).toBe('Matching events: 1');
  });

  it('answers a receipt: stored, with the link to the event, and writes its screenshot', async () => {
    await run.h.db.query(
      // sql-witness: plants rows with chosen broker coordinates straight into the table the pages read.
      `INSERT INTO events.cloud_event (occurred_at, ce_source, ce_id, ce_type, raw, broker_topic, broker_partition, broker_offset)
       VALUES (now() - interval '1 minute', 'urn:test:receipt', 'r-1', 'com.example.receipt', '{}', 'observatory.events', 3, 1042)`,
    );
    await page.goto(`${run.h.url}/receipt`);
    await page.getByLabel('Topic', { exact: true }).fill('observatory.events');
    await page.getByLabel('Partition', { exact: true }).fill('3');
    await page.getByLabel('Offset', { exact: true }).fill('1042');
    await page.getByRole('button', { name: 'Look up' }).click();
    await page.waitForURL(/offset=1042/);
    const answer = page.getByRole('status').filter({ hasText: 'Stored' });
    expect(await answer.textContent()).toMatch(/com\.example\.receipt from urn:test:receipt, id r-1/);
    await page.screenshot({ path: `${SCREENSHOTS}receipt.png`, fullPage: true });
    await answer.getByRole('link', { name: 'com.example.receipt' }).click();
    await page.waitForURL(/\/events\/[0-9a-f-]{36}\?t=/);
  });

  it('tails live events with their id, pauses with a count of what arrived, and resumes', async () => {
    const source = 'urn:test:browser-tail';
    const insert = (id: string) =>
      run.h.db.query(
        `INSERT INTO events.cloud_event (occurred_at, ce_source, ce_id, ce_type, raw)
         VALUES (now(), $1, $2, 'com.example.tailed', jsonb_build_object('id', $2::text))`,
        [source, id],
      );
    await insert('t-0');
    await page.goto(`${run.h.url}/events?${new URLSearchParams({ source })}`);
    await page.getByRole('button', { name: 'Start live tail' }).click();
    const items = page.locator('ol.tail li');
    // The stream starts after the newest match (t-0) once it has read it: give it that moment.
    await page.getByText('Live tail running').waitFor();
    await new Promise((r) => setTimeout(r, 1_500));
    await insert('t-1');
    await items.filter({ hasText: 't-1' }).waitFor();
    await page.getByRole('button', { name: 'Pause' }).click();
    await insert('t-2');
    await insert('t-3');
    await page.getByText('Paused: 2 new event(s) waiting.').waitFor();
    expect(await items.count()).toBe(1);
    await page.locator('#tail-section').screenshot({ path: `${SCREENSHOTS}tail.png` });
    await page.getByRole('button', { name: 'Resume' }).click();
    await items.filter({ hasText: 't-3' }).waitFor();
    expect(await items.allInnerTexts()).toEqual([
      expect.stringContaining(`${source} t-3`),
      expect.stringContaining(`${source} t-2`),
      expect.stringContaining(`${source} t-1`),
    ]);
    // A burst the page cannot show: paused, the queue keeps the newest 500 of 600; on resume the
    // list shows the newest 200 and one line says how many were never shown.
    await page.getByRole('button', { name: 'Pause' }).click();
    await run.h.db.query(
      `INSERT INTO events.cloud_event (occurred_at, ce_source, ce_id, ce_type, raw)
       SELECT now() + n * interval '1 microsecond', $1, 'b-' || n, 'com.example.burst', '{}'
       FROM generate_series(1, 600) AS n`,
      [source],
    );
    await page.getByText('Paused: 500 new event(s) waiting.').waitFor();
    await page.getByRole('button', { name: 'Resume' }).click();
    await page.locator('ol.tail li.dropped').waitFor();
    expect(await page.locator('ol.tail li.dropped').allInnerTexts()).toEqual([
      '400 dropped (arriving faster than this page can show)',
    ]);
    const shown = page.locator('ol.tail li:not(.dropped)');
    expect(await shown.count()).toBe(200);
    expect(await shown.first().textContent()).toContain(`${source} b-600`);
    expect(await shown.last().textContent()).toContain(`${source} b-401`);
    // The marker sits where the gap is: below the events shown, above any older ones.
    expect(await page.locator('ol.tail li').nth(200).getAttribute('class')).toBe('dropped');
    // An event dated 3 minutes ahead still arrives (the tail follows ingestion), marked.
    await run.h.db.query(
      `INSERT INTO events.cloud_event (occurred_at, ce_source, ce_id, ce_type, raw)
       VALUES (now() + interval '3 minutes', $1, 'ahead-1', 'com.example.ahead', '{}')`,
      [source],
    );
    await items.filter({ hasText: 'ahead-1' }).waitFor();
    expect(await items.first().textContent()).toMatch(/ahead-1 from the future$/);
    await page.getByRole('button', { name: 'Stop live tail' }).click();
  });

  it('ends a tail at its maximum age and reconnects from the last event; a refused tail says so', async () => {
    const maxAgeMs = 1_500;
    const aged = await startHarness('tailage', {
      tailPollMs: 100,
      tailLimits: { perPod: 5, perViewer: 1, maxAgeMs, queries: 2 },
    });
    const tailPage = await run.browser.newPage();
    try {
      const source = 'urn:test:browser-aged';
      const insert = (id: string) =>
        aged.db.query(
          `INSERT INTO events.cloud_event (occurred_at, ce_source, ce_id, ce_type, raw)
           VALUES (now(), $1, $2, 'com.example.aged', '{}')`,
          [source, id],
        );
      await tailPage.goto(`${aged.url}/events?${new URLSearchParams({ source })}`);
      // One tail per viewer; with login off, per client address: a stream held by this test refuses the page's.
      const held = new AbortController();
      expect((await fetch(`${aged.url}/events/tail?range=all`, { signal: held.signal })).status).toBe(200);
      await tailPage.getByRole('button', { name: 'Start live tail' }).click();
      await tailPage.getByText('Live tail refused by the server').waitFor();
      expect(await tailPage.getByRole('button', { name: 'Start live tail' }).isVisible()).toBe(true);
      held.abort();
      await expect.poll(() => aged.metric(/^tail_connections/)).toBe(0);

      const opened: { at: number; request: Request }[] = [];
      tailPage.on('request', (request) => {
        if (request.url().includes('/events/tail')) opened.push({ at: performance.now(), request });
      });
      const lastEventId = async (i: number) => (await opened[i]!.request.allHeaders())['last-event-id'];
      await tailPage.getByRole('button', { name: 'Start live tail' }).click();
      await tailPage.getByText('Live tail running').waitFor();
      await new Promise((r) => setTimeout(r, 300)); // the stream has taken its starting position
      await insert('a-1');
      const items = tailPage.locator('ol.tail li');
      await items.filter({ hasText: 'a-1' }).waitFor();
      // The server ends the stream at its age; the browser reconnects with the last id it saw.
      await expect.poll(() => opened.length, { timeout: 10_000 }).toBe(2);
      expect(await lastEventId(0)).toBeUndefined();
      expect(await lastEventId(1)).toMatch(/^[\w-]+\.[\w-]+$/);
      expect(opened[1]!.at - opened[0]!.at).toBeGreaterThanOrEqual(maxAgeMs);
      await tailPage.getByText('Live tail running').waitFor();
      await insert('a-2');
      await items.filter({ hasText: 'a-2' }).waitFor();
      // Resumed after a-1: nothing sent twice, nothing missed.
      expect(await items.allInnerTexts()).toEqual([
        expect.stringContaining(`${source} a-2`),
        expect.stringContaining(`${source} a-1`),
      ]);
    } finally {
      await tailPage.close();
      await aged.close();
    }
  });

  it('can be used with the keyboard alone: tab to the text field, type, press Enter', async () => {
    await page.goto(`${run.h.url}/events?range=all`);
    await page.keyboard.press('Tab');
    expect(await page.evaluate('document.activeElement?.textContent')).toBe('Skip to content');
    // The skip link moves the focus start to the main content: the next Tab reaches the first field.
    await page.keyboard.press('Enter');
    await page.keyboard.press('Tab');
    expect(await page.evaluate("document.activeElement?.getAttribute('name')")).toBe('bar');
    await page.keyboard.type('overflow');
    await page.keyboard.press('Enter');
    await page.waitForURL(/q=overflow/);
    expect(await matching()).toBe('Matching events: 12');
  });

  it('reads the last 24 hours by default, keeps the relative range in the URL and offers the absolute link', async () => {
    await page.goto(`${run.h.url}/events`);
    await expect(page.getByLabel('Time range').inputValue()).resolves.toBe('24h');
    const since = Date.now() - 86_400_000 - 60_000;
    for (const t of await rowTimes())
      expect(new Date(`${t.replace(' ', 'T')}Z`).getTime()).toBeGreaterThan(since);
    expect(await matching()).not.toContain('10,000');
    // Beside the query bar, which runs the line with it.
    await page.getByLabel('Time range').selectOption('1h');
    await page.getByRole('button', { name: 'Run' }).click();
    await page.waitForURL(/range=1h/);
    const link = new URL(
      (await page.getByRole('link', { name: 'Link with absolute time' }).getAttribute('href'))!,
      run.h.url,
    );
    expect(link.searchParams.has('range')).toBe(false);
    const span =
      new Date(link.searchParams.get('to')!).getTime() - new Date(link.searchParams.get('from')!).getTime();
    expect(span).toBe(3_600_000);
    await page.goto(link.href);
    await expect(page.getByLabel('Time range').inputValue()).resolves.toBe('');
  });

  it("shows each event's CloudEvents id beside its source", async () => {
    await page.goto(`${run.h.url}/events?range=all&source=urn:seed:source-7&limit=25`);
    const ids = await page
      .locator('section[aria-labelledby="results"] tbody tr.event td:nth-child(5)')
      .allInnerTexts();
    expect(ids).toHaveLength(25);
    for (const id of ids) expect(id).toMatch(/^seed-\d+$/);
  });

  it('reads the query bar into the form filters, and points at the column of a mistake', async () => {
    await page.goto(`${run.h.url}/events?range=all`);
    await page.getByLabel('Query', { exact: true }).fill('type:com.example.t3 region=eu');
    await page.keyboard.press('Enter');
    await page.waitForURL(/type=com.example.t3/);
    expect(new URL(page.url()).searchParams.getAll('ext')).toEqual(['region=eu']);
    expect(new URL(page.url()).searchParams.get('range')).toBe('all');
    expect(await matching()).toBe('Matching events: 200');
    await expect(page.getByLabel('Type', { exact: true }).inputValue()).resolves.toBe('com.example.t3');
    await page.getByLabel('Query', { exact: true }).fill('boiler colour:red');
    await page.keyboard.press('Enter');
    await page.getByRole('alert').filter({ hasText: 'Column 8: unknown field "colour"' }).waitFor();
  });

  it('draws the histogram with uPlot under the strict CSP: a click zooms into a bar, a drag into the bars it crosses', async () => {
    const blocked: string[] = [];
    page.on('console', (m) => {
      if (m.text().includes('Content Security Policy')) blocked.push(m.text());
    });
    await page.goto(`${run.h.url}/events?range=7d`);
    await page.getByText('from the hourly rollup').waitFor();
    expect(await page.locator('.histogram svg a').count()).toBeGreaterThan(40);
    await page.goto(`${run.h.url}/events?range=all&q=overflow`);
    await expect(page.locator('.histogram .hint').first().textContent()).resolves.toMatch(
      /^12 events, one bar per .*; select a bar, or drag across several, to zoom\.$/,
    );
    const over = page.locator('.histogram .u-over');
    await over.waitFor();
    // The chart replaces the server's SVG (kept for pages without JavaScript).
    expect(await page.locator('.histogram svg.h-svg').isVisible()).toBe(false);
    await page.screenshot({ path: `${SCREENSHOTS}search.png`, fullPage: true });
    const chart = JSON.parse((await page.locator('[data-chart]').getAttribute('data-chart')) ?? '') as {
      bucketMs: number;
      starts: number[];
      severe: number[];
      warning: number[];
      other: number[];
    };
    const n = chart.starts.length;
    const count = (from: number, to: number) => {
      let sum = 0;
      for (let i = from; i <= to; i++) sum += chart.severe[i]! + chart.warning[i]! + chart.other[i]!;
      return sum;
    };
    // The middle of bar i, near the bottom of the plot (in the viewport: mouse events do not scroll).
    const at = async (i: number) => {
      await over.scrollIntoViewIfNeeded();
      const box = (await over.boundingBox())!;
      return [box.x + ((i + 0.5) / n) * box.width, box.y + box.height - 2] as const;
    };
    const zoomed = async (from: number, to: number) => {
      await page.waitForURL(/from=.*&to=/);
      const url = new URL(page.url());
      expect(url.searchParams.has('range')).toBe(false);
      expect(url.searchParams.get('q')).toBe('overflow');
      expect(url.searchParams.get('from')).toBe(new Date(chart.starts[from]!).toISOString());
      expect(url.searchParams.get('to')).toBe(new Date(chart.starts[to]! + chart.bucketMs).toISOString());
      expect(await matching()).toBe(`Matching events: ${count(from, to)}`);
    };
    const bar = chart.starts.findIndex((_, i) => count(i, i) > 0);
    await page.mouse.click(...(await at(bar)));
    await zoomed(bar, bar);
    await page.goBack();
    const [from, to] = [Math.floor(n / 4), Math.floor((3 * n) / 4)];
    expect(count(from, to)).toBeGreaterThan(count(from, from));
    await page.mouse.move(...(await at(from)));
    await page.mouse.down();
    await page.mouse.move(...(await at(to)), { steps: 5 });
    await page.mouse.up();
    await zoomed(from, to);
    expect(blocked).toEqual([]);
  });

  it('works without JavaScript: the SVG histogram zooms, its table and the query bar', async () => {
    const context = await run.browser.newContext({ javaScriptEnabled: false });
    const plain = await context.newPage();
    await plain.goto(`${run.h.url}/events?range=all&q=overflow`);
    expect(await plain.locator('.histogram .uplot').count()).toBe(0);
    await expect(
      plain.locator('.histogram svg rect.h-other, .histogram svg rect.h-severe').count(),
    ).resolves.toBeGreaterThan(0);
    await plain.getByText(/as a table$/).click();
    const cells = await plain
      .locator('.histogram tbody tr')
      .evaluateAll((rows) =>
        rows.map((r) => [...r.querySelectorAll('td.num')].reduce((n, td) => n + Number(td.textContent), 0)),
      );
    expect(cells.reduce((a, b) => a + b, 0)).toBe(12);
    const bar = plain
      .locator('.histogram svg a:has(rect.h-other), .histogram svg a:has(rect.h-severe)')
      .first();
    const count = /: (\d+) events$/.exec((await bar.locator('title').textContent()) ?? '')?.[1];
    await bar.click();
    await plain.waitForURL(/from=.*&to=/);
    expect(new URL(plain.url()).searchParams.has('range')).toBe(false);
    expect(await plain.getByRole('status').filter({ hasText: 'Matching events' }).textContent()).toBe(
      `Matching events: ${count}`,
    );
    await plain.getByLabel('Query', { exact: true }).fill('type:com.example.t3');
    await plain.keyboard.press('Enter');
    await plain.waitForURL(/type=com.example.t3/);
    await context.close();
  });

  it('has keyboard shortcuts: / focuses the query bar, j and k move through rows, Enter opens', async () => {
    await page.goto(`${run.h.url}/events?range=all&q=overflow`);
    await page.keyboard.press('/');
    expect(await page.evaluate('document.activeElement?.id')).toBe('f-bar');
    // Out of the bar (keys typed into a field are its own): a click on a heading.
    await page.locator('#histogram').click();
    await page.keyboard.press('j');
    await page.keyboard.press('j');
    await page.keyboard.press('k');
    const first = await page
      .locator('section[aria-labelledby="results"] tbody tr.event a')
      .first()
      .getAttribute('href');
    expect(await page.evaluate('document.activeElement?.getAttribute("href")')).toBe(first);
    await page.keyboard.press('Enter');
    await page.waitForURL(/\/events\/[0-9a-f-]{36}\?t=/);
  });

  it('follows a dark colour scheme and passes axe-core on the search page, the detail, its surrounding events and the receipt', async () => {
    const context = await run.browser.newContext({ colorScheme: 'dark', bypassCSP: true });
    const dark = await context.newPage();
    await dark.goto(`${run.h.url}/events?range=all&q=overflow`);
    expect(await dark.evaluate('getComputedStyle(document.body).backgroundColor')).toBe('rgb(18, 20, 23)');
    const detail = (await dark
      .locator('section[aria-labelledby="results"] tbody tr.event a')
      .first()
      .getAttribute('href'))!;
    const around = detail.replace('?', '/surrounding?');
    for (const path of [
      '/events?range=all&q=overflow',
      '/events?range=all&more=types',
      '/events?range=1h&q=overflow',
      detail,
      around,
      '/receipt?topic=t&partition=0&offset=1',
    ]) {
      for (const scheme of ['dark', 'light'] as const) {
        await dark.emulateMedia({ colorScheme: scheme });
        await dark.goto(`${run.h.url}${path}`);
        expect(await axeViolations(dark), `${scheme} ${path}`).toEqual([]);
      }
    }
    await context.close();
  });

  it('shows the first screen at 1440x900, 2560x1440 and 375x812, light and dark: axe-clean, never wider than the screen, results without scrolling', async () => {
    /** Result rows wholly on the first screen: none at 375x812, where the bar, range and histogram come first. */
    const ROWS_SHOWN = { 1440: 5, 2560: 15, 375: 0 } as const;
    for (const [width, height] of [
      [1440, 900],
      [2560, 1440],
      [375, 812],
    ] as const) {
      for (const colorScheme of ['light', 'dark'] as const) {
        const context = await run.browser.newContext({
          viewport: { width, height },
          isMobile: width < 600,
          colorScheme,
          bypassCSP: true,
        });
        const screen = await context.newPage();
        await screen.goto(`${run.h.url}/events?range=all`);
        const at = `${width}x${height} ${colorScheme}`;
        expect(await axeViolations(screen), at).toEqual([]);
        expect(await screen.evaluate('document.documentElement.scrollWidth'), at).toBeLessThanOrEqual(width);
        const bottoms = await screen
          .locator('section[aria-labelledby="results"] tbody tr.event')
          .evaluateAll((trs) => trs.map((tr) => tr.getBoundingClientRect().bottom));
        expect(bottoms.filter((bottom) => bottom <= height).length, at).toBeGreaterThanOrEqual(
          ROWS_SHOWN[width],
        );
        // On a phone: the query bar, the range and the histogram's top at least.
        await screen.locator('.histogram .u-over').waitFor();
        for (const shown of ['#f-bar', '#f-range', '.histogram .u-over'])
          expect((await screen.locator(shown).boundingBox())!.y, `${at} ${shown}`).toBeLessThan(height);
        // Facet names never break mid-word (a name keeps its line; the counts move under it).
        expect(await screen.locator('ul.facets .name').evaluateAll(midWordBreaks), at).toEqual([]);
        // What shows above the fold, for the README and the reviews of the layout.
        await screen.screenshot({ path: `${SCREENSHOTS}first-screen-${width}x${height}-${colorScheme}.png` });
        await context.close();
      }
    }
  });

  it('fits a phone screen without sideways scrolling of the page', async () => {
    const phone = await run.browser.newPage({ viewport: { width: 375, height: 740 }, isMobile: true });
    await phone.goto(`${run.h.url}/events?type=com.example.t3`);
    // Against the viewport's width: a mobile browser widens innerWidth to a page that overflows.
    expect(await phone.evaluate('document.documentElement.scrollWidth')).toBeLessThanOrEqual(375);
    // The folded syntax opens under the bar, within the screen too.
    await phone.getByText('Syntax', { exact: true }).click();
    expect(await phone.locator('#f-bar-hint').isVisible()).toBe(true);
    expect(await phone.evaluate('document.documentElement.scrollWidth')).toBeLessThanOrEqual(375);
    await phone.close();
  });
});

/**
 * Names among the elements whose text wraps to a new line after a character other than `.`, `/`
 * or `:`. Runs in the page; the test code has no DOM types, hence the loose ones.
 */
// biome-ignore lint/suspicious/noExplicitAny: page-side code without DOM types
function midWordBreaks(elements: any[]): string[] {
  // biome-ignore lint/suspicious/noExplicitAny: as above
  const { document, NodeFilter } = globalThis as any;
  return elements.flatMap((element) => {
    const text: string = element.textContent ?? '';
    const range = document.createRange();
    const walker = document.createTreeWalker(element, NodeFilter.SHOW_TEXT);
    let lastTop: number | undefined;
    let offset = 0;
    let broken = false;
    for (let node = walker.nextNode(); node; node = walker.nextNode()) {
      for (let i = 0; i < node.textContent.length; i++, offset++) {
        range.setStart(node, i);
        range.setEnd(node, i + 1);
        const top: number = range.getBoundingClientRect().top;
        if (lastTop !== undefined && top > lastTop + 1 && !'./:'.includes(text[offset - 1] ?? ''))
          broken = true;
        lastTop = top;
      }
    }
    return broken ? [text] : [];
  });
}
