/**
 * The consumer stream: one group member in group `BROKER_GROUP_ID` on `BROKER_TOPIC`, its
 * lifecycle (start, stop, pause, resume, restart) and its supervision (restart after a failure
 * with backoff; stopped for good when the restart budget is used up).
 *
 * Offsets: `autoCommit` is off and nothing is auto-resolved. A partition's records go to the
 * grouper in chunks of at most `CONSUMER_BATCH_SIZE`; only once the group that holds a chunk was
 * written (rows and checkpoints committed, dead letters acknowledged) is the chunk's last offset
 * resolved and committed to the broker.
 */

import { setTimeout as sleep } from 'node:timers/promises';
import type { ConsumerClients, GroupMember, PartitionBatch } from '@event-observatory/broker';
import type { Logger } from '@event-observatory/service-kit/logger';
import { settleWithin, TIMED_OUT } from '@event-observatory/service-kit/resilience';
import { Aborted, type BatchProcessor } from '../write/processor.js';
import { nextOffset } from '../write/record.js';
import { BatchGrouper } from './grouper.js';
import { RestartPolicy } from './supervision.js';

export type StreamState = 'stopped' | 'starting' | 'running' | 'paused' | 'stopping' | 'failed';

export interface StreamOptions {
  clients: ConsumerClients;
  topic: string;
  groupId: string;
  batchSize: number;
  batchWindowMs: number;
  drainTimeoutMs: number;
  processor: BatchProcessor;
  log: Logger;
  policy?: RestartPolicy;
  /** Partitions whose batches are handled at once (their records share groups). Default 12. */
  partitionsConsumedConcurrently?: number;
  /**
   * Groups written at once (`CONSUMER_WRITE_CONCURRENCY`, default 2 in the service; 1 here). Groups
   * never share a partition: a partition's next chunk is submitted after its previous commit.
   */
  writeConcurrency?: number;
  /** Test only (`CONSUMER_TEST_HOLD_AFTER_WRITE`): wait between a chunk's durable write and its commit. */
  holdAfterWriteMs?: number;
}

export interface StreamStatus {
  state: StreamState;
  groupId: string;
  topic: string;
  restartsInWindow: number;
  lastError: string | undefined;
}

export class ConsumerStream {
  private stateValue: StreamState = 'stopped';
  private consumer: GroupMember | undefined;
  private abort = new AbortController();
  private restartTimer: NodeJS.Timeout | undefined;
  private lastError: string | undefined;
  private readonly policy: RestartPolicy;
  private readonly grouper: BatchGrouper;
  /** Serialises lifecycle transitions. */
  private queue: Promise<unknown> = Promise.resolve();
  private generation = 0;
  /** Paused by an operator: a relaunch after a crash joins paused too, until `resume` (or stop, start, restart). */
  private pausedByOperator = false;

  constructor(private readonly opts: StreamOptions) {
    this.policy = opts.policy ?? new RestartPolicy();
    this.grouper = new BatchGrouper({
      size: opts.batchSize,
      windowMs: opts.batchWindowMs,
      maxInFlight: opts.writeConcurrency ?? 1,
      flush: (records) => opts.processor.process(records, this.abort.signal),
    });
  }

  get state(): StreamState {
    return this.stateValue;
  }

  /** True while records are being consumed (not paused, stopped or failed). */
  get consuming(): boolean {
    return this.stateValue === 'running';
  }

  status(): StreamStatus {
    return {
      state: this.stateValue,
      groupId: this.opts.groupId,
      topic: this.opts.topic,
      restartsInWindow: this.policy.restartsInWindow,
      lastError: this.lastError,
    };
  }

  /** Starts consuming; 'skipped' when already running or paused. A failed stream gets a fresh budget. */
  start(): Promise<'success' | 'skipped'> {
    return this.serial(async () => {
      if (this.stateValue === 'running' || this.stateValue === 'paused' || this.stateValue === 'starting')
        return 'skipped';
      if (this.stateValue === 'failed') this.policy.reset();
      this.clearRestart();
      this.pausedByOperator = false;
      await this.launch();
      return 'success';
    });
  }

  /** Stops consuming after draining the in-flight batch (bounded by the drain timeout). */
  stop(): Promise<'success' | 'skipped'> {
    return this.serial(async () => {
      this.clearRestart();
      if (this.stateValue === 'stopped' || this.stateValue === 'failed') {
        this.stateValue = 'stopped';
        return 'skipped';
      }
      await this.halt();
      this.pausedByOperator = false;
      this.stateValue = 'stopped';
      return 'success';
    });
  }

  pause(): Promise<'success' | 'skipped'> {
    return this.serial(async () => {
      if (this.stateValue !== 'running' || !this.consumer) return 'skipped';
      this.consumer.pause();
      this.pausedByOperator = true;
      this.stateValue = 'paused';
      return 'success';
    });
  }

  resume(): Promise<'success' | 'skipped'> {
    return this.serial(async () => {
      // Restarting after a crash while paused: it joins consuming.
      if (this.stateValue === 'starting' && this.pausedByOperator) {
        this.pausedByOperator = false;
        return 'success';
      }
      if (this.stateValue !== 'paused' || !this.consumer) return 'skipped';
      this.consumer.resume();
      this.pausedByOperator = false;
      this.stateValue = 'running';
      return 'success';
    });
  }

