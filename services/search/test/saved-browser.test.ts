/**
 * Pills and saved searches in Chromium, logged in through the local login (a session, so every
 * form carries its token): a filter switched off, on again and removed through its pill; a search
 * saved under a name, opened from the list and deleted; the same without JavaScript; axe-core clean
 * on both pages (dark and light) and no sideways scrolling at phone width.
 */
import type { BrowserContext, Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { axeViolations } from './axe.js';
import { withChromium } from './chromium-fixture.js';
import { startLocalHarness } from './local-harness.js';

const PASSWORD = 'saved-browser password';
const SEARCH = '/events?range=7d&type=com.example.t3&severity=error';

const run = withChromium(() => startLocalHarness('saved_browser', PASSWORD, { seed: 400 }));

/** A page of a new context logged in as admin (`javaScriptEnabled: false`: without scripts). */
async function loggedIn(opts: { javaScriptEnabled?: boolean; bypassCSP?: boolean } = {}): Promise<Page> {
  const context: BrowserContext = await run.browser.newContext(opts);
  const page = await context.newPage();
  await page.goto(`${run.h.url}/login`);
  await page.getByLabel('User name').fill('admin');
  await page.getByLabel('Password').fill(PASSWORD);
  await page.getByRole('button', { name: /log in/i }).click();
  await page.waitForURL(`${run.h.url}/`);
  return page;
}

const pillTexts = (page: Page) => page.locator('li.pill').allTextContents();

describe.each([true, false])('with JavaScript %s', (javaScriptEnabled) => {
  it('switches a filter off and on through its pill, then removes it', async () => {
    const page = await loggedIn({ javaScriptEnabled });
    await page.goto(`${run.h.url}${SEARCH}`);
    expect(await pillTexts(page)).toEqual([
      expect.stringContaining('type: com.example.t3'),
      expect.stringContaining('severity at least: error'),
    ]);
    const before = await page.getByRole('status').first().textContent();
    await page.getByRole('link', { name: 'Disable severity at least: error' }).click();
    await page.waitForURL(/off_severity=error/);
    expect(await page.locator('li.pill.off').textContent()).toContain('(off)');
    // Off, the severity no longer narrows the search.
    expect(await page.getByRole('status').first().textContent()).not.toBe(before);
    await page.getByRole('link', { name: 'Enable severity at least: error' }).click();
    await page.waitForURL(
      (url) => url.searchParams.get('severity') === 'error' && !url.search.includes('off_'),
    );
    await page.getByRole('link', { name: 'Remove type: com.example.t3' }).click();
    await page.waitForURL((url) => !url.searchParams.has('type'));
    expect(await pillTexts(page)).toEqual([expect.stringContaining('severity at least: error')]);
    await page.context().close();
  });

  it('saves the search under a name, opens it from the list, and deletes it', async () => {
    const page = await loggedIn({ javaScriptEnabled });
    const name = `errors of t3 (${javaScriptEnabled ? 'js' : 'no js'})`;
    await page.goto(`${run.h.url}${SEARCH}&off_source=urn:seed:source-1`);
    await page.getByText('Save this search', { exact: true }).click();
    await page.getByLabel('Save these filters as').fill(name);
    await page.getByRole('button', { name: 'Save', exact: true }).click();
    await page.waitForURL(`${run.h.url}/saved`);
    await page.getByRole('link', { name }).click();
    await page.waitForURL(`${run.h.url}${SEARCH}&off_source=urn%3Aseed%3Asource-1`);
    expect(await pillTexts(page)).toHaveLength(3);
    await page.getByRole('link', { name: 'Saved searches' }).first().click();
    await page.getByRole('button', { name: `Delete ${name}` }).click();
    await page.waitForURL(`${run.h.url}/saved`);
    expect(await page.getByRole('link', { name }).count()).toBe(0);
    await page.context().close();
  });
});

describe('accessibility', () => {
  it('passes axe-core on the search page with pills and on the saved searches (dark and light), within a phone screen', async () => {
    // CSP bypassed so axe can be injected.
    const page = await loggedIn({ bypassCSP: true });
    await page.goto(`${run.h.url}${SEARCH}&off_source=urn:seed:source-1`);
    await page.getByText('Save this search', { exact: true }).click();
    await page.getByLabel('Save these filters as').fill('for axe');
    await page.getByRole('button', { name: 'Save', exact: true }).click();
    await page.waitForURL(`${run.h.url}/saved`);
    for (const path of [`${SEARCH}&off_source=urn:seed:source-1`, '/saved'])
      for (const scheme of ['dark', 'light'] as const) {
        await page.emulateMedia({ colorScheme: scheme });
        await page.goto(`${run.h.url}${path}`);
        expect(await axeViolations(page), `${path} ${scheme}`).toEqual([]);
      }
    await page.setViewportSize({ width: 375, height: 740 });
    for (const path of [SEARCH, '/saved']) {
      await page.goto(`${run.h.url}${path}`);
      expect(
        await page.evaluate('document.documentElement.scrollWidth - window.innerWidth'),
        path,
      ).toBeLessThanOrEqual(0);
    }
    await page.context().close();
  });
});
