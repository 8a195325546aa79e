/**
 * The check that the database role search reads as is subject to row-level security: the owner
 * of the events tables and a superuser are not, so under either every viewer's scope would mean
 * nothing and every viewer would see every event.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { down, type HealthCheck, up } from '@event-observatory/service-kit/health';
import type { Logger } from '@event-observatory/service-kit/logger';
import { bypassesRowSecurity, type DatabasePool } from '@event-observatory/store';
import { VisibilityError } from './visibility.js';

export interface RowSecurityGate {
  /**
   * Readiness field: `UP` once the role was found subject to row-level security, `unverified`
   * before, passing either way: with the bundled PostgreSQL the schema comes from a post-install
   * hook, which Helm runs only once the release's pods are ready.
   */
  check: HealthCheck;
  /** Whether reads may be served: only once the role was found subject to row-level security. */
  serving(): boolean;
  /**
   * Asks `pool` until it can answer: resolves once its role is found subject to row-level
   * security, rejects with `VisibilityError` once it is found to escape it. A store that cannot
   * answer yet (down, or not migrated yet) is asked again, backing off to every 5 s, until it can
   * or `signal` aborts.
   */
  verify(pool: DatabasePool): Promise<void>;
}

export function rowSecurityGate(logger: Logger, signal: AbortSignal): RowSecurityGate {
  let state: 'unverified' | 'enforced' | 'bypassed' = 'unverified';
  return {
    check: () => (state === 'enforced' ? up() : state === 'unverified' ? up(state) : down(state)),
    serving: () => state === 'enforced',
    async verify(pool) {
      for (let delayMs = 500; ; delayMs = Math.min(delayMs * 2, 5_000)) {
        signal.throwIfAborted();
        let bypasses: boolean;
        try {
          bypasses = await bypassesRowSecurity(pool);
        } catch (err) {
          logger.warn(
            { err, retryInMs: delayMs },
            'cannot tell yet whether the database role bypasses row-level security; reads wait until it can',
          );
          await sleep(delayMs, undefined, { signal });
          continue;
        }
        if (bypasses) {
          state = 'bypassed';
          throw new VisibilityError(
            'the database role of DATABASE_USER bypasses row-level security (a superuser or the owner of the events tables): log search in as the reader role',
          );
        }
        state = 'enforced';
        return;
      }
    },
  };
}
