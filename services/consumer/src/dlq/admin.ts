/**
 * Dead-letter administration: depth per partition, a bounded listing, and replay.
 *
 * A listing or replay scans the dead-letter topic (the broker's `scanDeadLetters`, at most
 * `REPLAY_MAX_RECORDS` records and 20 s) from the replay positions of the reasons asked for
 * (`positions.ts`: letters below them were replayed) and applies the topic's compaction rule
 * itself (`compaction.ts`: the latest record of a key wins, a tombstone removes its key). Only
 * then are the `reason` filter and the `limit` applied, so a replayed letter is neither listed nor
 * replayed again, however far its tombstone lies.
 *
 * Memory: a scan keeps one small description per live, matching letter (no message, no parsed
 * letter). Replay (`dryRun=false`) also keeps each candidate's dead-letter bytes (a copy, so the
 * fetch buffer is not retained) to re-publish them, at most `REPLAY_MAX_HELD_BYTES` (64 MiB) in
 * all; a scan that would hold more stops there (`truncated: true`), and the next replay goes on.
 *
 * Replay re-publishes each selected dead letter's original key, value, headers and timestamp to
 * the main topic, one at a time (sequential on purpose: the next publish starts after the previous
 * one was acknowledged, so a failure stops the run with a clear boundary and the replay keeps the
 * dead letters' order), then writes a tombstone for the dead letter's key, and stores the
 * positions (rows of `events.consumer_checkpoint`, `PositionStore`) every `POSITION_EVERY` letters
 * and at the end. One replay at a time: a second one,
 * in this process or another replica (`lock`), is refused with 409 `ABORTED`.
 *
 * `oldestPending` feeds `dlq_oldest_age_seconds` (`age.ts`): per partition it reads from the
 * lowest replay position and stops at the first letter not replayed, so it reads one letter per
 * partition (after the tombstones and replayed letters before it), within the same bounds.
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
import { ApiError } from '@event-observatory/service-kit';
import type { ConsumerMetrics } from '../metrics.js';
import { POISON_REASONS, type PoisonReason } from '../write/decode.js';
import { CompactedLog, compactionKey } from './compaction.js';
import { type DeadLetter, originalMessage, parseDeadLetter } from './dead-letter.js';
import {
  advance,
  isReplayed,
  type PendingLetter,
  type Positions,
  replayGroup,
  scanStart,
} from './positions.js';

/** Most dead-letter bytes one replay scan holds for re-publishing (64 MiB). */
export const REPLAY_MAX_HELD_BYTES = 64 * 1024 * 1024;
/** A replay stores its positions after this many re-published letters (and at its end). */
export const POSITION_EVERY = 100;

/** Where replay positions are kept, by the group named after a reason (`replayGroup`). */
export interface PositionStore {
  read(group: string): Promise<Map<number, bigint>>;
  /** Never moves a position back. */
  write(group: string, offsets: ReadonlyMap<number, bigint>): Promise<void>;
}

/** Runs `work` unless another replica runs a replay (`{ taken: false }`): the store's session lock. */
export type ReplayLock = <T>(work: () => Promise<T>) => Promise<{ taken: true; value: T } | { taken: false }>;

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
  /** Serialises replays across replicas; without it, only within this process. */
  lock?: ReplayLock;
  positions: PositionStore;
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

/**
 * Per dead-letter partition, when its oldest letter not yet replayed was dead-lettered (the
 * letter's `time`), or null when it holds none. A partition a bounded reading did not settle is
 * absent.
 */
export type OldestPending = Map<number, Date | null>;

/** A live dead letter found by a scan: its description and, for replay, its bytes. */
interface Scanned {
  key: string;
  listed: DlqListedRecord;
  /** The dead letter's record value (a copy), kept only by a replay scan. */
  value?: Buffer;
}

