/**
 * Dead-letter administration: depth per partition, a bounded listing, and replay.
 *
 * Scans read the dead-letter topic from its start with a throw-away consumer group (deleted
 * afterwards), at most `REPLAY_MAX_RECORDS` records; a `reason` filter matches only within the
 * scanned records. Tombstones (value null: dead letters already replayed) are scanned but never
 * listed. Replay re-publishes each selected dead letter's original key, value, headers and
 * timestamp to the main topic, one at a time (sequential on purpose: the next publish starts after
 * the previous one was acknowledged, so a failure stops the run with a clear boundary and the
 * replay keeps the dead letters' order), then writes a tombstone for the dead letter's key.
 */
import { randomUUID } from 'node:crypto';
import type { Kafka, KafkaMessage, Producer } from 'kafkajs';
import { type DeadLetter, originalMessage, parseDeadLetter } from './dead-letter.js';
import type { PoisonReason } from './decode.js';
import type { ConsumerMetrics } from './metrics.js';

export interface DlqAdminOptions {
  kafka: Kafka;
  producer: Producer;
  metrics: ConsumerMetrics;
  topic: string;
  dlqTopic: string;
  groupId: string;
  maxRecords: number;
  /** Bound on one scan's wall time. Default 20 s. */
  scanTimeoutMs?: number;
}

export interface DlqPartitionDepth {
  partition: number;
  low: string;
  high: string;
  depth: number;
}

export interface DlqListedRecord {
  key: string;
  partition: number;
  offset: string;
  time: string;
  reason: PoisonReason;
  detail: string;
  origin: DeadLetter['data']['origin'];
  valueBytes: number;
  headers: string[];
}

export interface DlqListing {
  records: DlqListedRecord[];
  scanned: number;
  truncated: boolean;
  returned: number;
}

export interface ReplayEntry extends DlqListedRecord {
  outcome: 'success' | 'failure' | 'skipped';
  destination?: { topic: string; partition: number; offset: string };
  error?: string;
}

export interface ReplayReport {
  dryRun: boolean;
  scanned: number;
  truncated: boolean;
  planned: number;
  replayed: number;
  failed: number;
  records: ReplayEntry[];
}

interface Scanned {
  partition: number;
  message: KafkaMessage;
  letter: DeadLetter;
}

export class DlqAdmin {
  constructor(private readonly opts: DlqAdminOptions) {}

  async depth(): Promise<{ topic: string; depth: number; partitions: DlqPartitionDepth[] }> {
    const admin = this.opts.kafka.admin();
    await admin.connect();
    try {
      const offsets = await admin.fetchTopicOffsets(this.opts.dlqTopic);
      const partitions = offsets
        .map((p) => ({
          partition: p.partition,
          low: p.low,
          high: p.high,
          depth: Number(BigInt(p.high) - BigInt(p.low)),
        }))
        .sort((a, b) => a.partition - b.partition);
      return { topic: this.opts.dlqTopic, depth: partitions.reduce((s, p) => s + p.depth, 0), partitions };
    } finally {
      await admin.disconnect();
    }
  }

  async list(limit: number, reason?: PoisonReason): Promise<DlqListing> {
    const scan = await this.scan(limit, reason);
    const records = scan.items.map(describe);
    return { records, scanned: scan.scanned, truncated: scan.truncated, returned: records.length };
  }

  async replay(limit: number, reason: PoisonReason | undefined, dryRun: boolean): Promise<ReplayReport> {
    const { metrics } = this.opts;
    let scan: Awaited<ReturnType<DlqAdmin['scan']>>;
    try {
      scan = await this.scan(limit, reason);
    } catch (err) {
      metrics.replayOperation('failure');
      throw err;
    }
    const report: ReplayReport = {
      dryRun,
      scanned: scan.scanned,
      truncated: scan.truncated,
      planned: scan.items.length,
      replayed: 0,
      failed: 0,
      records: [],
    };
    if (dryRun) {
      report.records = scan.items.map((s) => ({ ...describe(s), outcome: 'skipped' as const }));
      metrics.replayOperation('skipped');
      metrics.replayRecords('skipped', scan.items.length);
      return report;
    }
    for (const item of scan.items) {
      const entry: ReplayEntry = { ...describe(item), outcome: 'success' };
      try {
        const [meta] = await this.opts.producer.send({
          topic: this.opts.topic,
          acks: -1,
          messages: [originalMessage(item.letter)],
        });
        entry.destination = {
          topic: this.opts.topic,
          partition: meta!.partition,
          offset: meta!.baseOffset ?? '',
        };
        await this.opts.producer.send({
          topic: this.opts.dlqTopic,
          acks: -1,
          messages: [{ key: item.message.key, value: null, partition: item.partition }],
        });
        report.replayed++;
      } catch (err) {
        await this.opts.producer.connect().catch(() => {});
        entry.outcome = 'failure';
        entry.error = (err as Error).message;
        report.failed++;
        report.records.push(entry);
        break; // sequential: stop at the first failure, the rest stays dead-lettered
      }
      report.records.push(entry);
    }
    metrics.replayRecords('success', report.replayed);
    metrics.replayRecords('failure', report.failed);
    metrics.replayOperation(report.failed > 0 ? 'failure' : 'success');
    return report;
  }

