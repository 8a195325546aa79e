/**
 * `events.maintenance_run`: one row per run of a maintenance job (job, outcome, start, duration,
 * counts). The jobs are short-lived processes; a long-running service exports the maintenance
 * meters from this table (`registerMaintenanceMeters`).
 *
 * Rows become visible in id order: a writer takes `SHARE ROW EXCLUSIVE` on the table before its
 * insert and holds it to its commit, so a reader that resumes after the last id it saw never
 * skips a row committed late.
 *
 * @example
 * await client.query('BEGIN');
 * await recordMaintenanceRun(client, { job: 'rollup-refresh', outcome: 'skipped', startedAt, durationSeconds: 0.01 });
 * await client.query('COMMIT');
 */
import type pg from 'pg';
import type { Queryable } from './queryable.js';

export const MAINTENANCE_JOBS = ['partition-maintenance', 'rollup-refresh'] as const;
export type MaintenanceJob = (typeof MAINTENANCE_JOBS)[number];

export const RUN_OUTCOMES = ['success', 'failure', 'skipped'] as const;
export type RunOutcome = (typeof RUN_OUTCOMES)[number];

export interface MaintenanceRun {
  job: MaintenanceJob;
  outcome: RunOutcome;
  startedAt: Date;
  durationSeconds: number;
  partitionsCreated?: number;
  partitionsDetached?: number;
  partitionsBlocked?: number;
  headroomMonths?: number;
  defaultRows?: number;
  hoursRefreshed?: number;
  error?: string;
}

export interface StoredMaintenanceRun extends MaintenanceRun {
  /** bigint identity, as a string. */
  id: string;
}

/** Inserts the run. Call inside a transaction that commits right after (see the module comment). */
export async function recordMaintenanceRun(client: pg.ClientBase, run: MaintenanceRun): Promise<void> {
  await client.query('LOCK TABLE events.maintenance_run IN SHARE ROW EXCLUSIVE MODE');
  await client.query(
    `INSERT INTO events.maintenance_run (job, outcome, started_at, duration_seconds, partitions_created,
       partitions_detached, partitions_blocked, headroom_months, default_rows, hours_refreshed, error)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)`,
    [
      run.job,
      run.outcome,
      run.startedAt,
      run.durationSeconds,
      run.partitionsCreated ?? 0,
      run.partitionsDetached ?? 0,
      run.partitionsBlocked ?? null,
      run.headroomMonths ?? null,
      run.defaultRows ?? null,
      run.hoursRefreshed ?? null,
      run.error ?? null,
    ],
  );
}

/** Runs with an id above `afterId` ('0' for all), in id order. */
export async function readMaintenanceRunsAfter(
  db: Queryable,
  afterId: string,
): Promise<StoredMaintenanceRun[]> {
  const { rows } = await db.query<{
    id: string;
    job: MaintenanceJob;
    outcome: RunOutcome;
    started_at: Date;
    duration_seconds: number;
    partitions_created: number;
    partitions_detached: number;
    partitions_blocked: number | null;
    headroom_months: number | null;
    default_rows: string | null;
    hours_refreshed: number | null;
    error: string | null;
  }>('SELECT * FROM events.maintenance_run WHERE id > $1 ORDER BY id', [afterId]);
  return rows.map((r) => ({
    id: r.id,
    job: r.job,
    outcome: r.outcome,
    startedAt: r.started_at,
    durationSeconds: r.duration_seconds,
    partitionsCreated: r.partitions_created,
    partitionsDetached: r.partitions_detached,
    ...(r.partitions_blocked !== null && { partitionsBlocked: r.partitions_blocked }),
    ...(r.headroom_months !== null && { headroomMonths: r.headroom_months }),
    ...(r.default_rows !== null && { defaultRows: Number(r.default_rows) }),
    ...(r.hours_refreshed !== null && { hoursRefreshed: r.hours_refreshed }),
    ...(r.error !== null && { error: r.error }),
  }));
}
