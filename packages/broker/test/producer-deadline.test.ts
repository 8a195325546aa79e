/**
 * The producer against a broker that stops answering: a broker of its own, frozen with SIGSTOP (its
 * sockets stay open and accept requests, nothing is answered) and thawed with SIGCONT.
 */
import { readdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import {
  createTopic,
  type KafkaHandle,
  readRecords,
  startKafka,
  tempDataDir,
} from '@event-observatory/devstack';
import { retry } from '@event-observatory/service-kit/resilience';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EventProducer, PublishError, producerConfig } from '../src/index.js';

let kafka: KafkaHandle;
let dir: string;

/** SIGSTOP, then waits until every thread of the JVM is stopped (state `T` in /proc). */
async function freeze(): Promise<void> {
  const pid = kafka.pid()!;
  process.kill(pid, 'SIGSTOP');
  const stopped = () =>
    readdirSync(`/proc/${pid}/task`).every((tid) => {
      const stat = readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8');
      return stat.slice(stat.lastIndexOf(')') + 2).startsWith('T');
    });
  while (!stopped()) await sleep(5);
}
const thaw = () => process.kill(kafka.pid()!, 'SIGCONT');
const record = (key: string) => ({ key, value: Buffer.alloc(100, key), headers: {} });
const outcome = (p: Promise<unknown>) =>
  p.then(
    () => 'acknowledged',
    (e: unknown) => e,
  );

/** A connected producer (the first connect of a busy machine may miss a short BROKER_MAX_BLOCK). */
async function warmUp(producer: EventProducer): Promise<void> {
  await retry(() => producer.publish(record('warm-up')), {
    attempts: 5,
    backoff: { initialMs: 100, maxMs: 500 },
  });
}

/** Keys on `topic`, read until `last` is among them. */
async function keysUpTo(topic: string, last: string): Promise<string[]> {
  const records = await readRecords(kafka.bootstrapServers, topic, (rs) =>
    rs.some((r) => r.key?.toString() === last),
  );
  return records.map((r) => r.key?.toString() ?? '');
}

beforeAll(async () => {
  dir = tempDataDir('broker-deadline-');
  kafka = await startKafka({ dataDir: join(dir, 'kafka') });
}, 120_000);

afterAll(async () => {
  if (kafka?.pid()) thaw();
  await kafka?.stop();
  rmSync(dir, { recursive: true, force: true });
});

describe('EventProducer when the broker stops answering', () => {
  it('fails a send at its delivery deadline, never succeeds it later, and sends nothing after the fence', async () => {
    const topic = `deadline-${Date.now()}`;
    await createTopic(kafka.bootstrapServers, topic, 1);
    const lateAcks: string[] = [];
    const producer = new EventProducer({
      config: producerConfig({
        bootstrapServers: [kafka.bootstrapServers],
        topic,
        lingerMs: 0,
        maxBlockMs: 1_000,
        // the library's own retry of A (after one request timeout) is still waiting at the deadline
        requestTimeoutMs: 1_000,
        deliveryTimeoutMs: 1_500,
      }),
      logger: { debug() {}, info() {}, warn: (_obj, msg) => void lateAcks.push(msg ?? ''), error() {} },
    });
    await warmUp(producer);
    let a: unknown;
    let b: unknown;
    await freeze();
    try {
      const started = performance.now();
      a = await outcome(producer.publish(record('a')));
      const took = performance.now() - started;
      expect(a).toBeInstanceOf(PublishError);
      expect(a).toMatchObject({ kind: 'timeout', notSent: false });
      expect(took).toBeGreaterThanOrEqual(1_490);
      expect(took).toBeLessThan(1_500 + 400);
      // After the fence a new producer cannot even connect: B is refused without being sent.
      b = await outcome(producer.publish(record('b')));
      expect(b).toMatchObject({ kind: 'unavailable', notSent: true });
    } finally {
      thaw();
    }
    // Longer than any retry the library had planned for A (request timeout plus backoff).
    await sleep(3_000);
    await producer.publish(record('c'));
    await producer.close();
    const keys = await keysUpTo(topic, 'c');
    // A was written to the socket before its deadline, so the broker may have appended it (the
    // client was answered 503 and retries; dedup makes that harmless), but at most once. Nothing
    // sent after the fence reached the topic.
    expect(keys.filter((k) => k === 'a').length).toBeLessThanOrEqual(1);
    expect(keys).not.toContain('b');
    expect(keys.at(-1)).toBe('c');
    expect(a).toMatchObject({ kind: 'timeout' }); // still the failure it was answered with
    expect(lateAcks.filter((m) => /acknowledged records after/.test(m))).toEqual([]);
  });

  it('closes within BROKER_CLOSE_TIMEOUT (plus one request timeout to disconnect) with records still queued, settling every one', async () => {
    const topic = `drain-${Date.now()}`;
    await createTopic(kafka.bootstrapServers, topic, 1);
    const closeTimeoutMs = 1_000;
    const requestTimeoutMs = 500;
    const producer = new EventProducer({
      config: producerConfig({
        bootstrapServers: [kafka.bootstrapServers],
        topic,
        lingerMs: 0,
        requestTimeoutMs,
        deliveryTimeoutMs: 30_000,
        closeTimeoutMs,
        // one record a batch: one in flight, the others queued behind it
        overrides: { properties: { maxBatchBytes: 64 }, ignored: [] },
      }),
    });
    await warmUp(producer);
    let results: unknown[];
    await freeze();
    try {
      const pending = ['q0', 'q1', 'q2', 'q3', 'q4'].map((k) => outcome(producer.publish(record(k))));
      await sleep(200); // q0 is in flight
      const started = performance.now();
      await producer.close();
      const took = performance.now() - started;
      expect(took).toBeGreaterThanOrEqual(closeTimeoutMs - 10);
      expect(took).toBeLessThan(closeTimeoutMs + requestTimeoutMs + 300);
      // Every publish has settled by the time close resolved: none is left hanging.
      const settled = await Promise.race([Promise.all(pending), sleep(50).then(() => undefined)]);
      if (!settled) throw new Error('publishes still pending after close resolved');
      results = settled;
    } finally {
      thaw();
    }
    expect(results[0]).toMatchObject({ kind: 'timeout', notSent: false });
    for (const r of results.slice(1)) expect(r).toMatchObject({ kind: 'closed', notSent: true });
    // The queued records were never sent.
    const marker = new EventProducer({
      config: producerConfig({ bootstrapServers: [kafka.bootstrapServers], topic }),
    });
    await marker.publish(record('marker'));
    await marker.close();
    const keys = await keysUpTo(topic, 'marker');
    for (const k of ['q1', 'q2', 'q3', 'q4']) expect(keys).not.toContain(k);
  });
});
