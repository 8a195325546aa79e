/**
 * Reads the dead-letter topic from its start (or from given offsets) up to the end offsets seen
 * first, with a throw-away consumer group (deleted afterwards), handing each record to a visitor. Bounded by `maxRecords`
 * and by `timeoutMs` of wall time; the visitor may stop the scan early too. Nothing is committed.
 */
import { randomUUID } from 'node:crypto';
import { settleWithin, TIMED_OUT } from '@event-observatory/service-kit/resilience';
import type { ConsumerClients } from '../clients/consumer.js';
import type { GroupAdmin } from '../groups/admin.js';

export interface DeadLetterScanOptions {
  dlqTopic: string;
  /** The service's group; the scan's own group is named after it. */
  groupId: string;
  maxRecords: number;
  timeoutMs: number;
  /** Where to start per partition (replay's stored positions); absent partitions start at the beginning. */
  from?: ReadonlyMap<number, bigint>;
}

/** A record of the dead-letter topic as a scan hands it over. */
export interface ScannedRecord {
  partition: number;
  /** Offset as a decimal string. */
  offset: string;
  key: Buffer | null;
  /** Null for a tombstone. */
  value: Buffer | null;
}

/**
 * A visitor's answer: go on with the next record, stop reading this record's partition
 * (`partition-done`: the others go on), or stop the scan here.
 */
export type ScanStep = 'next' | 'partition-done' | 'stop';

export interface DeadLetterScanOutcome {
  /** Records handed to the visitor. */
  scanned: number;
  /** False when a bound or the visitor stopped the scan before the end of some partition. */
  complete: boolean;
}

/**
 * Visits every record of `dlqTopic` in offset order per partition (see the module note). `admin` is
 * the caller's connected group admin: it reads the end offsets and deletes the scan's group.
 */
export async function scanDeadLetters(
  clients: ConsumerClients,
  admin: GroupAdmin,
  opts: DeadLetterScanOptions,
  visit: (record: ScannedRecord) => ScanStep,
): Promise<DeadLetterScanOutcome> {
  const { dlqTopic, maxRecords } = opts;
  const ranges = await admin.partitionRanges(dlqTopic);
  const start = (p: { partition: number; low: string }) => {
    const from = opts.from?.get(p.partition) ?? 0n;
    return from > BigInt(p.low) ? from : BigInt(p.low);
  };
  const ends = new Map(
    ranges.filter((p) => BigInt(p.high) > start(p)).map((p) => [p.partition, BigInt(p.high)]),
  );
  let scanned = 0;
  if (ends.size === 0) return { scanned, complete: true };
  const groupId = `${opts.groupId}.dlq-admin.${randomUUID()}`;
  const consumer = clients.scanConsumer(groupId);
  const remaining = new Set(ends.keys());
  let stoppedEarly = false;
  try {
    await consumer.connect();
    await consumer.subscribe({ topics: [dlqTopic], fromBeginning: true });
    const done = new Promise<void>((resolve, reject) => {
      consumer
        .run({
          autoCommit: false,
          eachBatch: async ({ batch }) => {
            const { partition } = batch;
            if (!remaining.has(partition)) return;
            const end = ends.get(partition)!;
            for (const { offset, key, value } of batch.messages) {
              if (remaining.size === 0 || stoppedEarly) break;
              if (BigInt(offset) >= end) break;
              if (scanned >= maxRecords) {
                stoppedEarly = true;
                break;
              }
              scanned++;
              const step = visit({ partition, offset, key, value });
              if (step === 'stop') {
                stoppedEarly = true;
                break;
              }
              if (step === 'partition-done' || BigInt(offset) >= end - 1n) {
                remaining.delete(partition);
                break;
              }
            }
            if (BigInt(batch.highWatermark) <= BigInt(batch.lastOffset()) + 1n) remaining.delete(partition);
            if (remaining.size === 0 || stoppedEarly) resolve();
          },
        })
        .catch(reject);
      // `run` has created the group (synchronously); a seek applies before the first fetch.
      for (const p of ranges) {
        if (ends.has(p.partition))
          consumer.seek({ topic: dlqTopic, partition: p.partition, offset: String(start(p)) });
      }
    });
    if ((await settleWithin(done, opts.timeoutMs)) === TIMED_OUT) stoppedEarly = true;
  } finally {
    await consumer.disconnect().catch(() => {});
    await admin.deleteGroup(groupId).catch(() => {});
  }
  return { scanned, complete: !stoppedEarly && remaining.size === 0 };
}
