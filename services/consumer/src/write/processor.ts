/**
 * Processes one grouped batch: decode, dead-letter what cannot be decoded or is older than the
 * store's retained range, write the rows and checkpoints in one transaction, retry, isolate poison
 * by bisection, dead-letter it, and report.
 * Nothing here commits broker offsets: the caller commits only after `process` resolved, so an
 * offset is committed only once its record is durable (stored, a duplicate, or dead-lettered).
 * See DESIGN.md for why.
 */

import type { Logger } from '@event-observatory/service-kit/logger';
import { type Backoff, retry } from '@event-observatory/service-kit/resilience';
import {
  type Checkpoint,
  classifyStoreError,
  describeStoreFailure,
  type EventInsertResult,
  type EventInsertRow,
  type StoreFailure,
} from '@event-observatory/store';
import {
  type Context,
  context,
  type Link,
  propagation,
  ROOT_CONTEXT,
  SpanKind,
  SpanStatusCode,
  type Tracer,
  trace,
} from '@opentelemetry/api';
import { buildDeadLetter } from '../dlq/dead-letter.js';
import type { BatchOutcome, ConsumerMetrics } from '../metrics.js';
import { type Decoded, decodeRecord, type PoisonReason } from './decode.js';
import { type ConsumedRecord, nextOffset } from './record.js';
import type { DeadLetterSink, EventSink } from './sink.js';

/**
 * The reason the stream aborts its processor's signal with when it stops: the batch was abandoned
 * while waiting, nothing of it was committed.
 */
export class Aborted extends Error {
  override name = 'Aborted';
}

export interface ProcessorOptions {
  sink: EventSink;
  deadLetters: DeadLetterSink;
  metrics: ConsumerMetrics;
  group: string;
  writeAttempts: number;
  retryDelayMs: number;
  log: Logger;
  /** Ceiling of the wait between retries during a store or broker outage. Default 5 s. */
  maxOutageDelayMs?: number;
  now?: () => Date;
  /**
   * Epoch milliseconds where the store's retained range starts (`RetainedRange.startMs`): an event
   * older than it is dead-lettered, not written. Default: no bound.
   */
  retainedFrom?: () => number;
  tracer?: Tracer;
}

export interface BatchResult {
  outcome: BatchOutcome;
  attempted: number;
  inserted: number;
  duplicates: number;
  deadLettered: number;
  checkpoints: Checkpoint[];
}

interface Pending {
  record: ConsumedRecord;
  row: EventInsertRow;
}

interface Poison {
  record: ConsumedRecord;
  reason: PoisonReason;
  detail: string;
}

export class BatchProcessor {
  private readonly tracer: Tracer;
  private readonly now: () => Date;
  /** Wait between tries during a store or broker outage: the retry delay doubling to the ceiling. */
  private readonly outage: Backoff;
  /** The failure each write waiting out the store now last met (writes run concurrently). */
  private readonly waits = new Map<symbol, StoreFailure>();
  /** The error each dead-letter publish retrying now last met. */
  private readonly deadLetterWaits = new Map<symbol, string>();

  /**
   * A store failure a write is waiting out now (a read-only primary, a full disk, ...), for
   * readiness to say why; undefined when no write waits.
   */
  get storeOutage(): StoreFailure | undefined {
    return this.waits.values().next().value;
  }

  /**
   * Why a batch's dead letters are not acknowledged now (the broker's last error), for readiness:
   * the batch and its partitions wait until they are, however long; undefined when none waits.
   */
  get deadLetterOutage(): string | undefined {
    return this.deadLetterWaits.values().next().value;
  }

  constructor(private readonly opts: ProcessorOptions) {
    this.tracer = opts.tracer ?? trace.getTracer('@event-observatory/consumer');
    this.now = opts.now ?? (() => new Date());
    this.outage = { initialMs: Math.max(opts.retryDelayMs, 50), maxMs: opts.maxOutageDelayMs ?? 5_000 };
  }

