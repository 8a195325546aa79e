/**
 * Restart policy of the consumer stream: backoff from 1 s doubling to
 * 30 s with a random factor of 0.2 (each delay lengthened by 0 to 20 %, capped at 30 s), and a budget of 50 restarts in 10 minutes; the 51st failure
 * inside the window stops the stream for good (the process stays live).
 */
import { backoffDelay } from '@event-observatory/service-kit/resilience';

export interface RestartPolicyOptions {
  minBackoffMs?: number;
  maxBackoffMs?: number;
  randomFactor?: number;
  maxRestarts?: number;
  windowMs?: number;
  random?: () => number;
}

export class RestartPolicy {
  private readonly restarts: number[] = [];
  private consecutive = 0;
  readonly minBackoffMs: number;
  readonly maxBackoffMs: number;
  readonly randomFactor: number;
  readonly maxRestarts: number;
  readonly windowMs: number;
  private readonly random: () => number;

  constructor(opts: RestartPolicyOptions = {}) {
    this.minBackoffMs = opts.minBackoffMs ?? 1_000;
    this.maxBackoffMs = opts.maxBackoffMs ?? 30_000;
    this.randomFactor = opts.randomFactor ?? 0.2;
    this.maxRestarts = opts.maxRestarts ?? 50;
    this.windowMs = opts.windowMs ?? 600_000;
    this.random = opts.random ?? Math.random;
  }

  /**
   * Records a failure at `now`; returns the delay before the next start, or undefined when the
   * budget is used up (stop for good).
   */
  onFailure(now: number): number | undefined {
    while (this.restarts.length > 0 && now - this.restarts[0]! > this.windowMs) this.restarts.shift();
    if (this.restarts.length >= this.maxRestarts) return undefined;
    this.restarts.push(now);
    // Akka's randomFactor: the delay is stretched by up to the factor, never shortened (so the
    // first restart never comes before the 1 s minimum), and never exceeds the maximum.
    const policy = {
      initialMs: this.minBackoffMs,
      maxMs: this.maxBackoffMs,
      randomFactor: this.randomFactor,
    };
    return backoffDelay(policy, this.consecutive++, this.random);
  }

  /** The stream made progress: the next failure starts the backoff from the minimum again. */
  onProgress(): void {
    this.consecutive = 0;
  }

  /** An operator started the stream again: a fresh budget. */
  reset(): void {
    this.consecutive = 0;
    this.restarts.length = 0;
  }

  get restartsInWindow(): number {
    return this.restarts.length;
  }
}
