/**
 * Deadlines for promises the caller cannot cancel itself (a kafkajs send, a shutdown step, a
 * health check). The work keeps running after the deadline; what ends is the wait for it, and the
 * timer never outlives the work.
 */

/** The sentinel `settleWithin` resolves to when the deadline passed first. */
export const TIMED_OUT: unique symbol = Symbol('timed out');

/** Thrown by `withTimeout`: names what timed out and after how long, for logs and error bodies. */
export class TimeoutError extends Error {
  override readonly name = 'TimeoutError';
  constructor(
    readonly what: string,
    readonly timeoutMs: number,
  ) {
    super(`${what} timed out after ${timeoutMs} ms`);
  }
}

export interface DeadlineOptions {
  /**
   * Keeps the process alive until the deadline (default false: a pending deadline alone never
   * holds the event loop open, so an otherwise finished process can exit).
   */
  ref?: boolean;
  /** Aborting ends the wait early, as if the deadline had passed (e.g. a shutdown cutting it short). */
  signal?: AbortSignal;
}

/**
 * The work's value, or `TIMED_OUT` when `ms` pass first. A rejection of the work is passed on.
 *
 * @example
 * const outcome = await settleWithin(producer.disconnect(), 10_000);
 * if (outcome === TIMED_OUT) log.warn('producer did not close in time');
 */
export function settleWithin<T>(
  work: PromiseLike<T>,
  ms: number,
  opts: DeadlineOptions = {},
): Promise<T | typeof TIMED_OUT> {
  let timer: NodeJS.Timeout | undefined;
  let onAbort = () => {};
  const deadline = new Promise<typeof TIMED_OUT>((resolve) => {
    timer = setTimeout(() => resolve(TIMED_OUT), Math.max(0, ms));
    if (!opts.ref) timer.unref();
    onAbort = () => resolve(TIMED_OUT);
    if (opts.signal?.aborted) onAbort();
    else opts.signal?.addEventListener('abort', onAbort, { once: true });
  });
  return Promise.race([work, deadline]).finally(() => {
    clearTimeout(timer);
    opts.signal?.removeEventListener('abort', onAbort);
  });
}

/**
 * The work's value, or a `TimeoutError` naming `what` when `ms` pass first.
 *
 * @example
 * const offsets = await withTimeout(admin.fetchTopicOffsets(topic), 5_000, 'offset request');
 */
export async function withTimeout<T>(
  work: PromiseLike<T>,
  ms: number,
  what: string,
  opts: DeadlineOptions = {},
): Promise<T> {
  const outcome = await settleWithin(work, ms, opts);
  if (outcome === TIMED_OUT) throw new TimeoutError(what, ms);
  return outcome;
}