  restart(): Promise<'success'> {
    return this.serial(async () => {
      this.clearRestart();
      if (this.consumer) await this.halt();
      this.policy.reset();
      this.pausedByOperator = false;
      await this.launch();
      return 'success' as const;
    });
  }

  private serial<T>(fn: () => Promise<T>): Promise<T> {
    const next = this.queue.then(fn, fn);
    this.queue = next.catch(() => {});
    return next;
  }

  private clearRestart(): void {
    if (this.restartTimer) clearTimeout(this.restartTimer);
    this.restartTimer = undefined;
  }

  private async launch(): Promise<void> {
    this.stateValue = 'starting';
    this.abort = new AbortController();
    const generation = ++this.generation;
    const { clients, topic, groupId } = this.opts;
    const consumer = clients.groupMember({
      groupId,
      maxWaitTimeInMs: Math.max(100, this.opts.batchWindowMs),
    });
    this.consumer = consumer;
    consumer.onCrash((error) => {
      if (generation !== this.generation) return;
      this.onFailure(error);
    });
    try {
      await consumer.run({
        topic,
        concurrency: this.opts.partitionsConsumedConcurrently ?? 12,
        onBatch: (batch) => this.eachBatch(batch),
      });
      // A join that fails inside run() is reported as a crash before run() resolves: onFailure
      // has then scheduled the relaunch, and this consumer must not be called running.
      if (generation !== this.generation) return;
      if (this.pausedByOperator) {
        consumer.pause();
        this.stateValue = 'paused';
        this.opts.log.info(
          { groupId, topic },
          'consumer stream started again, paused as an operator left it',
        );
        return;
      }
      this.stateValue = 'running';
      this.opts.log.info({ groupId, topic }, 'consumer stream started');
    } catch (err) {
      if (generation === this.generation) this.onFailure(err as Error);
    }
  }

  private async halt(): Promise<void> {
    const consumer = this.consumer;
    this.consumer = undefined;
    this.generation++;
    this.stateValue = 'stopping';
    const stopped = Promise.resolve(consumer?.stop());
    try {
      // Past the drain timeout the in-flight batch stops waiting for the store and stays
      // uncommitted (redelivered later); the member then finishes leaving the group.
      if ((await settleWithin(stopped, this.opts.drainTimeoutMs)) === TIMED_OUT) this.stopWaiting();
      await stopped;
    } catch (err) {
      this.opts.log.warn({ err: (err as Error).message }, 'consumer did not stop cleanly');
    } finally {
      this.stopWaiting();
    }
  }

  /** Ends the processor's waits (outage backoff): the batches in flight reject with `Aborted`. */
  private stopWaiting(): void {
    this.abort.abort(new Aborted('stopping'));
  }

  private onFailure(error: Error): void {
    this.lastError = error.message;
    this.consumer = undefined;
    this.generation++;
    this.stopWaiting();
    const delay = this.policy.onFailure(Date.now());
    if (delay === undefined) {
      this.stateValue = 'failed';
      this.opts.log.error(
        { err: error.message, restarts: this.policy.restartsInWindow },
        'consumer stream stopped for good: restart budget used up',
      );
      return;
    }
    this.stateValue = 'starting';
    this.opts.log.warn({ err: error.message, delay_ms: delay }, 'consumer stream failed; restarting');
    this.restartTimer = setTimeout(() => {
      this.restartTimer = undefined;
      void this.serial(async () => {
        if (this.stateValue === 'starting' && !this.consumer) await this.launch();
      });
    }, delay);
  }

  private async eachBatch(batch: PartitionBatch): Promise<void> {
    this.grouper.sourceStarted();
    try {
      await this.submitAll(batch);
    } finally {
      this.grouper.sourceFinished();
    }
  }

  private async submitAll(batch: PartitionBatch): Promise<void> {
    const { records, heartbeat } = batch;
    for (let i = 0; i < records.length; i += this.opts.batchSize) {
      if (!batch.active()) return;
      const chunk = records.slice(i, i + this.opts.batchSize);
      // Decoded now, while the group before it is being written (the write is I/O-bound).
      this.opts.processor.prepare(chunk);
      const beat = setInterval(() => void heartbeat().catch(() => {}), 3_000);
      try {
        await this.grouper.submit(chunk);
      } catch (err) {
        if (err instanceof Aborted) return; // stopping: nothing committed, redelivered later
        throw err;
      } finally {
        clearInterval(beat);
      }
      const last = chunk[chunk.length - 1]!;
      if (this.opts.holdAfterWriteMs) {
        this.opts.log.info(
          { topic: batch.topic, partition: batch.partition, offset: last.offset },
          'test hold: chunk written, offset not committed yet',
        );
        await sleep(this.opts.holdAfterWriteMs);
      }
      await batch.commit(nextOffset(last.offset));
      this.policy.onProgress();
      await heartbeat().catch(() => {});
    }
  }
}