  /** Reads up to `maxRecords` dead letters from the start; stops early once `wanted` matched. */
  private async scan(
    wanted: number,
    reason: PoisonReason | undefined,
  ): Promise<{ items: Scanned[]; scanned: number; truncated: boolean }> {
    const { kafka, dlqTopic, maxRecords } = this.opts;
    const admin = kafka.admin();
    await admin.connect();
    let ends: Map<number, bigint>;
    try {
      const offsets = await admin.fetchTopicOffsets(dlqTopic);
      ends = new Map(
        offsets.filter((p) => BigInt(p.high) > BigInt(p.low)).map((p) => [p.partition, BigInt(p.high)]),
      );
    } catch (err) {
      await admin.disconnect();
      throw err;
    }
    const items: Scanned[] = [];
    let scanned = 0;
    if (ends.size === 0) {
      await admin.disconnect();
      return { items, scanned, truncated: false };
    }
    const groupId = `${this.opts.groupId}.dlq-admin.${randomUUID()}`;
    const consumer = kafka.consumer({ groupId, maxWaitTimeInMs: 100, retry: { retries: 2 } });
    const remaining = new Set(ends.keys());
    let stoppedEarly = false;
    try {
      await consumer.connect();
      await consumer.subscribe({ topics: [dlqTopic], fromBeginning: true });
      await new Promise<void>((resolve, reject) => {
        const timer = setTimeout(() => {
          stoppedEarly = true;
          resolve();
        }, this.opts.scanTimeoutMs ?? 20_000);
        const finish = () => {
          clearTimeout(timer);
          resolve();
        };
        consumer
          .run({
            autoCommit: false,
            eachBatch: async ({ batch }) => {
              if (!remaining.has(batch.partition)) return;
              const end = ends.get(batch.partition)!;
              for (const message of batch.messages) {
                if (remaining.size === 0 || stoppedEarly) break;
                if (BigInt(message.offset) >= end) break;
                if (scanned >= maxRecords || items.length >= wanted) {
                  stoppedEarly = true;
                  break;
                }
                scanned++;
                const letter = parseDeadLetter(message.value);
                if (letter && (!reason || letter.data.reason === reason)) {
                  items.push({ partition: batch.partition, message, letter });
                }
                if (BigInt(message.offset) >= end - 1n) remaining.delete(batch.partition);
              }
              if (BigInt(batch.highWatermark) <= BigInt(batch.lastOffset()) + 1n)
                remaining.delete(batch.partition);
              if (remaining.size === 0 || stoppedEarly) finish();
            },
          })
          .catch(reject);
      });
    } finally {
      await consumer.disconnect().catch(() => {});
      await admin.deleteGroups([groupId]).catch(() => {});
      await admin.disconnect().catch(() => {});
    }
    items.sort(
      (a, b) => a.partition - b.partition || Number(BigInt(a.message.offset) - BigInt(b.message.offset)),
    );
    return { items, scanned, truncated: stoppedEarly || remaining.size > 0 };
  }
}

function describe(s: Scanned): DlqListedRecord {
  const d = s.letter.data;
  return {
    key: s.message.key?.toString('utf8') ?? s.letter.id,
    partition: s.partition,
    offset: s.message.offset,
    time: s.letter.time,
    reason: d.reason,
    detail: d.detail,
    origin: d.origin,
    valueBytes: d.record.value === null ? 0 : Buffer.from(d.record.value, 'base64').byteLength,
    headers: d.record.headers.map((h) => h.key),
  };
}
