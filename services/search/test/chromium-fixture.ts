/**
 * A browser test file's fixture: its search harness and a Chromium, started side by side before the
 * file's tests and closed after them.
 */
import { launchChromium } from '@event-observatory/devstack/chromium';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll } from 'vitest';
import type { Harness } from './harness.js';

export interface ChromiumRun {
  readonly h: Harness;
  readonly browser: Browser;
}

/** Registers the file's `beforeAll`/`afterAll`; the fields are set once `beforeAll` has run. */
export function withChromium(start: () => Promise<Harness>): ChromiumRun {
  const run = {} as { h: Harness; browser: Browser };
  beforeAll(async () => {
    [run.h, run.browser] = await Promise.all([start(), launchChromium()]);
  });
  afterAll(async () => {
    await run.browser?.close();
    await run.h?.close();
  });
  return run;
}
