/**
 * The batch processor's retry and bisection against an in-memory store and dead-letter topic (our
 * own sink interfaces; the integration tests run the same paths on PostgreSQL and Kafka).
 */
import type { RawRecord } from '@event-observatory/broker';
import { type CloudEvent, toKafkaRecord } from '@event-observatory/events';
import type { Checkpoint, EventInsertResult, EventInsertRow } from '@event-observatory/store';
import { Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { parseDeadLetter } from '../dlq/dead-letter.js';
import { createConsumerMetrics } from '../metrics.js';
import { Aborted, BatchProcessor, type ProcessorOptions } from './processor.js';
import type { ConsumedRecord } from './record.js';
import type { DeadLetterSink, EventSink } from './sink.js';

/** A PostgreSQL-like error: SQLSTATE in `code`. */
function sqlError(code: string, message: string): Error {
  return Object.assign(new Error(message), { code });
}

/**
 * The store in memory: rows by identity, checkpoints by partition. `refuse` names rows it rejects
 * deterministically (as a constraint would); `outages` fails that many next calls transiently.
 */
class MemoryStore implements EventSink {
  readonly rows = new Map<string, EventInsertRow>();
  readonly checkpoints = new Map<number, string>();
  readonly calls: { op: 'batch' | 'insert' | 'checkpoint'; rows: number }[] = [];
  outages = 0;
  /** Deterministic refusals of whole batches still to come, whatever their rows. */
  refuseBatches = 0;
  /** Failures of the checkpoint writes still to come (after a bisection). */
  checkpointFailures = 0;

  constructor(private readonly refuse: (row: EventInsertRow) => boolean = () => false) {}

  async writeWithCheckpoints(
    rows: readonly EventInsertRow[],
    cps: readonly Checkpoint[],
  ): Promise<EventInsertResult> {
    this.calls.push({ op: 'batch', rows: rows.length });
    this.failIfDown();
    if (this.refuseBatches > 0) {
      this.refuseBatches--;
      throw sqlError('23505', 'refused whole batch');
    }
    const result = this.store(rows);
    this.record(cps);
    return result;
  }

  async insert(rows: readonly EventInsertRow[]): Promise<EventInsertResult> {
    this.calls.push({ op: 'insert', rows: rows.length });
    this.failIfDown();
    return this.store(rows);
  }

  async checkpoint(cps: readonly Checkpoint[]): Promise<void> {
    this.calls.push({ op: 'checkpoint', rows: 0 });
    this.failIfDown();
    if (this.checkpointFailures > 0) {
      this.checkpointFailures--;
      throw Object.assign(new Error('terminating connection due to administrator command'), {
        code: '57P01',
      });
    }
    this.record(cps);
  }

  private failIfDown(): void {
    if (this.outages > 0) {
      this.outages--;
      throw Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' });
    }
  }

  /** All or nothing, as one statement. */
  private store(rows: readonly EventInsertRow[]): EventInsertResult {
    const bad = rows.find(this.refuse);
    if (bad) throw sqlError('23514', `no partition for ${bad.occurredAt}`);
    const insertedByType = new Map<string, number>();
    let inserted = 0;
    for (const r of rows) {
      const key = `${r.source}\u0000${r.id}`;
      if (this.rows.has(key)) continue;
      this.rows.set(key, r);
      inserted++;
      insertedByType.set(r.type, (insertedByType.get(r.type) ?? 0) + 1);
    }
    return { attempted: rows.length, inserted, insertedByType };
  }

  private record(cps: readonly Checkpoint[]): void {
    for (const c of cps) {
      const prev = this.checkpoints.get(c.partition);
      if (prev === undefined || BigInt(c.nextOffset) > BigInt(prev))
        this.checkpoints.set(c.partition, c.nextOffset);
    }
  }
}

class MemoryTopic implements DeadLetterSink {
  readonly messages: RawRecord[] = [];
  failures = 0;

  async publish(messages: RawRecord[]): Promise<void> {
    if (this.failures > 0) {
      this.failures--;
      throw new Error('broker unreachable');
    }
    this.messages.push(...messages);
  }

  reasons(): string[] {
    return this.messages.map((m) => parseDeadLetter(Buffer.from(m.value as string))!.data.reason);
  }
}

const quiet = { debug() {}, info() {}, warn() {}, error() {} };

function processorOn(
  store: EventSink,
  topic: DeadLetterSink,
  writeAttempts = 3,
  options: Pick<ProcessorOptions, 'retainedFrom'> = {},
) {
  const registry = new Registry();
  const processor = new BatchProcessor({
    sink: store,
    deadLetters: topic,
    metrics: createConsumerMetrics(registry),
    group: 'g',
    writeAttempts,
    retryDelayMs: 1,
    maxOutageDelayMs: 5,
    log: quiet,
    ...options,
  });
  return { processor, registry };
}

function records(n: number, patch: (i: number, e: CloudEvent) => CloudEvent = (_, e) => e): ConsumedRecord[] {
  return Array.from({ length: n }, (_, i) => {
    const event: CloudEvent = {
      specversion: '1.0',
      id: `evt-${i}`,
      source: 'urn:test',
      type: 'com.example.reading',
      time: '2026-11-21T10:00:00Z',
      datacontenttype: 'application/json',
      extensions: {},
      data: Buffer.from(JSON.stringify({ n: i })),
    };
    const r = toKafkaRecord(patch(i, event));
    return {
      topic: 't',
      partition: i % 3,
      offset: String(100 + i),
      key: Buffer.from(r.key),
      value: r.value,
      headers: r.headers,
      timestamp: '0',
    };
  });
}

const running = () => new AbortController().signal;

/** One batch through a processor on `store` and a fresh dead-letter topic. */
async function processOn(store: MemoryStore, writeAttempts: number, batch = records(10)) {
  const topic = new MemoryTopic();
  const result = await processorOn(store, topic, writeAttempts).processor.process(batch, running());
  return { result, topic };
}

describe('BatchProcessor', () => {
  it('stores a clean batch and its checkpoints in one write', async () => {
    const store = new MemoryStore();
    const topic = new MemoryTopic();
    const result = await processorOn(store, topic).processor.process(records(30), running());
    expect(result).toMatchObject({ outcome: 'success', attempted: 30, inserted: 30, deadLettered: 0 });
    expect(store.calls).toEqual([{ op: 'batch', rows: 30 }]);
    expect(Object.fromEntries(store.checkpoints)).toEqual({ 0: '128', 1: '129', 2: '130' });
  });

  it('isolates one poison row among 500 by bisection: 499 stored, the one dead-lettered', async () => {
    const store = new MemoryStore((row) => row.id === 'evt-321');
    const topic = new MemoryTopic();
    const result = await processorOn(store, topic).processor.process(records(500), running());
    expect(result).toMatchObject({ outcome: 'success', attempted: 499, inserted: 499, deadLettered: 1 });
    expect(store.rows.size).toBe(499);
    expect(store.rows.has('urn:test\u0000evt-321')).toBe(false);
    // Four whole-batch writes (the first and CONSUMER_WRITE_ATTEMPTS = 3 retries), then about
    // 2·log2(500) single-part inserts instead of 500, then the checkpoints alone.
    expect(store.calls.filter((c) => c.op === 'batch')).toHaveLength(4);
    const inserts = store.calls.filter((c) => c.op === 'insert');
    expect(inserts.length).toBeLessThanOrEqual(2 * Math.ceil(Math.log2(500)) + 1);
    expect(store.calls.at(-1)).toEqual({ op: 'checkpoint', rows: 0 });
    expect(topic.messages.map((m) => m.key)).toEqual(['t/0/421']);
    const letter = parseDeadLetter(Buffer.from(topic.messages[0]!.value as string))!;
    expect(letter.data.reason).toBe('unpersistable');
    expect(letter.data.detail).toBe('SQLSTATE 23514: no partition for 2026-11-21T10:00:00Z');
    expect(Object.fromEntries(store.checkpoints)).toEqual({ 0: '599', 1: '600', 2: '598' });
  });

  it('isolates every poison row, and a batch of nothing but poison is skipped', async () => {
    const store = new MemoryStore(() => true);
    const { result, topic } = await processOn(store, 1, records(5));
    expect(result).toMatchObject({ outcome: 'skipped', inserted: 0, deadLettered: 5 });
    expect(topic.reasons()).toEqual(Array(5).fill('unpersistable'));
    expect(store.checkpoints.size).toBe(3);
  });

  it('retries a refused batch as a whole first, and bisects nothing when a retry succeeds', async () => {
    const store = new MemoryStore();
    store.refuseBatches = 3;
    const { result } = await processOn(store, 3);
    expect(result).toMatchObject({ outcome: 'success', inserted: 10, deadLettered: 0 });
    expect(store.calls).toEqual(Array(4).fill({ op: 'batch', rows: 10 }));
  });

  it('retries a refused batch CONSUMER_WRITE_ATTEMPTS times after the first try before it bisects', async () => {
    const store = new MemoryStore();
    store.refuseBatches = 3;
    const { result } = await processOn(store, 2);
    // Three whole writes refused; bisection's first insert (all ten rows) then succeeds.
    expect(store.calls.map((c) => c.op)).toEqual(['batch', 'batch', 'batch', 'insert', 'checkpoint']);
    expect(result).toMatchObject({ outcome: 'success', inserted: 10, deadLettered: 0 });
  });

  it('waits out a store outage without dead-lettering, bisecting or using up the write attempts', async () => {
    const store = new MemoryStore();
    store.outages = 6;
    const { result, topic } = await processOn(store, 1);
    expect(result).toMatchObject({ outcome: 'success', inserted: 10, deadLettered: 0 });
    expect(store.calls).toEqual(Array(7).fill({ op: 'batch', rows: 10 }));
    expect(topic.messages).toHaveLength(0);
  });

  it('retries the same part when the store goes away during bisection', async () => {
    const store = new MemoryStore((row) => row.id === 'evt-3');
    const topic = new MemoryTopic();
    const { processor } = processorOn(store, topic, 0);
    const original = store.insert.bind(store);
    let inserts = 0;
    store.insert = async (rows) => {
      if (++inserts === 2) store.outages = 2; // the second part meets an outage
      return original(rows);
    };
    const result = await processor.process(records(8), running());
    expect(result).toMatchObject({ inserted: 7, deadLettered: 1 });
    expect(store.rows.size).toBe(7);
    expect(topic.reasons()).toEqual(['unpersistable']);
  });

  it('publishes dead letters before the checkpoint, retrying the broker until it acknowledges', async () => {
    const store = new MemoryStore();
    const topic = new MemoryTopic();
    topic.failures = 3;
    const batch = records(4);
    batch[1]!.value = Buffer.from('{not json');
    const result = await processorOn(store, topic).processor.process(batch, running());
    expect(result).toMatchObject({ inserted: 3, deadLettered: 1 });
    expect(topic.reasons()).toEqual(['invalid-payload']);
    expect(store.checkpoints.size).toBe(3);
  });

  it('says why while dead letters wait for the broker (readiness reads it), and nothing once they are acknowledged', async () => {
    const store = new MemoryStore();
    const topic = new MemoryTopic();
    topic.failures = Number.POSITIVE_INFINITY;
    const batch = records(2);
    batch[0]!.value = Buffer.from('{not json');
    const { processor } = processorOn(store, topic);
    expect(processor.deadLetterOutage).toBeUndefined();
    const done = processor.process(batch, running());
    await new Promise((r) => setTimeout(r, 50));
    expect(processor.deadLetterOutage).toBe('broker unreachable');
    expect(store.checkpoints.size).toBe(0);
    topic.failures = 0;
    expect(await done).toMatchObject({ inserted: 1, deadLettered: 1 });
    expect(processor.deadLetterOutage).toBeUndefined();
  });

  it('says why while the checkpoint after a bisection waits for the store, as for the batch write', async () => {
    const store = new MemoryStore((r) => r.id === 'evt-1');
    store.checkpointFailures = Number.POSITIVE_INFINITY;
    const { processor } = processorOn(store, new MemoryTopic());
    const done = processor.process(records(4), running());
    await new Promise((r) => setTimeout(r, 50));
    expect(processor.storeOutage).toMatchObject({ code: '57P01' });
    store.checkpointFailures = 0;
    expect(await done).toMatchObject({ inserted: 3, deadLettered: 1 });
    expect(processor.storeOutage).toBeUndefined();
    expect(store.checkpoints.size).toBe(3);
  });

  it('dead-letters an event before the retained range as unpersistable, before any write, and stores one at its start', async () => {
    const store = new MemoryStore();
    const topic = new MemoryTopic();
    const start = Date.parse('2026-11-01T00:00:00Z');
    const { processor, registry } = processorOn(store, topic, 3, { retainedFrom: () => start });
    const times = [
      '2026-10-31T23:59:59.999Z',
      '2026-11-01T00:00:00Z',
      '2026-11-01T00:59:59.999+01:00',
      '2026-11-01T01:00:00+01:00',
    ];
    const result = await processor.process(
      records(4, (i, e) => ({ ...e, time: times[i]! })),
      running(),
    );
    expect(result).toMatchObject({ outcome: 'success', inserted: 2, deadLettered: 2 });
    expect(store.calls).toEqual([{ op: 'batch', rows: 2 }]);
    expect([...store.rows.values()].map((r) => r.occurredAt)).toEqual([times[1], times[3]]);
    expect(topic.messages.map((m) => m.key)).toEqual(['t/0/100', 't/2/102']);
    const letter = parseDeadLetter(Buffer.from(topic.messages[0]!.value as string))!;
    expect(letter.data).toMatchObject({
      reason: 'unpersistable',
      detail:
        'past retention: time 2026-10-31T23:59:59.999Z is before 2026-11-01T00:00:00.000Z, the end of the newest month retention detached from the store',
    });
    expect(Object.fromEntries(store.checkpoints)).toEqual({ 0: '104', 1: '102', 2: '103' });
    expect(await registry.getSingleMetricAsString('consume_records_past_retention_total')).toMatch(
      /^consume_records_past_retention_total 2$/m,
    );
  });

  it('gives up waiting with Aborted when the stream stops during an outage, committing nothing', async () => {
    const store = new MemoryStore();
    store.outages = Number.POSITIVE_INFINITY;
    const topic = new MemoryTopic();
    const stop = new AbortController();
    const pending = processorOn(store, topic).processor.process(records(3), stop.signal);
    setTimeout(() => stop.abort(new Aborted('stopping')), 30);
    await expect(pending).rejects.toBeInstanceOf(Aborted);
    expect(store.checkpoints.size).toBe(0);
  });
});
