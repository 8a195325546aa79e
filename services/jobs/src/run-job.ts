/**
 * One run of a job, as a CronJob needs it: one transaction that takes the job's transaction-level
 * advisory lock first (held by another run: rolled back, outcome `skipped`), does the work, records
 * the run in `events.maintenance_run` and commits, so the work and its record land together or not
 * at all, and a killed run (its connection gone) leaves nothing half-done. A failure rolls back and
 * is recorded in a transaction of its own. Every statement is bounded by `RUN_STATEMENT_TIMEOUT`.
 */
import type { Logger } from '@event-observatory/service-kit';
import {
  type MaintenanceJob,
  type MaintenanceRun,
  type RunOutcome,
  recordMaintenanceRun,
} from '@event-observatory/store';
import type pg from 'pg';

/** The top of the duration ladder: no statement of a run may take longer. */
export const RUN_STATEMENT_TIMEOUT = '15min';

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
  /** Advisory lock key; one per job, so the two jobs never skip each other. */
  lockKey: number;
  isolation: 'READ COMMITTED' | 'REPEATABLE READ';
  /** Runs on the connection before the transaction begins (rollup-refresh reads its horizon). */
  prepare?(client: pg.ClientBase): Promise<void>;
  /** Inside the locked transaction. `failure` marks a step that failed while the rest committed. */
  run(client: pg.ClientBase, now: Date): Promise<{ counts: RunCounts; failure?: string }>;
}

export interface RunReport extends RunCounts {
  job: MaintenanceJob;
  outcome: RunOutcome;
  durationSeconds: number;
  error?: string;
}

export async function runJob(pool: pg.Pool, work: JobWork, clock: Clock, logger: Logger): Promise<RunReport> {
  const startedAt = clock();
  const started = performance.now();
  const elapsed = () => (performance.now() - started) / 1000;
  const finish = (report: RunReport) => {
    const level = report.outcome === 'failure' ? 'error' : 'info';
    logger[level]({ ...report }, `${work.job} ${report.outcome}`);
    return report;
  };
  let client: pg.PoolClient | undefined;
  let failed = false;
  try {
    client = await pool.connect();
    // A connection lost mid-run (a terminated backend) fails the query in flight; without a
    // listener its 'error' event would also crash the process before the failure is recorded.
    client.on('error', ignore);
    await work.prepare?.(client);
    await client.query(`BEGIN ISOLATION LEVEL ${work.isolation}`);
    await client.query(`SET LOCAL statement_timeout = '${RUN_STATEMENT_TIMEOUT}'`);
    const lock = await client.query<{ ok: boolean }>('SELECT pg_try_advisory_xact_lock($1) AS ok', [
      work.lockKey,
    ]);
    if (!lock.rows[0]?.ok) {
      await client.query('ROLLBACK');
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
    await client.query('COMMIT');
    return finish(report);
  } catch (err) {
    failed = true;
    const error = (err as Error).message;
    const report: RunReport = { job: work.job, outcome: 'failure', durationSeconds: elapsed(), error };
    if (client) {
      await client.query('ROLLBACK').catch(() => {});
      await record(client, { ...report, startedAt }).catch((e: unknown) =>
        logger.error({ err: (e as Error).message }, 'could not record the failed run'),
      );
    }
    return finish(report);
  } finally {
    // A connection that saw a failure is closed rather than pooled: it may be the broken one.
    client?.off('error', ignore);
    client?.release(failed);
  }
}

function ignore(): void {}

async function record(client: pg.ClientBase, run: MaintenanceRun): Promise<void> {
  await client.query('BEGIN');
  try {
    await recordMaintenanceRun(client, run);
    await client.query('COMMIT');
  } catch (err) {
    await client.query('ROLLBACK').catch(() => {});
    throw err;
  }
}
