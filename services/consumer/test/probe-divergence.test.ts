/**
 * The probe's `consume_checkpoint_divergence` against the real store: the checkpoints are read
 * after the group's committed offsets, so a write landing between the two reads is no divergence.
 * The broker side is scripted (the commit must land while its offsets are being fetched); the
 * checkpoints are real rows of a migrated database.
 */
import { randomUUID } from 'node:crypto';
import { createDatabase } from '@event-observatory/devstack';
import { createWritePool, type DatabasePool, migrate, upsertCheckpoints } from '@event-observatory/store';
import { Registry } from 'prom-client';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createConsumerMetrics } from '../src/metrics.js';
import { Probe, type ProbeOptions } from '../src/operations/probe.js';

let pool: DatabasePool;

beforeAll(async () => {
  const url = await createDatabase(inject('stack').databaseUrl, `probe_${randomUUID().slice(0, 8)}`);
  await migrate({ url });
  pool = createWritePool({ url, registry: new Registry() });
});
afterAll(async () => {
  await pool?.end();
});

describe('consume_checkpoint_divergence', () => {
  it('reads checkpoints after the committed offsets, so a commit between the reads is no divergence', async () => {
    const group = 'g';
    const topic = 't';
    await upsertCheckpoints(pool, group, [{ topic, partition: 0, nextOffset: '5' }]);
    // The consumer's order: the checkpoint's transaction, then the broker commit. Here both land
    // while the committed offsets are being fetched.
    const admin = {
      committedOffsets: async () => {
        await upsertCheckpoints(pool, group, [{ topic, partition: 0, nextOffset: '10' }]);
        return new Map([[0, 10n]]);
      },
      partitionRanges: async () => [{ partition: 0, high: '10', low: '0' }],
    } as unknown as ProbeOptions['admin'];
    const registry = new Registry();
    const probe = new Probe({
      admin,
      pool,
      metrics: createConsumerMetrics(registry),
      registry,
      groupId: group,
      topic,
      dlqTopic: 't.dlq',
      intervalMs: 20_000,
      requestTimeoutMs: 5_000,
      consuming: () => true,
    });
    await probe.tick();
    expect(await registry.metrics()).toMatch(/^consume_checkpoint_divergence 0$/m);
  });
});
