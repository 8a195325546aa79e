/**
 * The OIDC login in Chromium (playwright-core): a page sends the browser to the devstack's OpenID
 * provider, its form signs Alice in, the page shows her in the header; the logout button ends the
 * session here and at the provider, and the next page asks for a login again.
 */

import type { OidcIssuer } from '@event-observatory/devstack';
import { launchChromium } from '@event-observatory/devstack/chromium';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { axeViolations } from './axe.js';
import type { Harness } from './harness.js';
import { SESSION_COOKIE } from './login-client.js';
import { startOidcHarness } from './oidc-harness.js';

let idp: OidcIssuer;
let h: Harness;
let browser: Browser;
let page: Page;

beforeAll(async () => {
  [{ idp, h }, browser] = await Promise.all([
    startOidcHarness('login_browser', 'login-browser-session-secret-0123456789'),
    launchChromium(),
  ]);
  page = await browser.newPage();
});

afterAll(async () => {
  await browser?.close();
  await h?.close();
  await idp?.close();
});

async function signIn(user: string, password: string): Promise<void> {
  await page.waitForURL(new RegExp(`^${idp.issuer}/interaction/`));
  await page.getByLabel('User name').fill(user);
  await page.getByLabel('Password').fill(password);
  await page.getByRole('button', { name: 'Sign in' }).click();
}

describe('OIDC login in Chromium', () => {
  it('logs Alice in at the provider and back to the page she opened', async () => {
    await page.goto(`${h.url}/events?range=24h`);
    await signIn('alice', 'alice-password');
    await page.waitForURL(`${h.url}/events?range=24h`);
    const header = page.locator('header .viewer');
    await expect(header.locator('.viewer-name').textContent()).resolves.toBe('Alice');
    await expect(header.locator('.viewer-groups').textContent()).resolves.toBe('groups: team-a');
    const cookies = await page.context().cookies(h.url);
    // Secure without SEARCH_PUBLIC_URL, and Chromium keeps it on http://127.0.0.1 (a loopback
    // origin), as on a port-forward to localhost.
    const session = cookies.find((c) => c.name === SESSION_COOKIE);
    expect(session).toMatchObject({ httpOnly: true, sameSite: 'Lax', secure: true, path: '/' });
  });

  it('logs out here and at the provider; the next page asks for a login again', async () => {
    await page.getByRole('button', { name: 'Log out' }).click();
    // The provider asks to confirm ending its own session, then returns to the site.
    await page.getByRole('button', { name: /sign me out/i }).click();
    await signIn('bob', 'bob-password');
    await page.waitForURL(`${h.url}/`);
    await expect(page.locator('header .viewer-name').textContent()).resolves.toBe('Bob');
  });

  it('keeps the header with the viewer accessible (axe-core, dark and light) and within a phone screen', async () => {
    // Same session (the context's cookies); CSP bypassed so axe can be injected.
    const context = await browser.newContext({
      bypassCSP: true,
      storageState: await page.context().storageState(),
    });
    const checked = await context.newPage();
    for (const scheme of ['dark', 'light'] as const) {
      await checked.emulateMedia({ colorScheme: scheme });
      await checked.goto(`${h.url}/events`);
      await expect(checked.locator('header .viewer-name').textContent()).resolves.toBe('Bob');
      expect(await axeViolations(checked), scheme).toEqual([]);
    }
    await checked.setViewportSize({ width: 375, height: 740 });
    await checked.goto(`${h.url}/events`);
    expect(
      await checked.evaluate('document.documentElement.scrollWidth - window.innerWidth'),
    ).toBeLessThanOrEqual(0);
    await context.close();
  });
});
