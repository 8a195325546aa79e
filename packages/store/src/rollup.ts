/**
 * The read queries over `events.event_rollup_hourly` behind the search service's overview page.
 * Each reads a range of `bucket_start`, the leading column of the primary key.
 *
 * @example
 * const since = new Date(Date.now() - 7 * 86_400_000);
 * const [volume, types] = await Promise.all([rollupVolume(pool, since, 'day'), rollupTop(pool, since, 'ce_type', 10)]);
 */
import type pg from 'pg';

export interface VolumeBucket {
  start: Date;
  events: number;
  errors: number;
}

/** Events and errors (severity >= error) per `unit` since `since`, oldest first. */
export async function rollupVolume(db: pg.Pool, since: Date, unit: 'hour' | 'day'): Promise<VolumeBucket[]> {
  const { rows } = await db.query<{ start: Date; events: string; errors: string }>(
    `SELECT date_trunc($2, bucket_start) AS start, sum(event_count) AS events, sum(error_count) AS errors
       FROM events.event_rollup_hourly WHERE bucket_start >= $1 GROUP BY 1 ORDER BY 1`,
    [since, unit],
  );
  return rows.map((r) => ({ start: r.start, events: Number(r.events), errors: Number(r.errors) }));
}

export interface RollupCount {
  value: string;
  events: number;
}

/** The `limit` types or sources with the most events since `since`. */
export async function rollupTop(
  db: pg.Pool,
  since: Date,
  column: 'ce_type' | 'ce_source',
  limit: number,
): Promise<RollupCount[]> {
  const { rows } = await db.query<{ value: string; events: string }>(
    `SELECT ${column} AS value, sum(event_count) AS events FROM events.event_rollup_hourly
      WHERE bucket_start >= $1 GROUP BY 1 ORDER BY 2 DESC, 1 LIMIT $2`,
    [since, limit],
  );
  return rows.map((r) => ({ value: r.value, events: Number(r.events) }));
}

export interface SeveritySummary {
  events: number;
  errors: number;
  /** Highest severity rank seen per (hour, type, source) group -> how many groups. */
  groupsByMaxRank: { rank: number | null; groups: number }[];
  /** When the rollup was last refreshed; undefined when it is empty. */
  refreshedAt: Date | undefined;
}

/** Totals and the spread of highest severities since `since`. */
export async function rollupSeverities(db: pg.Pool, since: Date): Promise<SeveritySummary> {
  const { rows } = await db.query<{
    rank: number | null;
    groups: number;
    events: string;
    errors: string;
    refreshed_at: Date | null;
  }>(
    `SELECT max_severity_rank AS rank, count(*)::int AS groups, sum(event_count) AS events,
            sum(error_count) AS errors, max(refreshed_at) AS refreshed_at
       FROM events.event_rollup_hourly WHERE bucket_start >= $1
      GROUP BY 1 ORDER BY 1 DESC NULLS LAST`,
    [since],
  );
  const refreshed = rows.map((r) => r.refreshed_at).filter((d): d is Date => d !== null);
  return {
    events: rows.reduce((n, r) => n + Number(r.events), 0),
    errors: rows.reduce((n, r) => n + Number(r.errors), 0),
    groupsByMaxRank: rows.map((r) => ({ rank: r.rank, groups: r.groups })),
    refreshedAt: refreshed.length ? new Date(Math.max(...refreshed.map((d) => d.getTime()))) : undefined,
  };
}
