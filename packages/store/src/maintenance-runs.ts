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
import { asc, gt } from 'drizzle-orm';
import { orm } from './orm.js';
import type { DatabaseConnection, Queryable } from './queryable.js';
import { maintenanceRun } from './schema.js';

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
export async function recordMaintenanceRun(client: DatabaseConnection, run: MaintenanceRun): Promise<void> {
  // Raw SQL: a table lock, which the query builder has no statement for.
  await client.query('LOCK TABLE events.maintenance_run IN SHARE ROW EXCLUSIVE MODE');
  await orm(client)
    .insert(maintenanceRun)
    .values({
      job: run.job,
      outcome: run.outcome,
      startedAt: run.startedAt,
      durationSeconds: run.durationSeconds,
      partitionsCreated: run.partitionsCreated ?? 0,
      partitionsDetached: run.partitionsDetached ?? 0,
      partitionsBlocked: run.partitionsBlocked ?? null,
      headroomMonths: run.headroomMonths ?? null,
      defaultRows: run.defaultRows ?? null,
      hoursRefreshed: run.hoursRefreshed ?? null,
      error: run.error ?? null,
    });
}

/** Runs with an id above `afterId` ('0' for all), in id order. */
export async function readMaintenanceRunsAfter(
  db: Queryable,
  afterId: string,
): Promise<StoredMaintenanceRun[]> {
  const rows = await orm(db)
    .select()
    .from(maintenanceRun)
    .where(gt(maintenanceRun.id, BigInt(afterId)))
    .orderBy(asc(maintenanceRun.id));
  return rows.map((r) => ({
    id: r.id.toString(),
    job: r.job,
    outcome: r.outcome,
    startedAt: r.startedAt,
    durationSeconds: r.durationSeconds,
    partitionsCreated: r.partitionsCreated,
    partitionsDetached: r.partitionsDetached,
    ...(r.partitionsBlocked !== null && { partitionsBlocked: r.partitionsBlocked }),
    ...(r.headroomMonths !== null && { headroomMonths: r.headroomMonths }),
    ...(r.defaultRows !== null && { defaultRows: r.defaultRows }),
    ...(r.hoursRefreshed !== null && { hoursRefreshed: r.hoursRefreshed }),
    ...(r.error !== null && { error: r.error }),
  }));
}
