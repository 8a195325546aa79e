/**
 * Chromium for the browser tests: Debian's binary (`scripts/install/chromium.sh` installs it; the
 * suites that use it run that script first), driven by playwright-core. `CHROMIUM_PATH` points
 * elsewhere where Playwright's own browsers exist.
 */
import { type Browser, chromium } from 'playwright-core';

export const CHROMIUM_PATH = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

/**
 * A headless Chromium that talks only to the pages it is sent to: no component updates, sync,
 * field trials or other background requests (this machine's network reaches nothing else, and
 * tests must not try).
 *
 * @example
 * const browser = await launchChromium();
 * const page = await browser.newPage();
 */
export function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM_PATH,
    args: [
      // As root (CI containers, this machine) Chromium's sandbox refuses to start.
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      '--disable-default-apps',
      '--disable-domain-reliability',
      '--metrics-recording-only',
    ],
  });
}
