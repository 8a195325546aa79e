/**
 * Chromium for the browser tests: Debian's binary (scripts/install-chromium.sh installs it; the
 * search workspace's `npm test` runs that first), driven by playwright-core. CHROMIUM_PATH points
 * elsewhere where Playwright's own browsers exist.
 */
import { type Browser, chromium } from 'playwright-core';

export const CHROMIUM_PATH = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

export function launchChromium(): Promise<Browser> {
  // As root (CI containers, this machine) Chromium's sandbox refuses to start.
  return chromium.launch({ executablePath: CHROMIUM_PATH, args: ['--no-sandbox'] });
}
