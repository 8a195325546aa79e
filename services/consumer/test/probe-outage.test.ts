/**
 * The probe against a dedicated broker that goes away: `consume_running` turns NaN after three
 * missed reports (a tick whose group reading fails is no report) and `dlq_depth` reads NaN while
 * the broker is unreachable (a lifecycle command meanwhile does not refresh it); both come back
 * with the broker.
 */
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { type KafkaHandle, startKafka, tempDataDir } from '@event-observatory/devstack';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Harness, startHarness, waitFor } from './harness.js';

let kafka: KafkaHandle;
let dir: string;
let h: Harness;

beforeAll(async () => {
  dir = tempDataDir('consumer-probe-outage-');
  kafka = await startKafka({ dataDir: join(dir, 'kafka') });
  h = await startHarness('probe-outage', {
    bootstrapServers: kafka.bootstrapServers,
    restartPolicy: { minBackoffMs: 500, maxBackoffMs: 1_000 },
    env: { LAG_REFRESH_INTERVAL: '1s', LAG_REQUEST_TIMEOUT: '1s' },
  });
}, 120_000);

afterAll(async () => {
  await h?.close().catch(() => {});
  await kafka?.stop();
  rmSync(dir, { recursive: true, force: true });
});

describe('probe with the broker unreachable (dedicated broker)', () => {
  it('reports consume_running NaN after three missed ticks and dlq_depth NaN, then recovers', async () => {
    await waitFor('consume_running 1', async () => (await h.metric('consume_running')) === 1);
    await h.service.probe.tick();
    expect(await h.metric('dlq_depth')).toBe(0);

    // Ticks succeed every second up to here, so the last report is at most ~1 s older than this.
    const stopping = Date.now();
    await kafka.stop();
    await waitFor('dlq_depth NaN', async () => Number.isNaN(await h.metric('dlq_depth')), 20_000);
    await waitFor('consume_running NaN', async () => Number.isNaN(await h.metric('consume_running')), 20_000);
    // Not before three intervals (1 s each) have passed without a report. (Before the fix every
    // tick reported the local stream state first, so the gauge never turned NaN at all.)
    expect(Date.now() - stopping).toBeGreaterThanOrEqual(2_000);
    // A lifecycle command does not make the gauge fresh again while the broker is gone. (Stopping
    // also keeps the stream from rejoining once the broker is back: a rejoin, and a close during
    // one, waits out the crashed member's session.)
    const stop = await h.request('/admin/consumer:stop', { method: 'POST' });
    expect(stop.status).toBe(200);
    expect(((await stop.json()) as { consumer: { state: string } }).consumer.state).toBe('stopped');
    expect(await h.metric('consume_running')).toBeNaN();

    await kafka.start();
    await waitFor('dlq_depth readable', async () => (await h.metric('dlq_depth')) === 0, 60_000);
    await waitFor(
      'consume_running reported',
      async () => !Number.isNaN(await h.metric('consume_running')),
      60_000,
    );
  });
});
