/**
 * rollup-refresh: brings `events.event_rollup_hourly` up to date incrementally (store's
 * `refreshRollup`: only the hours touched by rows ingested since the last run are recomputed).
 * The horizon is read before the transaction's snapshot, which is REPEATABLE READ so the hours
 * found and the rows counted agree.
 */
import { ADVISORY_LOCKS, refreshHorizon, refreshRollup } from '@event-observatory/store';
import type { JobWork } from './run-job.js';

export function rollupRefresh(): JobWork {
  let horizon: Date | undefined;
  return {
    job: 'rollup-refresh',
    lockKey: ADVISORY_LOCKS.rollupRefresh,
    isolation: 'REPEATABLE READ',
    async prepare(client) {
      horizon = await refreshHorizon(client);
    },
    async run(client) {
      if (!horizon) throw new Error('rollup-refresh: no horizon (prepare did not run)');
      const { hours } = await refreshRollup(client, horizon);
      return { counts: { hoursRefreshed: hours } };
    },
  };
}
