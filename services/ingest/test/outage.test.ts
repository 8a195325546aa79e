import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type KafkaHandle, startKafka } from '@event-observatory/devstack';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import {
  ceHeaders,
  createTopic,
  type Harness,
  readRecords,
  startHarness,
  uniqueTopic,
  waitFor,
} from './harness.js';
import { INGEST_BROKER_SETTINGS } from './kafka-setup.js';

const DELIVERY_TIMEOUT_MS = 3000;

async function send(
  h: Harness,
  id: string,
): Promise<{
  status: number;
  body: { error?: { status: string; details: { metadata: Record<string, string> }[] } };
  ms: number;
}> {
  const started = Date.now();
  const res = await fetch(`${h.url}/v1/events`, {
    method: 'POST',
    headers: { authorization: `Bearer ${h.token}`, ...ceHeaders(id, new Date().toISOString()) },
    body: `payload-${id}`,
  });
  return { status: res.status, body: (await res.json()) as never, ms: Date.now() - started };
}

interface BatchAnswer {
  status: number;
  body: {
    created: number;
    failed: number;
    entries: {
      index: number;
      event?: { id: string };
      error?: {
        code: number;
        status: string;
        details: { reason: string; metadata: Record<string, string> }[];
      };
    }[];
  };
  ms: number;
}

async function sendBatch(h: Harness, ids: string[]): Promise<BatchAnswer> {
  const time = new Date().toISOString();
  const started = Date.now();
  const res = await fetch(`${h.url}/v1/events:batchCreate`, {
    method: 'POST',
    headers: { authorization: `Bearer ${h.token}`, 'content-type': 'application/cloudevents-batch+json' },
    body: JSON.stringify(
      ids.map((id) => ({
        specversion: '1.0',
        id,
        source: 'https://example.com/sensors',
        type: 'com.example.reading',
        time,
      })),
    ),
  });
  return { status: res.status, body: (await res.json()) as never, ms: Date.now() - started };
}

// A broker of its own, stopped and started again by the test.
describe('broker outage (dedicated broker)', () => {
  let kafka: KafkaHandle;
  let dir: string;
  let h: Harness;
  const topic = uniqueTopic('ingest-outage');

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'ingest-outage-'));
    chmodSync(dir, 0o755);
    kafka = await startKafka({ dataDir: dir, settings: INGEST_BROKER_SETTINGS });
    await createTopic(kafka.bootstrapServers, topic, 3);
    h = await startHarness({
      bootstrapServers: kafka.bootstrapServers,
      topic,
      broker: {
        deliveryTimeoutMs: DELIVERY_TIMEOUT_MS,
        requestTimeoutMs: 1000,
        maxBlockMs: 1000,
        probeIntervalMs: 500,
      },
    });
  }, 240_000);
  afterAll(async () => {
    await h?.close();
    await kafka?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('sheds with 503 (every batch element too) within the delivery timeout, turns readiness 503, keeps liveness, recovers, loses no acknowledged event', async () => {
    const acknowledged: string[] = [];
    for (let i = 0; i < 5; i++) {
      const r = await send(h, `before-${i}`);
      expect(r.status).toBe(200);
      acknowledged.push(`before-${i}`);
    }
    await kafka.stop();

    const during = await Promise.all(Array.from({ length: 5 }, (_, i) => send(h, `during-${i}`)));
    for (const r of during) {
      if (r.status === 200) continue; // acknowledged just before the broker went away
      expect(r.status).toBe(503);
      expect(r.body.error?.status).toBe('UNAVAILABLE');
      expect(r.ms).toBeLessThanOrEqual(DELIVERY_TIMEOUT_MS + 1000);
    }
    during.forEach((r, i) => {
      if (r.status === 200) acknowledged.push(`during-${i}`);
    });
    expect(during.some((r) => r.status === 503)).toBe(true);

    // A batch is judged per element: every element is refused 503 inside a 200.
    const batch = await sendBatch(h, ['during-batch-0', 'during-batch-1', 'during-batch-2']);
    expect(batch.status).toBe(200);
    expect(batch.body).toMatchObject({ created: 0, failed: 3 });
    for (const entry of batch.body.entries) {
      expect(entry.error).toMatchObject({
        code: 503,
        status: 'UNAVAILABLE',
        details: [{ reason: 'unpersistable' }],
      });
    }
    expect(batch.ms).toBeLessThanOrEqual(DELIVERY_TIMEOUT_MS + 1000);

    const ready = await fetch(`${h.url}/health/ready`);
    expect(ready.status).toBe(503);
    expect(await ready.json()).toMatchObject({ broker: 'unreachable' });
    expect((await fetch(`${h.url}/health/live`)).status).toBe(200);

    await kafka.start();
    await waitFor(
      async () => ((await fetch(`${h.url}/health/ready`)).status === 200 ? true : undefined),
      60_000,
    );
    const after = await waitFor(async () => {
      const r = await send(h, 'after-0');
      return r.status === 200 ? r : undefined;
    }, 10_000);
    expect(after.status).toBe(200);
    acknowledged.push('after-0');

    const records = await readRecords(kafka.bootstrapServers, topic, (rs) => {
      const ids = new Set(rs.map((r) => r.headers.ce_id?.toString()));
      return acknowledged.every((id) => ids.has(id));
    });
    const ids = new Set(records.map((r) => r.headers.ce_id?.toString()));
    for (const id of acknowledged) expect(ids.has(id), `acknowledged ${id} is on the topic`).toBe(true);
  }, 150_000);
});

