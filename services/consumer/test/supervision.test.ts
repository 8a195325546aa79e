/**
 * Stream supervision against a real broker: a dedicated Kafka is stopped until the stream fails,
 * started again, and the stream restarts by itself; stopped again for longer than the restart budget
 * allows, the stream stops for good while the process stays live. Small backoff and budget (the
 * spec's 1 s..30 s and 50 restarts in 10 minutes would take minutes).
 */
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { eventTopicSpec } from '@event-observatory/broker';
import { type KafkaHandle, startKafka, tempDataDir } from '@event-observatory/devstack';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Harness, metricSum, startHarness, testEvent, waitFor } from './harness.js';

let kafka: KafkaHandle;
let dir: string;
let h: Harness;
// Enough for the broker to come back on a loaded machine (each failed relaunch takes ~2 s).
const MAX_RESTARTS = 20;

beforeAll(async () => {
  dir = tempDataDir('consumer-supervision-');
  kafka = await startKafka({ dataDir: join(dir, 'kafka') });
  h = await startHarness('supervision', {
    bootstrapServers: kafka.bootstrapServers,
    restartPolicy: { minBackoffMs: 1_000, maxBackoffMs: 1_000, maxRestarts: MAX_RESTARTS, windowMs: 600_000 },
    env: { LAG_REQUEST_TIMEOUT: '1s', LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? 'error' },
  });
}, 120_000);

afterAll(async () => {
  await h?.close().catch(() => {});
  await kafka?.stop();
  rmSync(dir, { recursive: true, force: true });
});

const state = () => h.service.stream.status();

describe('stream supervision (dedicated broker)', () => {
  it('restarts the stream after a broker outage, and stops it for good once the budget is used up', async () => {
    expect(eventTopicSpec(h.topic).partitions).toBe(12);
    await h.publish(Array.from({ length: 10 }, (_, i) => testEvent(i, { source: 'urn:test:before' })));
    await waitFor('10 rows', async () => (await h.count()) === 10);
    expect(state().state).toBe('running');

    // Outage long enough for the stream to fail (kafkajs gives up its retries and crashes).
    await kafka.stop();
    await waitFor('a stream failure', () => state().restartsInWindow >= 1, 60_000);
    expect(state().lastError).toBeTruthy();
    await kafka.start();
    await waitFor('the stream running again', () => state().state === 'running', 60_000);
    const usedByFirstOutage = state().restartsInWindow;
    expect(usedByFirstOutage).toBeGreaterThanOrEqual(1);
    expect(usedByFirstOutage).toBeLessThan(MAX_RESTARTS);
    await h.publish(Array.from({ length: 10 }, (_, i) => testEvent(i, { source: 'urn:test:after' })));
    await waitFor('rows published after the restart', async () => (await h.count()) === 20, 180_000);

    // Down for longer than the remaining budget: each relaunch fails, the last one stops the stream.
    await kafka.stop();
    await waitFor('the stream stopped for good', () => state().state === 'failed', 90_000);
    expect(state().restartsInWindow).toBe(MAX_RESTARTS);
    const live = await h.request('/health/live', { token: null });
    expect(live.status).toBe(200);

    // The broker returns, but nothing restarts a failed stream (only an operator's :start would).
    await kafka.start();
    await h.publish([testEvent(99, { source: 'urn:test:unseen' })]);
    await new Promise((r) => setTimeout(r, 3_000));
    expect(state().state).toBe('failed');
    expect(await h.count("ce_source = 'urn:test:unseen'")).toBe(0);
    // Only lag shows a stream stopped for good (spec): consume_running keeps reporting 1.
    await waitFor('consume_running 1', async () => (await metricSum(h, 'consume_running')) === 1, 10_000);
    expect((await h.request('/health/live', { token: null })).status).toBe(200);
  }, 360_000);
});
