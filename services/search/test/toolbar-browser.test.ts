/**
 * The time toolbar in Chromium (playwright-core): earlier, later and zoom-out links and the
 * calendar without JavaScript, each keeping the rest of the search; the calendar in the browser's
 * time zone; auto-refresh reloading only the results with JavaScript, a meta refresh without it,
 * and none on a range that has ended; axe-core clean with the calendar open. The query bar's
 * autocomplete: the facets' names rendered into its datalist, completions fetched while typing.
 */
import { seedEvents } from '@event-observatory/devstack';
import type { Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { axeViolations } from './axe.js';
import { withChromium } from './chromium-fixture.js';
import { startHarness } from './harness.js';

const DESKTOP = { width: 1440, height: 900 };
const H = 3_600_000;

const run = withChromium(() => startHarness('toolbar', { seed: 300 }));

const span = (url: string) => {
  const p = new URL(url).searchParams;
  return new Date(p.get('to')!).getTime() - new Date(p.get('from')!).getTime();
};

describe('time toolbar in Chromium', () => {
  it('steps earlier, later and out, and sets From/To with the calendar, all without JavaScript', async () => {
    const context = await run.browser.newContext({ viewport: DESKTOP, javaScriptEnabled: false });
    const page = await context.newPage();
    await page.goto(`${run.h.url}/events?range=24h&type=com.example.t3&sort=oldest&col=type&refresh=30s`);
    // The range searched is shown beside the bar, and the whole page reloads without scripts.
    expect(await page.locator('#range-shown').textContent()).toMatch(/^\d{4}-.* to \d{4}-.* UTC$/);
    expect(await page.locator('head noscript').innerHTML()).toBe('<meta http-equiv="refresh" content="30">');
    expect(await page.getByRole('link', { name: 'Later →' }).count()).toBe(0);
    await page.getByRole('link', { name: '← Earlier' }).click();
    await page.waitForURL(/from=/);
    const earlier = new URL(page.url()).searchParams;
    expect(earlier.get('type')).toBe('com.example.t3');
    expect(earlier.get('sort')).toBe('oldest');
    expect(earlier.get('col')).toBe('type');
    expect(earlier.has('range')).toBe(false);
    expect(span(page.url())).toBe(24 * H);
    // The time picker beside the bar names the absolute range; the range has ended: no reload.
    expect(await page.locator('#f-range option:checked').textContent()).toMatch(
      /^\d{4}-\d\d-\d\d \d\d:\d\d to .* UTC$/,
    );
    expect(await page.locator('head noscript').count()).toBe(0);
    expect(await page.locator('#f-refresh-ended').textContent()).toContain('the range has ended');
    await page.getByRole('link', { name: 'Later →' }).click();
    await page.waitForURL((url) => url.searchParams.get('from') !== earlier.get('from'));
    expect(new URL(page.url()).searchParams.get('from')).toBe(earlier.get('to'));
    await page.getByRole('link', { name: 'Zoom out' }).click();
    await page.waitForURL((url) => span(url.href) === 48 * H);
    expect(new URL(page.url()).searchParams.get('type')).toBe('com.example.t3');
    // The calendar: absolute From/To in UTC, the rest of the search kept.
    await page.getByText('Calendar', { exact: true }).click();
    await page.getByLabel('Start (UTC)').fill('2026-01-02T03:04:05');
    await page.getByLabel('End (UTC)').fill('2026-01-03T03:04:05');
    await page.getByRole('button', { name: 'Show' }).click();
    await page.waitForURL(/from=2026-01-02T03%3A04%3A05/);
    const chosen = new URL(page.url()).searchParams;
    expect(chosen.get('to')).toBe('2026-01-03T03:04:05');
    expect(chosen.get('type')).toBe('com.example.t3');
    expect(chosen.get('col')).toBe('type');
    // Auto-refresh through its form, kept in the URL.
    await page.goto(`${run.h.url}/events?range=1h&type=com.example.t3`);
    await page.getByRole('combobox', { name: 'Auto-refresh' }).selectOption('1m');
    await page.getByRole('button', { name: 'Set' }).click();
    await page.waitForURL(/refresh=1m/);
    expect(new URL(page.url()).searchParams.get('type')).toBe('com.example.t3');
    expect(await page.locator('head noscript').innerHTML()).toContain('content="60"');
    // The table's settings keep it.
    await page.getByText('Columns, order and time zone').click();
    await page.getByLabel('Order').selectOption('oldest');
    await page.getByRole('button', { name: 'Apply' }).click();
    await page.waitForURL(/sort=oldest/);
    expect(new URL(page.url()).searchParams.get('refresh')).toBe('1m');
    await context.close();
  });

  it("shows the calendar in the browser's time zone and sends UTC", async () => {
    const context = await run.browser.newContext({ viewport: DESKTOP, timezoneId: 'Asia/Kolkata' });
    const page = await context.newPage();
    await page.goto(`${run.h.url}/events?from=2026-01-02T03:00Z&to=2026-01-02T04:00Z&tz=browser`);
    await page.getByText('Calendar', { exact: true }).click();
    const from = page.getByLabel('Start (your time zone)');
    expect(await from.inputValue()).toBe('2026-01-02T08:30');
    await expect.poll(() => page.locator('#range-shown').textContent()).toMatch(/08:30:00\.000 \+05:30 to/);
    await from.fill('2026-01-02T07:30:00');
    await page.getByRole('button', { name: 'Show' }).click();
    await page.waitForURL(/from=2026-01-02T02%3A00%3A00\.000Z/);
    expect(new URL(page.url()).searchParams.get('tz')).toBe('browser');
    await context.close();
  });

  it('reloads only the results with JavaScript, and passes axe-core with the calendar open', async () => {
    const context = await run.browser.newContext({ viewport: DESKTOP, bypassCSP: true });
    const page = await context.newPage();
    await page.goto(`${run.h.url}/events?range=1h&refresh=10s&id=fresh-1`);
    await page.getByText('Calendar', { exact: true }).click();
    expect(await axeViolations(page)).toEqual([]);
    expect(await page.getByText('No events match these filters.').count()).toBe(1);
    await page.getByRole('combobox', { name: 'Query' }).fill('typed meanwhile');
    await seedEvents(run.h.db, { count: 1, spanMs: 1000, end: new Date(), idPrefix: 'fresh' });
    await page
      .locator('section[aria-labelledby="results"] tbody tr.event')
      .first()
      .waitFor({ timeout: 30_000 });
    // The page itself stayed: what was typed, the open calendar.
    expect(await page.getByRole('combobox', { name: 'Query' }).inputValue()).toBe('typed meanwhile');
    expect(await page.locator('details.calendar').getAttribute('open')).toBe('');
    await context.close();
  });
});

describe('query bar autocomplete in Chromium', () => {
  const options = (page: Page) =>
    page.locator('#bar-suggestions option').evaluateAll((os) => os.map((o) => o.getAttribute('value')));

  it('renders the facets as suggestions without JavaScript, and completes the last term while typing with it', async () => {
    const plain = await run.browser.newContext({ viewport: DESKTOP, javaScriptEnabled: false });
    const still = await plain.newPage();
    await still.goto(`${run.h.url}/events?range=all&severity=warning`);
    expect(await still.getByRole('combobox', { name: 'Query' }).getAttribute('list')).toBe('bar-suggestions');
    expect(await options(still)).toContain('severity>=warning type:com.example.t1');
    await plain.close();
    const context = await run.browser.newContext({ viewport: DESKTOP });
    const page = await context.newPage();
    await page.goto(`${run.h.url}/events?range=all`);
    await page.getByRole('combobox', { name: 'Query' }).fill('severity>=error type:com.example.t1');
    await expect.poll(() => options(page)).toContain('severity>=error type:com.example.t10');
    expect((await options(page)).every((o) => o?.startsWith('severity>=error type:com.example.t1'))).toBe(
      true,
    );
    await page.getByRole('combobox', { name: 'Query' }).fill('severity>=er');
    await expect.poll(() => options(page)).toEqual(['severity>=error']);
    await context.close();
  });
});