interface ScanResult {
  /** The first `wanted` live, matching letters in (partition, offset) order. */
  items: Scanned[];
  /** The live, matching letters past `wanted` (still pending after a replay). */
  rest: Scanned[];
  scanned: number;
  truncated: boolean;
  /** Per partition read, the next offset after the last record handled. */
  readTo: Map<number, bigint>;
  positions: Positions;
  reasons: readonly PoisonReason[];
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
    if (dryRun) return this.plan(limit, reason);
    if (this.running) throw busy();
    this.running = true;
    try {
      const lock = this.opts.lock ?? ((work) => work().then((value) => ({ taken: true as const, value })));
      const run = await lock(() => this.publish(limit, reason));
      if (!run.taken) throw busy();
      return run.value;
    } finally {
      this.running = false;
    }
  }

  private running = false;

  async oldestPending(): Promise<OldestPending> {
    const positions = await this.readPositions(POISON_REASONS);
    const from = scanStart(positions, POISON_REASONS);
    const ranges = await this.opts.admin.partitionRanges(this.opts.dlqTopic);
    const oldest: OldestPending = new Map();
    const { complete } = await scanDeadLetters(
      this.opts.clients,
      this.opts.admin,
      { ...this.scanBounds(), from },
      ({ partition, offset, value }) => {
        const letter = parseDeadLetter(value);
        if (!letter || isReplayed(positions, letter.data.reason, partition, offset)) return 'next';
        oldest.set(partition, new Date(letter.time));
        return 'partition-done';
      },
    );
    for (const { partition, low, high } of ranges) {
      const start = from.get(partition) ?? 0n;
      const nothingToRead = BigInt(high) <= (start > BigInt(low) ? start : BigInt(low));
      if (!oldest.has(partition) && (complete || nothingToRead)) oldest.set(partition, null);
    }
    return oldest;
  }

  private async plan(limit: number, reason: PoisonReason | undefined): Promise<ReplayReport> {
    const { metrics } = this.opts;
    const scan = await this.scan(limit, reason, false).catch((err) => {
      metrics.replayOperation('failure');
      throw err;
    });
    metrics.replayOperation('skipped');
    metrics.replayRecords('skipped', scan.items.length);
    return {
      ...reportOf(scan, true),
      records: scan.items.map((s) => ({ ...s.listed, outcome: 'skipped' as const })),
    };
  }

  private async publish(limit: number, reason: PoisonReason | undefined): Promise<ReplayReport> {
    const { metrics } = this.opts;
    const scan = await this.scan(limit, reason, true).catch((err) => {
      metrics.replayOperation('failure');
      throw err;
    });
    const report = reportOf(scan, false);
    let stored = 0;
    try {
      for (const [i, item] of scan.items.entries()) {
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
        if (report.replayed - stored >= POSITION_EVERY) {
          await this.storePositions(scan, scan.items.slice(i + 1));
          stored = report.replayed;
        }
      }
      await this.storePositions(scan, scan.items.slice(report.replayed));
    } finally {
      metrics.replayRecords('success', report.replayed);
      metrics.replayRecords('failure', report.failed);
    }
    metrics.replayOperation(report.failed > 0 ? 'failure' : 'success');
    return report;
  }

  /** Moves the positions past every letter replayed so far; `left` are this run's letters not (yet) replayed. */
  private async storePositions(scan: ScanResult, left: Scanned[]): Promise<void> {
    const pending: PendingLetter[] = [...left, ...scan.rest].map(({ listed }) => listed);
    const moved = advance(scan.positions, scan.reasons, scan.readTo, pending);
    for (const [reason, byPartition] of moved) {
      await this.opts.positions.write(replayGroup(this.opts.groupId, reason), byPartition);
      for (const [partition, offset] of byPartition) scan.positions.get(reason)!.set(partition, offset);
    }
  }

  private scanBounds() {
    const { dlqTopic, groupId, maxRecords, scanTimeoutMs } = this.opts;
    return { dlqTopic, groupId, maxRecords, timeoutMs: scanTimeoutMs ?? 20_000 };
  }

  private async readPositions(reasons: readonly PoisonReason[]): Promise<Positions> {
    const { positions, groupId } = this.opts;
    const each = await Promise.all(
      reasons.map(async (r) => [r, await positions.read(replayGroup(groupId, r))] as const),
    );
    return new Map(each);
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
    const reasons = reason ? [reason] : POISON_REASONS;
    const positions = await this.readPositions(reasons);
    const readTo = new Map<number, bigint>();
    const live = new CompactedLog<Scanned>();
    const { scanned, complete } = await scanDeadLetters(
      this.opts.clients,
      this.opts.admin,
      { ...this.scanBounds(), from: scanStart(positions, reasons) },
      ({ partition, offset, key: recordKey, value }) => {
        const key = compactionKey(recordKey, partition, offset);
        live.remove(key); // the latest record of a key wins; a tombstone only removes
        const letter = value ? parseDeadLetter(value) : undefined;
        const wantedLetter =
          letter &&
          (!reason || letter.data.reason === reason) &&
          !isReplayed(positions, letter.data.reason, partition, offset);
        if (wantedLetter) {
          const item: Scanned = { key, listed: describe(key, partition, offset, letter) };
          let bytes = 0;
          if (keepValues) {
            bytes = value!.byteLength;
            if (live.heldBytes + bytes > maxHeldBytes) return 'stop';
            item.value = Buffer.from(value!); // a copy: do not retain the fetch buffer
          }
          live.keep(key, item, { partition, offset }, bytes);
        }
        readTo.set(partition, BigInt(offset) + 1n);
        return 'next';
      },
    );
    const all = live.first(Number.MAX_SAFE_INTEGER).items;
    return {
      items: all.slice(0, wanted),
      rest: all.slice(wanted),
      scanned,
      truncated: !complete || all.length > wanted,
      readTo,
      positions,
      reasons,
    };
  }
}

function busy(): ApiError {
  return new ApiError('Aborted', 'a dead-letter replay is already running; try again when it has finished');
}

function reportOf(scan: ScanResult, dryRun: boolean): ReplayReport {
  const { scanned, truncated } = scan;
  return { dryRun, scanned, truncated, planned: scan.items.length, replayed: 0, failed: 0, records: [] };
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
