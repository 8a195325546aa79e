/**
 * The start-up check that the database role search reads as is subject to row-level security:
 * the owner of the events tables and a superuser are not, so under either every viewer's scope
 * would mean nothing and every viewer would see every event.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type { Logger } from '@event-observatory/service-kit/logger';
import { bypassesRowSecurity, type DatabasePool } from '@event-observatory/store';
import { VisibilityError } from './visibility.js';

/**
 * Resolves when the role of `pool` is subject to row-level security; throws `VisibilityError` when
 * it escapes it. A store that does not answer is asked again, backing off, for up to `waitMs`
 * (a pod started while PostgreSQL fails over); then start-up fails rather than serve unchecked.
 */
export async function requireRowSecurity(pool: DatabasePool, logger: Logger, waitMs = 30_000): Promise<void> {
  const deadline = Date.now() + waitMs;
  for (let delayMs = 500; ; delayMs = Math.min(delayMs * 2, 5_000)) {
    let bypasses: boolean;
    try {
      bypasses = await bypassesRowSecurity(pool);
    } catch (err) {
      if (Date.now() + delayMs > deadline)
        throw new Error(
          `cannot tell whether the database role of DATABASE_USER bypasses row-level security: ${(err as Error).message}`,
        );
      logger.warn(
        { err, retryInMs: delayMs },
        'cannot tell yet whether the database role bypasses row-level security',
      );
      await sleep(delayMs);
      continue;
    }
    if (bypasses)
      throw new VisibilityError(
        'the database role of DATABASE_USER bypasses row-level security (a superuser or the owner of the events tables): log search in as the reader role',
      );
    return;
  }
}
