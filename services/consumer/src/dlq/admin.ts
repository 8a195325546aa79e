/**
 * Dead-letter administration: depth per partition, a bounded listing, and replay.
 *
 * A listing or replay scans the dead-letter topic (the broker's `scanDeadLetters`: from its start, at most
 * `REPLAY_MAX_RECORDS` records and 20 s) and applies the topic's compaction rule itself
 * (`compaction.ts`: the latest record of a key wins, a tombstone removes its key). Only then
 * are the `reason` filter and the `limit` applied, so a replayed letter is neither listed nor
 * replayed again. A letter whose tombstone lies beyond the scan bound is still listed (until
 * compaction).
 *
 * Memory: a scan keeps one small description per live, matching letter (no message, no parsed
 * letter). Replay (`dryRun=false`) also keeps each candidate's dead-letter bytes (a copy, so the
 * fetch buffer is not retained) to re-publish them, at most `REPLAY_MAX_HELD_BYTES` (64 MiB) in
 * all; a scan that would hold more stops there (`truncated: true`), and the next replay goes on.
 *
 * Replay re-publishes each selected dead letter's original key, value, headers and timestamp to
 * the main topic, one at a time (sequential on purpose: the next publish starts after the previous
 * one was acknowledged, so a failure stops the run with a clear boundary and the replay keeps the
 * dead letters' order), then writes a tombstone for the dead letter's key.
 */
import {
  type ConsumerClients,
  type DeadLetterProducer,
  type GroupAdmin,
  type PartitionDepth,
  type RecordPosition,
  scanDeadLetters,
  topicDepth,
} from '@event-observatory/broker';
import type { ConsumerMetrics } from '../metrics.js';
import type { PoisonReason } from '../write/decode.js';
import { CompactedLog, compactionKey } from './compaction.js';
import { type DeadLetter, originalMessage, parseDeadLetter } from './dead-letter.js';

/** Most dead-letter bytes one replay scan holds for re-publishing (64 MiB). */
export const REPLAY_MAX_HELD_BYTES = 64 * 1024 * 1024;

export interface DlqAdminOptions {
  clients: ConsumerClients;
  /** The service's connected group admin (shared with the probe): depth and the scan's end offsets. */
  admin: GroupAdmin;
  deadLetters: DeadLetterProducer;
  metrics: ConsumerMetrics;
  dlqTopic: string;
  groupId: string;
  maxRecords: number;
  /** Bound on one scan's wall time. Default 20 s. */
  scanTimeoutMs?: number;
  /** Bound on the dead-letter bytes a replay scan holds. Default `REPLAY_MAX_HELD_BYTES`. */
  maxHeldBytes?: number;
}

/** The dead-letter topic's depth, in all and per partition (`GET /admin/dlq`). */
export interface DlqDepth {
  topic: string;
  depth: number;
  partitions: PartitionDepth[];
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
  destination?: RecordPosition;
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

/** A live dead letter found by a scan: its description and, for replay, its bytes. */
interface Scanned {
  key: string;
  listed: DlqListedRecord;
  /** The dead letter's record value (a copy), kept only by a replay scan. */
  value?: Buffer;
}

interface ScanResult {
  items: Scanned[];
  scanned: number;
  truncated: boolean;
}

export class DlqAdmin {
  constructor(private readonly opts: DlqAdminOptions) {}

  async depth(): Promise<DlqDepth> {
    const { depth, partitions } = topicDepth(await this.opts.admin.partitionRanges(this.opts.dlqTopic));
    return { topic: this.opts.dlqTopic, depth, partitions };
  }

  async list(limit: number, reason?: PoisonReason): Promise<DlqListing> {
    const scan = await this.scan(limit, reason, false);
    const records = scan.items.map((s) => s.listed);
    return { records, scanned: scan.scanned, truncated: scan.truncated, returned: records.length };
  }

  async replay(limit: number, reason: PoisonReason | undefined, dryRun: boolean): Promise<ReplayReport> {
    const { metrics } = this.opts;
    let scan: ScanResult;
    try {
      scan = await this.scan(limit, reason, !dryRun);
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
      report.records = scan.items.map((s) => ({ ...s.listed, outcome: 'skipped' as const }));
      metrics.replayOperation('skipped');
      metrics.replayRecords('skipped', scan.items.length);
      return report;
    }
    for (const item of scan.items) {
      const entry: ReplayEntry = { ...item.listed, outcome: 'success' };
      const letter = parseDeadLetter(item.value ?? null) as DeadLetter;
      item.value = undefined; // let it go as soon as it is used
      try {
        entry.destination = await this.opts.deadLetters.replay(originalMessage(letter));
        await this.opts.deadLetters.tombstone(item.key, item.listed.partition);
        report.replayed++;
      } catch (err) {
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

  /**
   * The live dead letters (compaction semantics) matching `reason`, the first `wanted` in
   * (partition, offset) order. `truncated`: a bound stopped the scan before the end, or more than
   * `wanted` matched. `keepValues`: also keep each candidate's bytes (replay).
   */
  private async scan(
    wanted: number,
    reason: PoisonReason | undefined,
    keepValues: boolean,
  ): Promise<ScanResult> {
    const maxHeldBytes = this.opts.maxHeldBytes ?? REPLAY_MAX_HELD_BYTES;
    const live = new CompactedLog<Scanned>();
    const { scanned, complete } = await scanDeadLetters(
      this.opts.clients,
      this.opts.admin,
      {
        dlqTopic: this.opts.dlqTopic,
        groupId: this.opts.groupId,
        maxRecords: this.opts.maxRecords,
        timeoutMs: this.opts.scanTimeoutMs ?? 20_000,
      },
      ({ partition, offset, key: recordKey, value }) => {
        const key = compactionKey(recordKey, partition, offset);
        live.remove(key); // the latest record of a key wins; a tombstone only removes
        const letter = value ? parseDeadLetter(value) : undefined;
        if (!letter || (reason && letter.data.reason !== reason)) return 'next';
        const item: Scanned = { key, listed: describe(key, partition, offset, letter) };
        let bytes = 0;
        if (keepValues) {
          bytes = value!.byteLength;
          if (live.heldBytes + bytes > maxHeldBytes) return 'stop';
          item.value = Buffer.from(value!); // a copy: do not retain the fetch buffer
        }
        live.keep(key, item, { partition, offset }, bytes);
        return 'next';
      },
    );
    const { items, more } = live.first(wanted);
    return { items, scanned, truncated: !complete || more };
  }
}

function describe(key: string, partition: number, offset: string, letter: DeadLetter): DlqListedRecord {
  const d = letter.data;
  return {
    key,
    partition,
    offset,
    time: letter.time,
    reason: d.reason,
    detail: d.detail,
    origin: d.origin,
    valueBytes: d.record.value === null ? 0 : Buffer.byteLength(d.record.value, 'base64'),
    headers: d.record.headers.map((h) => h.key),
  };
}
