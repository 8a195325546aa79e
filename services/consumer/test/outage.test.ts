import { rmSync } from 'node:fs';
import { type PostgresHandle, startPostgres, tempDataDir } from '@event-observatory/devstack';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DlqDepth } from '../src/dlq/admin.js';
import { type Harness, metricSum, startHarness, testEvent, waitFor } from './harness.js';

let pg: PostgresHandle;
let dir: string;
let h: Harness;

beforeAll(async () => {
  dir = tempDataDir('consumer-outage-');
  pg = await startPostgres({ dataDir: dir });
  h = await startHarness('outage', { databaseAdminUrl: pg.url });
});

afterAll(async () => {
  await h?.close().catch(() => {});
  await pg?.stop();
  rmSync(dir, { recursive: true, force: true });
});

async function committedTotal(): Promise<bigint> {
  const admin = h.kafka.admin();
  await admin.connect();
  try {
    const [t] = await admin.fetchOffsets({ groupId: h.groupId, topics: [h.topic] });
    return t!.partitions.reduce((s, p) => s + (p.offset === '-1' ? 0n : BigInt(p.offset)), 0n);
  } finally {
    await admin.disconnect();
  }
}

describe('database outage', () => {
  it('stalls without dead letters or commits, then catches up when the database returns', async () => {
    await h.publish(Array.from({ length: 20 }, (_, i) => testEvent(i, { source: 'urn:test:before' })));
    await waitFor('20 rows', async () => (await h.count()) === 20);
    // Rows become visible before their offsets are committed (commit after the durable write).
    await waitFor('their offsets committed', async () => (await committedTotal()) === 20n);
    const committedBefore = await committedTotal();

    await pg.stop();
    await h.publish(Array.from({ length: 30 }, (_, i) => testEvent(i, { source: 'urn:test:during' })));
    await new Promise((r) => setTimeout(r, 4_000));
    expect(await committedTotal()).toBe(committedBefore);
    expect(await metricSum(h, 'consume_records_poison_total')).toBe(0);
    const ready = await h.request('/health/ready', { token: null });
    expect(ready.status).toBe(503);
    expect(await ready.json()).toMatchObject({
      status: 'DOWN',
      broker: 'UP',
      database: expect.stringMatching(/^unreachable/),
    });

    await pg.start();
    await waitFor(
      '50 rows after the database returned',
      async () => (await h.count().catch(() => 0)) === 50,
      60_000,
    );
    await waitFor('all offsets committed', async () => (await committedTotal()) === committedBefore + 30n);
    expect(await metricSum(h, 'consume_records_poison_total')).toBe(0);
    const depth = (await (await h.request('/admin/dlq')).json()) as DlqDepth;
    expect(depth.depth).toBe(0);
  });
});
