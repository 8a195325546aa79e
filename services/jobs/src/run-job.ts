/**
 * One run of a job, as a CronJob needs it: one transaction that takes the job's transaction-level
 * advisory lock first (held by another run: rolled back, outcome `skipped`), does the work, records
 * the run in `events.maintenance_run` and commits, so the work and its record land together or not
 * at all, and a killed run (its connection gone) leaves nothing half-done. A failure rolls back and
 * is recorded in a transaction of its own (on a fresh connection when the failure broke the run's).
 * Every statement is bounded by `RUN_STATEMENT_TIMEOUT` on the server and `RUN_QUERY_TIMEOUT_MS`
 * on the client (a connection gone silent).
 */
import type { Logger } from '@event-observatory/service-kit';
import {
  type AdvisoryLockKey,
  beginLockedTransaction,
  commitTransaction,
  type DatabaseConnection,
  type DatabasePool,
  type IsolationLevel,
  inPooledTransaction,
  inTransaction,
  isConnectionFailure,
  type MaintenanceJob,
  type MaintenanceRun,
  type PooledConnection,
  queryTimeoutMs,
  type RunOutcome,
  recordMaintenanceRun,
  rollbackTransaction,
} from '@event-observatory/store';

/** The top of the duration ladder: no statement of a run may take longer. */
export const RUN_STATEMENT_TIMEOUT = '15min';
/** The client's bound on one statement of a run: `RUN_STATEMENT_TIMEOUT` and 5 s for the cancel to arrive. */
export const RUN_QUERY_TIMEOUT_MS = queryTimeoutMs(15 * 60_000);

/** Wall clock of the jobs; tests set their own. */
export type Clock = () => Date;

export type RunCounts = Pick<
  MaintenanceRun,
  | 'partitionsCreated'
  | 'partitionsDetached'
  | 'partitionsBlocked'
  | 'headroomMonths'
  | 'defaultRows'
  | 'hoursRefreshed'
>;

export interface JobWork {
  job: MaintenanceJob;
  /** Advisory lock key (`ADVISORY_LOCKS`); one per job, so the two jobs never skip each other. */
  lockKey: AdvisoryLockKey;
  isolation: IsolationLevel;
  /** Runs on the connection before the transaction begins (rollup-refresh reads its horizon). */
  prepare?(client: DatabaseConnection): Promise<void>;
  /** Inside the locked transaction. `failure` marks a step that failed while the rest committed. */
  run(client: DatabaseConnection, now: Date): Promise<{ counts: RunCounts; failure?: string }>;
}

export interface RunReport extends RunCounts {
  job: MaintenanceJob;
  outcome: RunOutcome;
  durationSeconds: number;
  error?: string;
}

export async function runJob(
  pool: DatabasePool,
  work: JobWork,
  clock: Clock,
  logger: Logger,
): Promise<RunReport> {
  const startedAt = clock();
  const started = performance.now();
  const elapsed = () => (performance.now() - started) / 1000;
  const finish = (report: RunReport) => {
    const level = report.outcome === 'failure' ? 'error' : 'info';
    logger[level]({ ...report }, `${work.job} ${report.outcome}`);
    return report;
  };
  let client: PooledConnection | undefined;
  let failed = false;
  try {
    client = await pool.connect();
    // A connection lost mid-run (a terminated backend) fails the query in flight; without a
    // listener its 'error' event would also crash the process before the failure is recorded.
    client.on('error', ignore);
    await work.prepare?.(client);
    const locked = await beginLockedTransaction(client, {
      isolation: work.isolation,
      statementTimeout: RUN_STATEMENT_TIMEOUT,
      lockKey: work.lockKey,
    });
    if (!locked) {
      const report: RunReport = { job: work.job, outcome: 'skipped', durationSeconds: elapsed() };
      await record(client, { ...report, startedAt });
      return finish(report);
    }
    const { counts, failure } = await work.run(client, startedAt);
    const report: RunReport = {
      job: work.job,
      outcome: failure ? 'failure' : 'success',
      durationSeconds: elapsed(),
      ...counts,
      ...(failure && { error: failure }),
    };
    await recordMaintenanceRun(client, { ...report, startedAt });
    await commitTransaction(client);
    return finish(report);
  } catch (err) {
    failed = true;
    const error = (err as Error).message;
    const report: RunReport = { job: work.job, outcome: 'failure', durationSeconds: elapsed(), error };
    const recorded = (() => {
      if (!client) return Promise.resolve();
      // A broken connection (gone silent: node-postgres' query timeout; reset; the server shutting
      // down) is not asked to roll back, which would wait out the timeout again or fail: it is
      // closed, and the failure is recorded through a new one.
      if (isConnectionFailure(err)) {
        client.off('error', ignore);
        client.release(true);
        client = undefined;
        return inPooledTransaction(pool, (c) => recordMaintenanceRun(c, { ...report, startedAt }));
      }
      const c = client;
      return rollbackTransaction(c).then(() => record(c, { ...report, startedAt }));
    })();
    await recorded.catch((e: unknown) =>
      logger.error({ err: (e as Error).message }, 'could not record the failed run'),
    );
    return finish(report);
  } finally {
    // A connection that saw a failure is closed rather than pooled: it may be the broken one.
    client?.off('error', ignore);
    client?.release(failed);
  }
}

function ignore(): void {}

function record(client: DatabaseConnection, run: MaintenanceRun): Promise<void> {
  return inTransaction(client, (c) => recordMaintenanceRun(c, run));
}
