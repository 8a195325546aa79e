/**
 * A page's deadline: the signal its statements stop on (`cancellablePool` of the store), which
 * aborts when the client goes away or when the page has run `timeoutMs`, whichever comes first;
 * the deadline's reason is the service kit's `TimeoutError`, which `failureOf` answers with 504.
 *
 * @example
 * const view = await withinDeadline(c.req.raw.signal, 5_000, (signal) => runSearch({ ...deps, pool: cancellablePool(pool, signal) }, parsed));
 */
import { TimeoutError } from '@event-observatory/service-kit/resilience';

export async function withinDeadline<T>(
  request: AbortSignal,
  timeoutMs: number,
  work: (signal: AbortSignal) => Promise<T>,
): Promise<T> {
  const deadline = new AbortController();
  const timer = setTimeout(() => deadline.abort(new TimeoutError('the page', timeoutMs)), timeoutMs);
  timer.unref();
  try {
    return await work(AbortSignal.any([request, deadline.signal]));
  } finally {
    clearTimeout(timer);
  }
}
