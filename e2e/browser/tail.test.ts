/**
 * The live tail in Chromium: an event published through the ingestion service (HTTP -> Kafka ->
 * consumer -> store) appears on an open search page without a reload.
 */
import { randomUUID } from 'node:crypto';
import { brokerTopics, ensureTopics, producerConfig, topicSpecs } from '@event-observatory/broker';
import { createConsumerService, readConsumerConfig } from '@event-observatory/consumer';
import { createDatabase } from '@event-observatory/devstack';
import { launchChromium } from '@event-observatory/devstack/chromium';
import { createIngestService, readIngestConfig } from '@event-observatory/ingest';
import { createSearchService, DEFAULT_ALLOWED_HOSTS } from '@event-observatory/search';
import { authConfigFromEnv, signDevToken } from '@event-observatory/service-kit/auth';
import { createLogger } from '@event-observatory/service-kit/logger';
import { createMetrics } from '@event-observatory/service-kit/metrics';
import { serveApp } from '@event-observatory/service-kit/server';
import { migrate } from '@event-observatory/store';
import { Kafka, logLevel } from 'kafkajs';
import type { Browser } from 'playwright-core';
import type { Registry } from 'prom-client';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';

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
  const stack = inject('stack');
  const kafka = new Kafka({
    clientId: 'e2e-tail',
    brokers: [stack.bootstrapServers],
    logLevel: logLevel.NOTHING,
  });
  const admin = kafka.admin();
  await admin.connect();
  await ensureTopics(admin, topicSpecs(brokerTopics({ topic })));
  await admin.disconnect();
  const databaseUrl = await createDatabase(stack.databaseUrl, `e2e_tail_${id}`);
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

  const consumer = await createConsumerService({
    config: readConsumerConfig({
      BROKER_BOOTSTRAP_SERVERS: stack.bootstrapServers,
      BROKER_TOPIC: topic,
      BROKER_GROUP_ID: `e2e-tail-${id}`,
      CONSUMER_BATCH_WINDOW: '50ms',
      LOG_LEVEL: 'error',
    }),
    databaseUrl,
    auth: { enabled: false },
    registry: createMetrics({ service: 'consumer', version: 'test' }).registry,
    logger: createLogger({ service: 'consumer', level: 'error' }),
  });
  await consumer.start();
  closers.unshift(() => consumer.close());

  // The ingestion service, built by the factory its own main uses.
  const ingest = await createIngestService({
    config: readIngestConfig({ SERVICE_VERSION: 'test' }),
    broker: producerConfig({ bootstrapServers: [stack.bootstrapServers], topic }),
    auth: authConfigFromEnv({ AUTH_SECRET }, { defaultScope: 'events:write' }),
    registry: createMetrics({ service: 'ingest', version: 'test' }).registry,
    logger: createLogger({ service: 'ingest', level: 'error' }),
  });
  const server = await serveApp(ingest.app, { host: '127.0.0.1', port: 0, drainMs: 1_000 });
  closers.unshift(
    () => server.close(),
    () => ingest.close(),
  );
  ingestUrl = server.url;
  token = await signDevToken({ secret: AUTH_SECRET, scopes: ['events:write'] });
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
    expect(await item.textContent()).toContain(`${source} boiler-7 [error]`);
    // Nothing else matched, and the page was never reloaded (the count still reads 0).
    expect(await page.locator('ol.tail li').count()).toBe(1);
    expect(await page.getByRole('status').filter({ hasText: 'Matching events' }).textContent()).toBe(
      'Matching events: 0',
    );
    expect(await metric(/^tail_events_delivered_total\{/)).toBe(1);
    await page.close();
  });
});
