/**
 * The results table in Chromium (playwright-core): the column chooser, the order and the inline
 * expand without JavaScript, the browser's time zone with it; axe-core clean and no sideways
 * scrolling of the page at 1440x900 and 375x812.
 */
import type { Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { axeViolations } from './axe.js';
import { withChromium } from './chromium-fixture.js';
import { startHarness } from './harness.js';

const DESKTOP = { width: 1440, height: 900 };
const PHONE = { width: 375, height: 812 };
const ROWS = 'section[aria-labelledby="results"] tbody tr.event';
/** Result rows a 1440x900 screen held when each row had an expand line under it (measured then). */
const ABOVE_FOLD_BEFORE = 14;

const run = withChromium(() => startHarness('tablebrowser', { seed: 300 }));

async function headings(page: Page): Promise<string[]> {
  return page.locator('table.events > thead th').allTextContents();
}

/** The key times of the rows' event links, in the order shown. */
async function keyTimes(page: Page): Promise<string[]> {
  const hrefs = await page
    .locator(`${ROWS} td.time a`)
    .evaluateAll((links) => links.map((a) => a.getAttribute('href') ?? ''));
  return hrefs.map((href) => new URLSearchParams(href.split('?')[1]).get('t') ?? '');
}

/** The headings after the first test's choice: Severity off, the payload and a payload path on. */
const CHOSEN = ['Time', 'Type', 'Source', 'Id', 'Subject', 'Payload', 'data.device.id'];

describe('results table in Chromium', () => {
  it('chooses columns and the order through the settings form, and expands a row, all without JavaScript', async () => {
    const context = await run.browser.newContext({ viewport: DESKTOP, javaScriptEnabled: false });
    const page = await context.newPage();
    await page.goto(`${run.h.url}/events?range=all&limit=25`);
    expect(await headings(page)).toEqual(['Time', 'Severity', 'Type', 'Source', 'Id', 'Subject']);
    await page.getByText('Columns, order and time zone').click();
    await page.getByLabel('Severity column', { exact: true }).uncheck();
    await page.getByLabel('Payload (one line) column', { exact: true }).check();
    await page.getByLabel('Payload or extension column', { exact: true }).fill('data.device.id');
    await page.getByLabel('Order').selectOption('oldest');
    await page.getByRole('button', { name: 'Apply' }).click();
    await page.waitForURL(/sort=oldest/);
    expect(new URL(page.url()).searchParams.getAll('col')).toEqual([
      'time',
      'type',
      'source',
      'id',
      'subject',
      'summary',
      'data.device.id',
    ]);
    expect(await headings(page)).toEqual(CHOSEN);
    const first = await keyTimes(page);
    expect(first).toEqual([...first].sort());
    // The next page keeps the order and the columns.
    await page.getByRole('link', { name: 'Newer →' }).click();
    await page.waitForURL(/cursor=/);
    expect(await headings(page)).toEqual(CHOSEN);
    const second = await keyTimes(page);
    expect(second[0]! > first.at(-1)!).toBe(true);
    // One line per cell, the whole value on hover.
    const payload = page.locator(`${ROWS} td.cell`).nth(4);
    expect(await payload.getAttribute('title')).toMatch(/^\{".*"device": \{"id": "dev-\d+"\}/);
    // The tests compile without the DOM's library: the browser's global, typed for this one use.
    type Styles = { getComputedStyle(e: unknown): { textOverflow: string } };
    const overflow = await payload.evaluate(
      (td) => (globalThis as unknown as Styles).getComputedStyle(td).textOverflow,
    );
    expect(overflow).toBe('ellipsis');
    expect(await payload.evaluate((td) => td.scrollHeight <= td.clientHeight + 1)).toBe(true);
    // The row's event inline: its values by path, then its JSON.
    const expand = page.locator('tr.expand').first();
    expect(await expand.isVisible()).toBe(false);
    await page.locator(`${ROWS} details.toggle > summary`).first().click();
    const id = await page.locator(ROWS).first().locator('td.cell').nth(2).textContent();
    await expand.locator('table.values th', { hasText: /^data\.device\.id Copy$/ }).waitFor();
    await expand.getByText('JSON', { exact: true }).click();
    const json = JSON.parse((await expand.locator('pre').textContent()) ?? '') as { id: string };
    expect(json.id).toBe(id);
    // The copy buttons need JavaScript (the clipboard): hidden without it.
    expect(await expand.getByRole('button', { name: 'Copy the path data.device.id' }).count()).toBe(0);
    // Back to newest first with the link beside the table.
    await page.getByRole('link', { name: 'show newest first' }).click();
    await page.waitForURL(
      (url) => url.searchParams.get('sort') === 'newest' && !url.searchParams.has('cursor'),
    );
    const newest = await keyTimes(page);
    expect(newest).toEqual([...newest].sort().reverse());
    await context.close();
  });

  it("rewrites the times to the browser's time zone with tz=browser, keeps UTC without it, and copies a value", async () => {
    const context = await run.browser.newContext({
      viewport: DESKTOP,
      timezoneId: 'Asia/Kolkata',
      permissions: ['clipboard-read', 'clipboard-write'],
    });
    const page = await context.newPage();
    await page.goto(`${run.h.url}/events?range=all&id=seed-7&tz=browser`);
    const time = page.locator(`${ROWS} time`).first();
    await expect.poll(() => time.textContent()).toMatch(/ \+05:30$/);
    const iso = (await time.getAttribute('datetime'))!;
    const local = new Date(new Date(iso).getTime() + 5.5 * 3_600_000).toISOString();
    expect(await time.textContent()).toBe(`${local.slice(0, 10)} ${local.slice(11, 23)} +05:30`);
    expect(await time.getAttribute('title')).toBe(`${iso.slice(0, 10)} ${iso.slice(11, 23)} UTC`);
    await page.goto(`${run.h.url}/events?range=all&id=seed-7`);
    // With JavaScript, each path and value of the expanded event has its copy button.
    await page.locator(`${ROWS} details.toggle > summary`).first().click();
    const copy = page.getByRole('button', { name: 'Copy the value of data.device.id' });
    await copy.click();
    expect(await page.evaluate('navigator.clipboard.readText()')).toBe('dev-7');
    expect(await page.locator(`${ROWS} time`).first().textContent()).toBe(
      `${iso.slice(0, 10)} ${iso.slice(11, 23)}`,
    );
    await context.close();
  });

  it('keeps each row one line high, the expand toggle in its time cell: a 1440x900 screen holds twice the rows it did', async () => {
    const context = await run.browser.newContext({ viewport: DESKTOP });
    const page = await context.newPage();
    await page.goto(`${run.h.url}/events?range=all`);
    const rows = page.locator(ROWS);
    const heights = await rows.evaluateAll((trs) => trs.map((tr) => tr.getBoundingClientRect().height));
    const line = await page
      .locator(`${ROWS} td.cell`)
      .first()
      .evaluate((td) => td.getBoundingClientRect().height);
    expect(Math.max(...heights)).toBeLessThanOrEqual(line + 1);
    // The rows one screen holds, from the table's first row (with the expand line under each, it held ABOVE_FOLD_BEFORE).
    const bottoms = await rows.evaluateAll((trs) => trs.map((tr) => tr.getBoundingClientRect().bottom));
    const top = await rows.first().evaluate((tr) => tr.getBoundingClientRect().top);
    const screenful = bottoms.filter((bottom) => bottom - top <= DESKTOP.height).length;
    expect(screenful).toBeGreaterThanOrEqual(2 * ABOVE_FOLD_BEFORE);
    // Opening one shows its event under it; the next row follows.
    await page.locator(`${ROWS} details.toggle > summary`).first().click();
    expect(await page.locator('tr.expand').first().isVisible()).toBe(true);
    expect(await page.locator('tr.expand').nth(1).isVisible()).toBe(false);
    await context.close();
  });

  for (const [name, viewport] of [
    ['1440x900', DESKTOP],
    ['375x812', PHONE],
  ] as const) {
    it(`passes axe-core with the settings and a row open, without sideways scrolling, at ${name}`, async () => {
      const context = await run.browser.newContext({
        viewport,
        bypassCSP: true,
        isMobile: viewport === PHONE,
      });
      const page = await context.newPage();
      await page.goto(
        `${run.h.url}/events?range=all&limit=25&col=type&col=summary&col=data.device.id&col=ext.region&tz=browser`,
      );
      await page.getByText('Columns, order and time zone').click();
      await page.locator(`${ROWS} details.toggle > summary`).first().click();
      await page.locator('tr.expand').first().getByText('JSON', { exact: true }).click();
      expect(await page.locator('tr.expand pre').first().isVisible()).toBe(true);
      expect(await axeViolations(page)).toEqual([]);
      // Against the viewport's width: a mobile browser widens innerWidth to a page that overflows.
      expect(await page.evaluate('document.documentElement.scrollWidth')).toBeLessThanOrEqual(viewport.width);
      expect(await page.evaluate('window.innerWidth')).toBe(viewport.width);
      await context.close();
    });
  }
});