  async process(records: readonly ConsumedRecord[], signal: AbortSignal): Promise<BatchResult> {
    const { metrics } = this.opts;
    const stop = metrics.batchLatency.start();
    metrics.batchSize.observe({}, records.length);
    const { parent, links } = traceContexts(records);
    return this.tracer.startActiveSpan(
      `${records[0]?.topic ?? 'batch'} process`,
      { kind: SpanKind.CONSUMER, links, attributes: { 'messaging.batch.message_count': records.length } },
      parent,
      async (span) => {
        try {
          const result = await this.run(records, signal);
          stop({ outcome: result.outcome });
          span.setAttributes({
            'observatory.inserted': result.inserted,
            'observatory.dead_lettered': result.deadLettered,
          });
          return result;
        } catch (err) {
          stop({ outcome: 'failure' });
          span.setStatus({ code: SpanStatusCode.ERROR, message: (err as Error).message });
          throw err;
        } finally {
          span.end();
        }
      },
    );
  }

  /** Decodes one record, timed by `consume_decode_duration_seconds`. */
  decode(record: ConsumedRecord): Decoded {
    const stopDecode = this.opts.metrics.decodeDuration.start();
    const decoded = decodeRecord(record, this.now().getTime());
    stopDecode();
    return decoded;
  }

  /** Decodes records ahead of their group (see `ConsumedRecord.decoded`). */
  prepare(records: readonly ConsumedRecord[]): void {
    for (const r of records) r.decoded ??= this.decode(r);
  }

  private async run(records: readonly ConsumedRecord[], signal: AbortSignal): Promise<BatchResult> {
    const { metrics } = this.opts;
    const retainedFrom = this.opts.retainedFrom?.() ?? Number.NEGATIVE_INFINITY;
    const pending: Pending[] = [];
    const refused: Poison[] = [];
    let pastRetention = 0;
    for (const record of records) {
      const decoded = record.decoded ?? this.decode(record);
      record.decoded = undefined; // the row is kept in `pending`; drop the cached event
      if (!decoded.ok) refused.push({ record, reason: decoded.reason, detail: decoded.detail });
      else if (decoded.occurredAtMs < retainedFrom) {
        refused.push({
          record,
          reason: 'unpersistable',
          detail: pastRetentionDetail(decoded.row.occurredAt, retainedFrom),
        });
        pastRetention++;
      } else pending.push({ record, row: decoded.row });
    }
    const checkpoints = checkpointsOf(records);

    // Dead letters first: their offsets are committed with the batch, so they must be durable
    // (acknowledged by the broker) before the checkpoint transaction commits.
    await this.deadLetter(refused, signal);
    if (pastRetention > 0) metrics.pastRetention.inc(pastRetention);

    const rows = pending.map((p) => p.row);
    let result: EventInsertResult;
    let storePoison: Poison[] = [];
    try {
      result = await this.writeBatch(rows, checkpoints, signal);
    } catch (err) {
      if (signal.aborted) throw err;
      const isolated = await this.isolate(pending, signal);
      result = isolated.result;
      storePoison = isolated.poison;
      await this.deadLetter(storePoison, signal);
      // Every failure is waited out here (the rows are stored; only their position is missing),
      // and readiness says so as for the batch's own write.
      await this.untilStoreUp(
        () => this.opts.sink.checkpoint(checkpoints),
        signal,
        (failure) => this.opts.log.warn({ err: failure.message }, 'checkpoint write failed; retrying'),
        () => true,
      );
    }

    for (const [type, n] of result.insertedByType) metrics.persisted(type, n);
    const duplicates = result.attempted - result.inserted;
    if (duplicates > 0) metrics.duplicates.inc(duplicates);
    const deadLettered = refused.length + storePoison.length;
    const outcome: BatchOutcome =
      rows.length - storePoison.length === 0 ? 'skipped' : result.inserted === 0 ? 'duplicate' : 'success';
    return {
      outcome,
      attempted: result.attempted,
      inserted: result.inserted,
      duplicates,
      deadLettered,
      checkpoints,
    };
  }

