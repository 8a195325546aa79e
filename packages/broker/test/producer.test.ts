import { randomUUID } from 'node:crypto';
import { createTopic, readRecords } from '@event-observatory/devstack';
import {
  type Context,
  type ContextManager,
  context,
  createTraceState,
  ROOT_CONTEXT,
  TraceFlags,
  trace,
} from '@opentelemetry/api';
import { Registry } from 'prom-client';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { EventProducer, PublishError, producerConfig } from '../src/index.js';

const { bootstrapServers } = inject('stack');

describe('EventProducer against the real broker', () => {
  const topic = `producer-test-${randomUUID()}`;
  let producer: EventProducer;
  const registry = new Registry();
  const outcomes: boolean[] = [];

  beforeAll(async () => {
    await createTopic(bootstrapServers, topic);
    producer = new EventProducer({
      config: producerConfig({ bootstrapServers: [bootstrapServers], topic }),
      registry,
      onOutcome: (ok) => outcomes.push(ok),
    });
    expect(await producer.probe()).toBe(true);
  });
  afterAll(async () => {
    await producer?.close();
  });

  it('publishes records whose key, headers, value, partition and offset match the receipts', async () => {
    const inputs = Array.from({ length: 40 }, (_, i) => ({
      key: `src#${i % 5}`,
      value: i === 0 ? null : Buffer.from([i, 0, 255, i]),
      headers: { ce_id: `id-${i}`, ce_type: 't' },
    }));
    const receipts = await Promise.all(inputs.map((r) => producer.publish(r)));
    const records = await readRecords(bootstrapServers, topic, (rs) => rs.length >= 40);
    expect(records).toHaveLength(40);
    for (const [i, input] of inputs.entries()) {
      const receipt = receipts[i]!;
      const rec = records.find((r) => r.partition === receipt.partition && r.offset === receipt.offset)!;
      expect(rec.key?.toString()).toBe(input.key);
      expect(rec.value === null ? null : [...rec.value]).toEqual(
        input.value === null ? null : [...input.value],
      );
      expect(rec.headers.ce_id?.toString()).toBe(`id-${i}`);
    }
    // one key, one partition, request order
    const sameKey = receipts.filter((r) => r.key === 'src#1');
    expect(new Set(sameKey.map((r) => r.partition)).size).toBe(1);
    const offsets = sameKey.map((r) => BigInt(r.offset));
    expect([...offsets].sort((a, b) => (a < b ? -1 : 1))).toEqual(offsets);
    expect(outcomes.at(-1)).toBe(true);
    expect(await registry.metrics()).toMatch(
      /broker_produce_latency_seconds_bucket\{le="0.001",topic="[^"]+",outcome="success"/,
    );
  });

  it('refuses records beyond the queue capacity without sending them', async () => {
    const small = new EventProducer({
      config: producerConfig({ bootstrapServers: [bootstrapServers], topic, queueCapacity: 2 }),
    });
    const results = await Promise.allSettled(
      Array.from({ length: 5 }, (_, i) =>
        small.publish({ key: 'q', value: Buffer.from(`q${i}`), headers: {} }),
      ),
    );
    await small.close();
    const refused = results.filter((r) => r.status === 'rejected');
    expect(refused).toHaveLength(3);
    for (const r of refused)
      expect((r as PromiseRejectedResult).reason).toMatchObject({ kind: 'queue-full', notSent: true });
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(2);
    expect((refused[0] as PromiseRejectedResult).reason).toBeInstanceOf(PublishError);
  });

  it('refuses records beyond the queue byte budget without sending them', async () => {
    const small = new EventProducer({
      config: producerConfig({ bootstrapServers: [bootstrapServers], topic, queueBytes: 3000 }),
    });
    const value = Buffer.alloc(1000, 0x62);
    const results = await Promise.allSettled(
      Array.from({ length: 5 }, () => small.publish({ key: 'b', value, headers: {} })),
    );
    await small.close();
    const refused = results.filter((r) => r.status === 'rejected');
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(2);
    for (const r of refused)
      expect((r as PromiseRejectedResult).reason).toMatchObject({ kind: 'queue-full', notSent: true });
  });

  it('lingers before a send (BROKER_LINGER) unless a full batch is already waiting', async () => {
    const lingering = new EventProducer({
      config: producerConfig({ bootstrapServers: [bootstrapServers], topic, lingerMs: 400 }),
    });
    const full = new EventProducer({
      config: producerConfig({
        bootstrapServers: [bootstrapServers],
        topic,
        lingerMs: 4000,
        overrides: { properties: { maxBatchBytes: 64 }, ignored: [] },
      }),
    });
    try {
      // connect both first, so only the linger is timed
      await lingering.publish({ key: 'l', value: Buffer.from('warm'), headers: {} });
      await full.publish({ key: 'f', value: Buffer.alloc(100), headers: {} });
      let started = performance.now();
      await lingering.publish({ key: 'l', value: Buffer.from('x'), headers: {} });
      expect(performance.now() - started).toBeGreaterThanOrEqual(390);
      // 2 x 100 bytes > maxBatchBytes 64: a full batch is waiting, so no linger
      started = performance.now();
      await Promise.all(
        [0, 1].map((i) => full.publish({ key: 'f', value: Buffer.alloc(100, i), headers: {} })),
      );
      expect(performance.now() - started).toBeLessThan(3000);
    } finally {
      await Promise.all([lingering.close(), full.close()]);
    }
  });

  it('refuses publishing after close', async () => {
    const p = new EventProducer({ config: producerConfig({ bootstrapServers: [bootstrapServers], topic }) });
    await p.close();
    await expect(p.publish({ key: 'k', value: null, headers: {} })).rejects.toMatchObject({ kind: 'closed' });
  });

  it('puts the active trace context, traceparent and tracestate, into the record headers', async () => {
    const traced = `producer-trace-${randomUUID()}`;
    await createTopic(bootstrapServers, traced, 1);
    const p = new EventProducer({
      config: producerConfig({ bootstrapServers: [bootstrapServers], topic: traced }),
    });
    const span = {
      traceId: '4bf92f3577b34da6a3ce929d0e0e4736',
      spanId: '00f067aa0ba902b7',
      traceFlags: TraceFlags.SAMPLED,
      traceState: createTraceState('vendor=opaque,other=1'),
    };
    const contexts = new StackContextManager();
    context.setGlobalContextManager(contexts);
    try {
      const ctx = trace.setSpanContext(ROOT_CONTEXT, span);
      await context.with(ctx, () =>
        p.publish({ key: 't', value: Buffer.from('x'), headers: { ce_id: '1' } }),
      );
      // outside any span: nothing is added
      await p.publish({ key: 't', value: Buffer.from('y'), headers: { ce_id: '2' } });
    } finally {
      context.disable();
      await p.close();
    }
    const [withSpan, without] = await readRecords(bootstrapServers, traced, (rs) => rs.length >= 2);
    const headers = (r: typeof withSpan) =>
      Object.fromEntries(Object.entries(r?.headers ?? {}).map(([k, v]) => [k, v?.toString()]));
    expect(headers(withSpan)).toEqual({
      ce_id: '1',
      traceparent: '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01',
      tracestate: 'vendor=opaque,other=1',
    });
    expect(headers(without)).toEqual({ ce_id: '2' });
  });

  it('fails records whose deadline passed while they were queued with timeout, without sending them', async () => {
    const expiring = `producer-expiry-${randomUUID()}`;
    await createTopic(bootstrapServers, expiring, 1);
    const p = new EventProducer({
      config: producerConfig({
        bootstrapServers: [bootstrapServers],
        topic: expiring,
        lingerMs: 0,
        requestTimeoutMs: 100,
        deliveryTimeoutMs: 200,
      }),
    });
    const results = ['x0', 'x1', 'x2'].map((key) =>
      p.publish({ key, value: Buffer.from(key), headers: {} }).catch((e: unknown) => e),
    );
    // The sender cannot run while this blocks: the records wait in the queue past their deadline.
    const until = performance.now() + 300;
    while (performance.now() < until) {}
    for (const outcome of await Promise.all(results)) {
      expect(outcome).toMatchObject({ kind: 'timeout', notSent: true });
      expect((outcome as PublishError).message).toMatch(/before the record was sent/);
    }
    await p.close();
    // A marker published afterwards is on the topic; the expired records are not.
    const marker = new EventProducer({
      config: producerConfig({ bootstrapServers: [bootstrapServers], topic: expiring }),
    });
    await marker.publish({ key: 'marker', value: null, headers: {} });
    await marker.close();
    const records = await readRecords(bootstrapServers, expiring, (rs) =>
      rs.some((r) => r.key?.toString() === 'marker'),
    );
    expect(records.map((r) => r.key?.toString())).toEqual(['marker']);
  });

  it('drains the queue on close: queued records are acknowledged within BROKER_CLOSE_TIMEOUT', async () => {
    const p = new EventProducer({
      config: producerConfig({ bootstrapServers: [bootstrapServers], topic, lingerMs: 50 }),
    });
    const results = Array.from({ length: 200 }, (_, i) =>
      p.publish({ key: `drain#${i % 7}`, value: Buffer.from(`d${i}`), headers: {} }),
    );
    const started = performance.now();
    await p.close(5_000);
    expect(performance.now() - started).toBeLessThan(5_000);
    const settled = await Promise.allSettled(results);
    expect(settled.filter((r) => r.status === 'fulfilled')).toHaveLength(200);
  });
});

/**
 * A synchronous context manager, enough for `context.with` around a call that reads the active
 * context before its first await (as `publish` does); the SDK's async one is not needed here.
 */
class StackContextManager implements ContextManager {
  private stack: Context[] = [];
  active(): Context {
    return this.stack.at(-1) ?? ROOT_CONTEXT;
  }
  with<A extends unknown[], F extends (...args: A) => ReturnType<F>>(
    ctx: Context,
    fn: F,
    thisArg?: ThisParameterType<F>,
    ...args: A
  ): ReturnType<F> {
    this.stack.push(ctx);
    try {
      return fn.call(thisArg, ...args);
    } finally {
      this.stack.pop();
    }
  }
  bind<T>(_ctx: Context, target: T): T {
    return target;
  }
  enable(): this {
    return this;
  }
  disable(): this {
    this.stack = [];
    return this;
  }
}
