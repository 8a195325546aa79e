/** Polling for a condition of the fault suite, bounded: the suite never waits without a limit. */
import { retry } from '@event-observatory/service-kit/resilience';

/** Resolves once `check` returns true (asked every 100 ms); rejects naming `what` after `timeoutMs`. */
export async function until(what: string, check: () => Promise<boolean>, timeoutMs: number): Promise<void> {
  const signal = AbortSignal.timeout(timeoutMs);
  await retry(
    async () => {
      if (!(await check())) throw new Error(`not yet: ${what}`);
    },
    { backoff: { initialMs: 100, maxMs: 100 }, signal },
  ).catch((error: unknown) => {
    throw signal.aborted ? new Error(`timed out after ${timeoutMs} ms waiting for ${what}`) : error;
  });
}