  /**
   * The whole batch with its checkpoints in one transaction. A transient failure (the store's
   * condition) waits with the outage backoff and tries again, indefinitely; a deterministic one
   * (some row's fault) is retried `CONSUMER_WRITE_ATTEMPTS` times after the first try,
   * `CONSUMER_RETRY_DELAY` apart, and then rejects: the caller bisects.
   */
  private writeBatch(
    rows: EventInsertRow[],
    checkpoints: Checkpoint[],
    signal: AbortSignal,
  ): Promise<EventInsertResult> {
    const { log, retryDelayMs, writeAttempts } = this.opts;
    return retry(
      (attempt) =>
        this.untilStoreUp(
          () =>
            this.traced('INSERT events.cloud_event', rows.length, () =>
              this.opts.sink.writeWithCheckpoints(rows, checkpoints),
            ),
          signal,
          (failure) =>
            log.warn({ err: failure.message, code: failure.code }, 'store unavailable; batch not committed'),
        ).catch((err: unknown) => {
          if (!signal.aborted) {
            const failure = classifyStoreError(err);
            log.warn(
              { err: failure.message, code: failure.code, attempt: attempt + 1, records: rows.length },
              'batch write refused',
            );
          }
          throw err;
        }),
      {
        backoff: { initialMs: retryDelayMs, maxMs: retryDelayMs },
        // Retried CONSUMER_WRITE_ATTEMPTS times after the first try, as the spec words it.
        attempts: writeAttempts + 1,
        signal,
      },
    );
  }

  /**
   * Calls `write` until it succeeds or fails deterministically (a failure `retryable` does not
   * take: by default any but a transient one), waiting out the others; readiness reads the last.
   */
  private untilStoreUp<T>(
    write: () => Promise<T>,
    signal: AbortSignal,
    onTransient?: (failure: StoreFailure) => void,
    retryable: (err: unknown) => boolean = (err) => classifyStoreError(err).kind === 'transient',
  ): Promise<T> {
    const wait = Symbol('store wait');
    return retry(write, {
      backoff: this.outage,
      signal,
      retryable,
      onRetry: (err) => {
        const failure = classifyStoreError(err);
        this.waits.set(wait, failure);
        onTransient?.(failure);
      },
    }).finally(() => this.waits.delete(wait));
  }

  /**
   * Poison isolation: halves the rows until each failing part is one row. A part that inserts is
   * durable on its own (autocommit; inserts are idempotent, so a later retry of the batch is
   * harmless). A transient failure during isolation waits and retries the same part.
   */
  private async isolate(
    pending: Pending[],
    signal: AbortSignal,
  ): Promise<{ result: EventInsertResult; poison: Poison[] }> {
    const result: EventInsertResult = { attempted: 0, inserted: 0, insertedByType: new Map() };
    const poison: Poison[] = [];
    const bisect = async (part: Pending[]): Promise<void> => {
      let r: EventInsertResult;
      try {
        r = await this.untilStoreUp(() => this.opts.sink.insert(part.map((p) => p.row)), signal);
      } catch (err) {
        if (signal.aborted) throw err;
        if (part.length === 1) {
          poison.push({
            record: part[0]!.record,
            reason: 'unpersistable',
            detail: describeStoreFailure(classifyStoreError(err)),
          });
          return;
        }
        const mid = part.length >> 1;
        await bisect(part.slice(0, mid));
        await bisect(part.slice(mid));
        return;
      }
      result.attempted += r.attempted;
      result.inserted += r.inserted;
      for (const [t, n] of r.insertedByType)
        result.insertedByType.set(t, (result.insertedByType.get(t) ?? 0) + n);
    };
    await bisect(pending);
    return { result, poison };
  }

