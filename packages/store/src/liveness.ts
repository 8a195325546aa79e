/**
 * Whether the database answers, for readiness and health checks: a service asks this instead of
 * sending a statement of its own.
 *
 * @example
 * const up = await databaseAnswers(pool).catch(() => false);
 */
import type { Queryable } from './queryable.js';

/** Whether the database answers a trivial statement through `db`; rejects when it cannot be reached. */
export async function databaseAnswers(db: Queryable): Promise<boolean> {
  const { rows } = await db.query<{ ok: number }>('SELECT 1 AS ok');
  return rows[0]?.ok === 1;
}
