/**
 * Retry with exponential backoff, as one policy object instead of loops written per call site.
 * The delay for attempt n (0-based) is `min(max, initial * multiplier^n)`, stretched by up to
 * `randomFactor` (never shortened, never past `max`): Akka's backoff, which the spec's consumer
 * restart policy names.
 */
import { setTimeout as sleep } from 'node:timers/promises';

export interface Backoff {
  initialMs: number;
  maxMs: number;
  /** Growth per attempt; default 2. */
  multiplier?: number;
  /** Each delay is lengthened by a random 0..randomFactor of itself; default 0. */
  randomFactor?: number;
}

/**
 * The delay before retry number `attempt` (0 for the first retry).
 *
 * @example
 * backoffDelay({ initialMs: 1_000, maxMs: 30_000 }, 3); // 8000
 */
export function backoffDelay(policy: Backoff, attempt: number, random: () => number = Math.random): number {
  const growth = (policy.multiplier ?? 2) ** Math.min(attempt, 30);
  const base = Math.min(policy.maxMs, policy.initialMs * growth);
  const stretched = base * (1 + random() * (policy.randomFactor ?? 0));
  return Math.round(Math.min(policy.maxMs, stretched));
}

export interface RetryOptions {
  backoff: Backoff;
  /** Tries in all, the first included; default unlimited (until success or abort). */
  attempts?: number;
  /** Aborting ends the wait at once; `retry` then rejects with the signal's reason. */
  signal?: AbortSignal;
  /** Whether a failure is worth another try; default every failure is. */
  retryable?: (err: unknown) => boolean;
  /** Called before each wait, e.g. to log the failure. */
  onRetry?: (err: unknown, attempt: number, delayMs: number) => void;
  random?: () => number;
}

/**
 * Calls `fn` until it resolves, waiting the backoff between failures. Rejects with the last
 * failure when it is not retryable or the attempts are used up.
 *
 * @example
 * await retry(() => deadLetters.publish(messages), {
 *   backoff: { initialMs: 200, maxMs: 5_000 },
 *   signal,
 *   onRetry: (err) => log.warn({ err }, 'dead-letter publish failed'),
 * });
 */
export async function retry<T>(fn: (attempt: number) => Promise<T>, opts: RetryOptions): Promise<T> {
  const attempts = opts.attempts ?? Number.POSITIVE_INFINITY;
  if (!(attempts >= 1)) throw new RangeError(`retry: attempts must be at least 1, got ${attempts}`);
  for (let attempt = 0; ; attempt++) {
    opts.signal?.throwIfAborted();
    try {
      return await fn(attempt);
    } catch (err) {
      if (attempt + 1 >= attempts || (opts.retryable && !opts.retryable(err))) throw err;
      const delayMs = backoffDelay(opts.backoff, attempt, opts.random);
      opts.onRetry?.(err, attempt, delayMs);
      // timers/promises rejects an aborted wait with its own AbortError; pass the reason on.
      await sleep(delayMs, undefined, { signal: opts.signal }).catch(() => opts.signal?.throwIfAborted());
    }
  }
}