  private async deadLetter(poison: Poison[], signal: AbortSignal): Promise<void> {
    if (poison.length === 0) return;
    const now = this.now();
    const messages = poison.map(
      (p) => buildDeadLetter(p.record, p.reason, p.detail, this.opts.group, now).message,
    );
    const wait = Symbol('dead-letter wait');
    await retry(() => this.opts.deadLetters.publish(messages), {
      backoff: this.outage,
      signal,
      onRetry: (err) => {
        const message = err instanceof Error ? err.message : String(err);
        this.deadLetterWaits.set(wait, message);
        this.opts.log.warn({ err: message }, 'dead-letter publish failed; batch not committed');
      },
    }).finally(() => this.deadLetterWaits.delete(wait));
    for (const p of poison) {
      this.opts.metrics.poison(p.reason);
      this.opts.log.warn(
        {
          reason: p.reason,
          detail: p.detail,
          topic: p.record.topic,
          partition: p.record.partition,
          offset: p.record.offset,
        },
        'record dead-lettered',
      );
    }
  }

  private traced<T>(name: string, rows: number, fn: () => Promise<T>): Promise<T> {
    return this.tracer.startActiveSpan(
      name,
      {
        kind: SpanKind.CLIENT,
        attributes: { 'db.system': 'postgresql', 'db.operation': 'INSERT', 'db.rows': rows },
      },
      async (span) => {
        try {
          return await fn();
        } catch (err) {
          span.setStatus({ code: SpanStatusCode.ERROR, message: (err as Error).message });
          throw err;
        } finally {
          span.end();
        }
      },
    );
  }
}

/**
 * Why an event older than the retained range is dead-lettered: retention detached its month (or
 * one after it), and the default partition is no place for it.
 */
function pastRetentionDetail(time: string, retainedFromMs: number): string {
  return (
    `past retention: time ${time} is before ${new Date(retainedFromMs).toISOString()}, ` +
    'the end of the newest month retention detached from the store'
  );
}

/** Per partition, the offset after the last record of the batch. */
export function checkpointsOf(records: readonly ConsumedRecord[]): Checkpoint[] {
  const last = new Map<string, Checkpoint>();
  for (const r of records) {
    const k = `${r.topic}\u0000${r.partition}`;
    const next = nextOffset(r.offset);
    const prev = last.get(k);
    if (!prev || BigInt(next) > BigInt(prev.nextOffset))
      last.set(k, { topic: r.topic, partition: r.partition, nextOffset: next });
  }
  // A fixed order, so concurrent transactions lock checkpoint rows in the same order.
  return [...last.values()].sort((a, b) =>
    a.topic < b.topic ? -1 : a.topic > b.topic ? 1 : a.partition - b.partition,
  );
}

const headerGetter = {
  keys: (carrier: ConsumedRecord['headers']) => Object.keys(carrier),
  get: (carrier: ConsumedRecord['headers'], key: string) => {
    const v = carrier[key];
    const first = Array.isArray(v) ? v[0] : v;
    return first === undefined ? undefined : first.toString();
  },
};

/**
 * Trace context of a batch: the producer context of its first record carrying a `traceparent`
 * becomes the parent (so a single event's trace continues from ingest through the consumer into
 * the INSERT), every other record's context a link.
 */
function traceContexts(records: readonly ConsumedRecord[]): { parent: Context; links: Link[] } {
  let parent: Context | undefined;
  const links: Link[] = [];
  for (const r of records) {
    if (r.headers.traceparent === undefined) continue;
    const ctx = propagation.extract(ROOT_CONTEXT, r.headers, headerGetter);
    const sc = trace.getSpanContext(ctx);
    if (!sc) continue;
    if (!parent) parent = ctx;
    else if (links.length < 128) links.push({ context: sc });
  }
  return { parent: parent ?? context.active(), links };
}
