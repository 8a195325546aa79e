/**
 * The live tail in Chromium: an event published through the ingestion service (HTTP -> Kafka ->
 * consumer -> store) appears on an open search page without a reload.
 */
import { randomUUID } from 'node:crypto';
import { launchChromium } from '@event-observatory/devstack/chromium';
import { createSearchService, DEFAULT_ALLOWED_HOSTS } from '@event-observatory/search';
import { createMetrics, serveApp } from '@event-observatory/service-kit';
import { migrate } from '@event-observatory/store';
import type { Browser } from 'playwright-core';
import type { Registry } from 'prom-client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createPipelineTopics,
  createSuiteDatabase,
  startConsumer,
  startIngest,
} from '../support/services.js';

const AUTH_SECRET = 'e2e-tail-auth-secret-0123456789abcdef';
const id = randomUUID().slice(0, 8);
const topic = `e2e.tail.${id}`;
let searchUrl: string;
let searchRegistry: Registry;
let browser: Browser;
let ingestUrl: string;
let token: string;
const closers: (() => Promise<unknown>)[] = [];

beforeAll(async () => {
  await createPipelineTopics(topic);
  const databaseUrl = await createSuiteDatabase(`e2e_tail_${id}`);
  await migrate({ url: databaseUrl });

  // The search service, built by the factory its own main uses.
  searchRegistry = createMetrics({ service: 'search', version: 'test' }).registry;
  const search = createSearchService({
    config: {
      allowedHosts: DEFAULT_ALLOWED_HOSTS.split(','),
      secret: 'e2e-tail-cursor-secret-0123456789abcdef',
    },
    databaseUrl,
    registry: searchRegistry,
    tailPollMs: 250,
  });
  const searchServer = await serveApp(search.app, { host: '127.0.0.1', port: 0, drainMs: 1_000 });
  searchUrl = searchServer.url;
  browser = await launchChromium();
  closers.push(
    async () => {
      search.endTails();
      await searchServer.close();
      await search.close();
    },
    () => browser.close(),
  );

  const consumer = await startConsumer({ topic, databaseUrl, group: `e2e-tail-${id}` });
  closers.unshift(() => consumer.close());
  const ingest = await startIngest({ topic, secret: AUTH_SECRET });
  closers.unshift(() => ingest.close());
  ({ url: ingestUrl, token } = ingest);
});

async function metric(line: RegExp): Promise<number | undefined> {
  const found = (await searchRegistry.metrics()).split('\n').find((l) => line.test(l));
  return found === undefined ? undefined : Number(found.slice(found.lastIndexOf(' ') + 1));
}

afterAll(async () => {
  for (const close of closers) await close().catch(() => {});
});

describe('live tail', () => {
  it('shows an event published through the ingestion service without a reload', async () => {
    const source = `urn:tail:${id}`;
    const page = await browser.newPage();
    await page.goto(`${searchUrl}/events?${new URLSearchParams({ source })}`);
    expect(await page.getByRole('status').filter({ hasText: 'Matching events' }).textContent()).toBe(
      'Matching events: 0',
    );
    await page.getByRole('button', { name: 'Start live tail' }).click();
    await page.waitForFunction(
      "document.querySelector('[data-status]')?.textContent?.startsWith('Live tail running')",
    );
    // Let the stream take its starting position before the event exists.
    await expect.poll(() => metric(/^tail_connections\{/), { timeout: 10_000 }).toBe(1);

    const res = await fetch(`${ingestUrl}/v1/events`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/cloudevents+json' },
      body: JSON.stringify({
        specversion: '1.0',
        id: `tail-${id}`,
        source,
        type: 'com.example.tail.arrived',
        time: new Date().toISOString(),
        subject: 'boiler-7',
        data: { severity: 'error', message: 'pressure high' },
      }),
    });
    expect(res.status).toBe(200);
    const item = page.locator('ol.tail li', { hasText: 'com.example.tail.arrived' });
    await item.waitFor({ timeout: 60_000 });
    // Each row names the event by its source and CloudEvents id (what its producer knows).
    expect(await item.textContent()).toContain(`${source} tail-${id} boiler-7 [error]`);
    // Nothing else matched, and the page was never reloaded (the count still reads 0).
    expect(await page.locator('ol.tail li').count()).toBe(1);
    expect(await page.getByRole('status').filter({ hasText: 'Matching events' }).textContent()).toBe(
      'Matching events: 0',
    );
    expect(await metric(/^tail_events_delivered_total\{/)).toBe(1);
    await page.close();
  });
});