describe('queue full', () => {
  const { bootstrapServers } = inject('kafka');
  let h: Harness;
  const topic = uniqueTopic('ingest-queue');

  beforeAll(async () => {
    await createTopic(bootstrapServers, topic, 3);
    h = await startHarness({ bootstrapServers, topic, broker: { queueCapacity: 2 } });
  });
  afterAll(async () => {
    await h?.close();
  });

  // The event limit never exceeds the queue, so the overflow is refused by it, up front.
  it('answers 503 overloaded to requests beyond BROKER_QUEUE_CAPACITY and publishes none of them', async () => {
    const results = await Promise.all(Array.from({ length: 40 }, (_, i) => send(h, `q-${i}`)));
    const refused = results.flatMap((r, i) => (r.status === 503 ? [i] : []));
    const accepted = results.flatMap((r, i) => (r.status === 200 ? [i] : []));
    expect(refused.length).toBeGreaterThan(0);
    expect(accepted.length + refused.length).toBe(40);
    for (const i of refused) {
      expect(results[i]!.body.error?.status).toBe('UNAVAILABLE');
      expect(results[i]!.body.error?.details[0]?.metadata).toMatchObject({
        failure: 'overloaded',
        limitEvents: '2',
      });
    }
    const records = await readRecords(bootstrapServers, topic, (rs) => rs.length >= accepted.length);
    await new Promise((r) => setTimeout(r, 500));
    const ids = new Set(records.map((r) => r.headers.ce_id?.toString()));
    for (const i of accepted) expect(ids.has(`q-${i}`)).toBe(true);
    for (const i of refused) expect(ids.has(`q-${i}`)).toBe(false);
  });

  // A batch larger than the queue is admitted when nothing else is in flight (the limit never
  // starves it), and the queue refuses what does not fit, element by element.
  it('refuses the batch elements beyond BROKER_QUEUE_CAPACITY with 503 queue-full inside a 200 and publishes only the others', async () => {
    const ids = Array.from({ length: 20 }, (_, i) => `qb-${i}`);
    const batch = await sendBatch(h, ids);
    expect(batch.status).toBe(200);
    // Every element is handed to the producer in the same tick, so the queue holds the first two.
    const accepted = batch.body.entries.flatMap((e) => (e.event ? [e.index] : []));
    expect(accepted).toEqual([0, 1]);
    expect(batch.body).toMatchObject({ created: 2, failed: 18 });
    for (const entry of batch.body.entries.slice(2)) {
      expect(entry.error).toMatchObject({
        code: 503,
        status: 'UNAVAILABLE',
        details: [{ reason: 'unpersistable', metadata: { failure: 'queue-full' } }],
      });
    }
    const records = await readRecords(bootstrapServers, topic, (rs) =>
      ['qb-0', 'qb-1'].every((id) => rs.some((r) => r.headers.ce_id?.toString() === id)),
    );
    await new Promise((r) => setTimeout(r, 500));
    const onTopic = new Set(records.map((r) => r.headers.ce_id?.toString()));
    for (const id of ids.slice(2)) expect(onTopic.has(id), `${id} refused, not published`).toBe(false);
  });
});
