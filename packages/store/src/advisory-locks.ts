/**
 * Every PostgreSQL advisory lock key the system takes, in one table, so two kinds of work never
 * share a key by accident and a reader finds who serialises against whom. The functions that take
 * a lock (`withSessionLock`, `beginLockedTransaction`, the migration runner) accept only these
 * keys. A migration that ever takes an advisory lock itself must use a key of this table
 * (`advisory-locks.test.ts` checks the SQL files).
 *
 * @example
 * await withSessionLock(pool, ADVISORY_LOCKS.dlqReplay, replay);
 */
export const ADVISORY_LOCKS = {
  /** Session lock of the migration runner: replicas booting together wait for each other. */
  migration: 4_242_001,
  /** Transaction lock of a partition-maintenance job run (a second run skips). */
  partitionMaintenance: 4_242_012,
  /**
   * Transaction lock of a rollup-refresh job run (a second run skips); every statement writing the
   * hourly rollup waits for it (a trigger of migration 0020), so writers of one day take turns.
   */
  rollupRefresh: 4_242_013,
  /** Session lock of a dead-letter replay: one at a time across the consumer's replicas. */
  dlqReplay: 4_242_021,
} as const;

export type AdvisoryLock = keyof typeof ADVISORY_LOCKS;
/** A key of `ADVISORY_LOCKS`; no other number is a lock key. */
export type AdvisoryLockKey = (typeof ADVISORY_LOCKS)[AdvisoryLock];
