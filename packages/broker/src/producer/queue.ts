/**
 * The bounded hand-over queue: records waiting for the sender, counted with those in flight against
 * `BROKER_QUEUE_CAPACITY` and `BROKER_QUEUE_BYTES`. Every record leaves it through `resolve` or
 * `fail`, exactly once.
 */
import { type OutboundRecord, PublishError, type PublishFailure, type PublishReceipt } from './record.js';

export interface Pending {
  record: OutboundRecord;
  /** The record's headers plus its trace context. */
  headers: Record<string, string>;
  size: number;
  startedAt: number;
  deadline: number;
  resolve: (r: PublishReceipt) => void;
  reject: (e: PublishError) => void;
}

export interface QueueLimits {
  capacity: number;
  bytes: number;
  /** Largest batch `take` hands out, in record bytes (at least one record). */
  maxBatchBytes: number;
}

export class SendQueue {
  private readonly waiting: Pending[] = [];
  private waitingBytesSum = 0;
  /** Records waiting or in flight, and their bytes. */
  private outstanding = 0;
  private outstandingBytes = 0;
  private idleWaiters: (() => void)[] = [];
  private wake: (() => void) | undefined;
  /**
   * The two refusals, each made once and shared by every record it refuses. Under overload a full
   * queue refuses thousands of records a second, and an error with its own stack trace for each
   * cost 10 % of the ingest service's CPU; a refusal is flow control, its stack says nothing.
   */
  private readonly fullOfRecords: PublishError;
  private readonly fullOfBytes: PublishError;

  constructor(
    private readonly limits: QueueLimits,
    /** Called once per record as it settles (the latency metric). */
    private readonly onSettled: (p: Pending, outcome: 'success' | 'failure') => void,
  ) {
    this.fullOfRecords = refused(`the send queue is full (${limits.capacity} records)`);
    this.fullOfBytes = refused(`the send queue is full (${limits.bytes} bytes)`);
  }

  /** The (shared) error that refuses a record now, or undefined when it can be queued. */
  refusal(size?: number): PublishError | undefined {
    if (this.outstanding >= this.limits.capacity) return this.fullOfRecords;
    if (size !== undefined && this.outstandingBytes + size > this.limits.bytes && this.outstanding > 0)
      return this.fullOfBytes;
    return undefined;
  }

  push(p: Pending): void {
    this.waiting.push(p);
    this.outstanding++;
    this.outstandingBytes += p.size;
    this.waitingBytesSum += p.size;
    const wake = this.wake;
    this.wake = undefined;
    wake?.();
  }

  get isEmpty(): boolean {
    return this.waiting.length === 0;
  }

  /** Hand-over time of the oldest waiting record (infinitely late when none waits). */
  get oldestStartedAt(): number {
    return this.waiting[0]?.startedAt ?? Number.POSITIVE_INFINITY;
  }

  /** Whether a full batch is already waiting. */
  get hasFullBatch(): boolean {
    return this.waitingBytesSum >= this.limits.maxBatchBytes;
  }

  /** Resolves when a record is pushed, or when `interrupt` is called. */
  nextPush(): Promise<void> {
    return new Promise((resolve) => {
      this.wake = resolve;
    });
  }

  interrupt(): void {
    this.wake?.();
  }

  /** Takes the oldest records up to `maxBatchBytes` (at least one). */
  take(): Pending[] {
    let bytes = 0;
    let n = 0;
    while (n < this.waiting.length) {
      bytes += this.waiting[n]!.size;
      if (n > 0 && bytes > this.limits.maxBatchBytes) break;
      n++;
    }
    const batch = this.waiting.splice(0, n);
    for (const p of batch) this.waitingBytesSum -= p.size;
    return batch;
  }

  /** Takes every waiting record (shutdown). */
  takeAll(): Pending[] {
    this.waitingBytesSum = 0;
    return this.waiting.splice(0);
  }

  /** Resolves once nothing is waiting or in flight. */
  idle(): Promise<void> {
    if (this.outstanding === 0) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  resolve(p: Pending, receipt: PublishReceipt): void {
    this.release(p, 'success');
    p.resolve(receipt);
  }

  fail(p: Pending, kind: PublishFailure, message: string, notSent: boolean): void {
    this.release(p, 'failure');
    p.reject(new PublishError(kind, message, notSent));
  }

  private release(p: Pending, outcome: 'success' | 'failure'): void {
    this.onSettled(p, outcome);
    this.outstanding--;
    this.outstandingBytes -= p.size;
    if (this.outstanding === 0) for (const w of this.idleWaiters.splice(0)) w();
  }
}

function refused(message: string): PublishError {
  return Object.freeze(new PublishError('queue-full', message, true));
}
