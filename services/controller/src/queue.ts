/**
 * The work queue, as client-go's: keys, not objects (the worker reads the latest object from the
 * cache), each key at most once in the queue, never handed to two workers at once (a key added
 * while it is processed is queued again when `done`), and a per-key failure count that sets an
 * exponential backoff until `forget` (a success) resets it.
 */
import { type Backoff, backoffDelay } from '@event-observatory/service-kit/resilience';

export interface WorkQueueOptions {
  /** Per-key backoff of `addRateLimited`; no jitter unless given. */
  backoff: Backoff;
  /** Called when the number of queued keys changes (the depth gauge). */
  onDepth?: (depth: number) => void;
}

export class WorkQueue {
  private readonly queue: string[] = [];
  private readonly queued = new Set<string>();
  private readonly processing = new Set<string>();
  /** Added while processing: queued again by `done`. */
  private readonly dirty = new Set<string>();
  private readonly failures = new Map<string, number>();
  /** Delayed adds: the timer and when it fires. */
  private readonly timers = new Map<string, { timer: NodeJS.Timeout; at: number }>();
  private waiters: Array<(key: string | undefined) => void> = [];
  private closed = false;

  constructor(private readonly opts: WorkQueueOptions) {}

  /** Queues `key` unless it is queued already (or marks it for after its current processing). */
  add(key: string): void {
    if (this.closed) return;
    if (this.processing.has(key)) {
      this.dirty.add(key);
      return;
    }
    if (this.queued.has(key)) return;
    const waiter = this.waiters.shift();
    if (waiter) {
      this.processing.add(key);
      waiter(key);
      return;
    }
    this.queued.add(key);
    this.queue.push(key);
    this.opts.onDepth?.(this.queue.length);
  }

  /**
   * Adds `key` after `ms`; while one delayed add of `key` is pending, the earlier of the two is
   * kept (client-go's delaying queue), so a later, shorter delay is never held up by a longer one.
   */
  addAfter(key: string, ms: number): void {
    if (this.closed) return;
    if (ms <= 0) {
      this.add(key);
      return;
    }
    const at = Date.now() + ms;
    const pending = this.timers.get(key);
    if (pending) {
      if (pending.at <= at) return;
      clearTimeout(pending.timer);
    }
    const timer = setTimeout(() => {
      this.timers.delete(key);
      this.add(key);
    }, ms);
    timer.unref();
    this.timers.set(key, { timer, at });
  }

  /**
   * Adds `key` after its backoff, which doubles with each failure since the last `forget`, and
   * at most `maxDelayMs` (a deadline of the caller's); returns the delay.
   */
  addRateLimited(key: string, maxDelayMs = Number.POSITIVE_INFINITY): number {
    const failures = this.failures.get(key) ?? 0;
    this.failures.set(key, failures + 1);
    const delay = Math.min(backoffDelay(this.opts.backoff, failures), Math.max(0, maxDelayMs));
    this.addAfter(key, delay);
    return delay;
  }

  /** Resets the failure count of `key` (after a success). */
  forget(key: string): void {
    this.failures.delete(key);
  }

  /** Failures of `key` since the last `forget`. */
  retries(key: string): number {
    return this.failures.get(key) ?? 0;
  }

  /** The next key (marked as processing), or undefined once the queue is shut down. */
  get(): Promise<string | undefined> {
    const key = this.queue.shift();
    if (key !== undefined) {
      this.queued.delete(key);
      this.processing.add(key);
      this.opts.onDepth?.(this.queue.length);
      return Promise.resolve(key);
    }
    if (this.closed) return Promise.resolve(undefined);
    return new Promise((resolve) => this.waiters.push(resolve));
  }

  /** Ends the processing of `key`; queues it again if it was added meanwhile. */
  done(key: string): void {
    this.processing.delete(key);
    if (this.dirty.delete(key)) this.add(key);
  }

  get depth(): number {
    return this.queue.length;
  }

  /** Stops handing out keys: pending `get`s resolve undefined, timers are dropped. */
  shutDown(): void {
    this.closed = true;
    for (const { timer } of this.timers.values()) clearTimeout(timer);
    this.timers.clear();
    for (const waiter of this.waiters) waiter(undefined);
    this.waiters = [];
  }
}
