/**
 * `events.event_rollup_hourly` (the overview page's hourly counts per type and source) and its
 * bookkeeping row `events.event_rollup_watermark`, written only together by the incremental
 * refresh.
 *
 * A refresh recomputes, by `occurred_at`, every hour that holds a row ingested since the
 * watermark, so a late event for an old hour is counted and the cost follows what arrived, not the
 * size of the store (a B-tree on `ingested_at` finds the new rows). `ingested_at` is the
 * inserting transaction's start, so a row can become visible after rows with a later
 * `ingested_at`: the next watermark is therefore the start of the oldest transaction still open
 * before the refresh took its snapshot (`refreshHorizon`), and rows from there on are read again
 * next time (recomputing an hour is idempotent).
 *
 * @example
 * const horizon = await refreshHorizon(client);            // before the snapshot
 * await client.query('BEGIN ISOLATION LEVEL REPEATABLE READ');
 * const { hours } = await refreshRollup(client, horizon);
 * await client.query('COMMIT');
 *
 * The reads behind the search service's overview page (`rollupVolume`, `rollupTop`,
 * `rollupSeverities`) each scan a range of `bucket_start`, the leading column of the primary key.
 */
import { exists, sql } from 'drizzle-orm';
import { scopeOf } from './cancellable-pool.js';
import { SqlParams } from './event-search.js';
import { orm } from './orm.js';
import type { DatabaseConnection, DatabasePool, Queryable } from './queryable.js';
import { eventRollupHourly, eventRollupWatermark as watermark } from './schema.js';
import { SEVERE_RANK } from './severity.js';

/**
 * How far back an open transaction may hold the watermark: a session left idle in a transaction
 * must not make every refresh re-read hours of ingest. A writer transaction open longer than this
 * when a refresh starts may have its rows missed until their hour changes again.
 */
export const REFRESH_HORIZON_LIMIT = '1 hour';

/**
 * The start of the oldest transaction open in this database (other sessions of the same role; a
 * role without `pg_read_all_stats` sees only those), `now()` when none is, and never more than
 * `REFRESH_HORIZON_LIMIT` back. Read it before the refresh's snapshot, outside its transaction.
 */
export async function refreshHorizon(db: DatabaseConnection): Promise<Date> {
  // Raw SQL: a question to the server's activity view, not to a table of ours.
  const { rows } = await db.query<{ horizon: Date }>(
    `SELECT greatest(now() - $1::interval, least(now(), (
              SELECT min(xact_start) FROM pg_stat_activity
               WHERE datname = current_database() AND backend_type = 'client backend'
                 AND pid <> pg_backend_pid()))) AS horizon`,
    [REFRESH_HORIZON_LIMIT],
  );
  return rows[0]!.horizon;
}

/**
 * Where the rows the rollup has not counted begin: its watermark's `ingested_from`, `-infinity`
 * before the first refresh (every row). A read of the rows since then takes it from here, in a
 * statement before its own, and compares `ingested_at` with it as a parameter: the planner then
 * knows the value, and `ingested_at >= $n` stays a condition on the `ingested_at` index even
 * under row-level security, where a sub-select in it is not leakproof and waits for the policy's
 * filter, after a scan of every row (packages/store/DESIGN.md, "Row visibility"). A refresh only
 * moves the watermark forward, so a value read before a later statement's snapshot is at most as
 * new as the one that snapshot holds: it finds the same rows or more, never fewer.
 */
export async function rollupIngestedFrom(db: Queryable): Promise<Date | '-infinity'> {
  const [mark] = await orm(db).select({ ingestedFrom: watermark.ingestedFrom }).from(watermark);
  return mark?.ingestedFrom ?? '-infinity';
}

/**
 * Recomputes the hours touched since the watermark and moves it to `horizon`. Run it in a
 * REPEATABLE READ transaction, so the hours found and the rows counted come from one snapshot.
 */
export async function refreshRollup(client: DatabaseConnection, horizon: Date): Promise<{ hours: number }> {
  const db = orm(client);
  const ingestedFrom = await rollupIngestedFrom(client);
  // Raw SQL from here to the watermark: set-based reads and writes over the event table, one
  // statement each whatever the number of hours (bench/rollup).
  // Hours of a detached month are left as they are: its rows are outside the event table now, so
  // recomputing an hour for a late event of that month (stored in the default partition) would
  // replace the hour's history with that one event.
  const touched = await client.query<{ hours: Date[] | null; newest: Date | null }>(
    `WITH detached AS (
       SELECT (substr(c.relname, 13, 4) || '-' || substr(c.relname, 18, 2) || '-01 00:00:00+00')::timestamptz AS month
         FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
        WHERE n.nspname = 'events' AND c.relkind = 'r' AND NOT c.relispartition
          AND c.relname ~ '^cloud_event_[0-9]{4}_[0-9]{2}$'
     )
     SELECT array_agg(DISTINCT date_trunc('hour', occurred_at, 'UTC'))
              FILTER (WHERE date_trunc('month', occurred_at, 'UTC') NOT IN (SELECT month FROM detached)) AS hours,
            max(ingested_at) AS newest
       FROM events.cloud_event WHERE ingested_at >= $1`,
    [ingestedFrom],
  );
  const hours = touched.rows[0]?.hours ?? [];
  if (hours.length > 0) {
    await client.query('DELETE FROM events.event_rollup_hourly WHERE bucket_start = ANY($1::timestamptz[])', [
      hours,
    ]);
    await client.query(
      `INSERT INTO events.event_rollup_hourly
         (bucket_start, ce_type, ce_source, event_count, error_count, max_severity_rank, refreshed_at)
       SELECT h.bucket, e.ce_type, e.ce_source, count(*), count(*) FILTER (WHERE e.severity_rank >= $2),
              max(e.severity_rank), now()
         FROM unnest($1::timestamptz[]) AS h(bucket)
         JOIN events.cloud_event e ON e.occurred_at >= h.bucket AND e.occurred_at < h.bucket + interval '1 hour'
        GROUP BY 1, 2, 3`,
      [hours, SEVERE_RANK],
    );
  }
  await db
    .insert(watermark)
    .values({
      ingestedFrom: horizon,
      newestIngestedAt: touched.rows[0]?.newest ?? null,
      refreshedAt: sql`now()`,
    })
    .onConflictDoUpdate({
      target: watermark.singleton,
      set: {
        ingestedFrom: sql`excluded.ingested_from`,
        newestIngestedAt: sql`greatest(${watermark.newestIngestedAt}, excluded.newest_ingested_at)`,
        refreshedAt: sql`excluded.refreshed_at`,
      },
    });
  return { hours: hours.length };
}

/** The `ingested_at` of the newest event the rollup counts; null when the rollup is empty. */
export async function rollupNewestIngestedAt(db: Queryable): Promise<Date | null> {
  const query = orm(db);
  const [row] = await query
    .select({ newest: watermark.newestIngestedAt })
    .from(watermark)
    .where(exists(query.select({ one: sql`1` }).from(eventRollupHourly)));
  return row?.newest ?? null;
}

/** Rows stored since the rollup's last refresh (not counted in it yet), counted up to `cap`. */
export interface RollupBacklog {
  rows: number;
  /** More than `cap`: only that many were counted. */
  capped: boolean;
}

/**
 * What the overview's charts miss until the next refresh: the rows ingested since the watermark
 * (every row when the rollup was never refreshed), one range of the `ingested_at` index, bounded.
 */
export async function rollupBacklog(db: DatabasePool, cap = 10_000): Promise<RollupBacklog> {
  const ingestedFrom = await rollupIngestedFrom(db);
  // Raw SQL: a bounded count over the ingestion index from the watermark.
  const { rows } = await db.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM (
       SELECT 1 FROM events.cloud_event WHERE ingested_at >= $1 LIMIT $2) AS backlog`,
    [ingestedFrom, cap + 1],
  );
  const n = rows[0]?.n ?? 0;
  return { rows: Math.min(n, cap), capped: n > cap };
}

// Reads for the overview page. Raw SQL: the search service's aggregate reads, shaped for the
// primary key's range scan on bucket_start.

export interface VolumeBucket {
  start: Date;
  events: number;
  errors: number;
}

/**
 * The rollup a read of hourly counts takes: the totals of each hour (migration 0015, one row an
 * hour) when it names no type or source and `db` reads everything, which is all the totals'
 * policy admits; else the rows of each hour, type and source (a hundred times as many on the
 * bench store), under the reader's policy.
 */
export function hourlyCountsTable(
  db: DatabasePool,
  names: { types?: readonly string[] | undefined; sources?: readonly string[] | undefined } = {},
): string {
  const scope = scopeOf(db);
  const everything = scope === undefined || scope.all === true;
  return everything && !names.types?.length && !names.sources?.length
    ? 'events.event_rollup_hour_total'
    : 'events.event_rollup_hourly';
}

/** Events and errors (severity >= error) per `unit` since `since`, oldest first. */
export async function rollupVolume(
  db: DatabasePool,
  since: Date,
  unit: 'hour' | 'day',
): Promise<VolumeBucket[]> {
  const { rows } = await db.query<{ start: Date; events: string; errors: string }>(
    `SELECT date_trunc($2, bucket_start) AS start, sum(event_count) AS events, sum(error_count) AS errors
       FROM ${hourlyCountsTable(db)} WHERE bucket_start >= $1 GROUP BY 1 ORDER BY 1`,
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
  db: DatabasePool,
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
  /**
   * When rollup-refresh last ran (the watermark's time), whether or not it found anything new;
   * undefined before its first run.
   */
  refreshedAt: Date | undefined;
}

/** Totals and the spread of highest severities since `since`. */
export async function rollupSeverities(db: DatabasePool, since: Date): Promise<SeveritySummary> {
  // One statement (one pool connection): the groups, and the watermark's time on every row; a
  // range without groups still gives one row (groups null) carrying it.
  const { rows } = await db.query<{
    rank: number | null;
    groups: number | null;
    events: string | null;
    errors: string | null;
    refreshed_at: Date | null;
  }>(
    `WITH g AS (
       SELECT max_severity_rank AS rank, count(*)::int AS groups, sum(event_count) AS events,
              sum(error_count) AS errors
         FROM events.event_rollup_hourly WHERE bucket_start >= $1
        GROUP BY 1)
     SELECT g.rank, g.groups, g.events, g.errors,
            (SELECT refreshed_at FROM events.event_rollup_watermark) AS refreshed_at
       FROM (SELECT 1) AS one LEFT JOIN g ON true
      ORDER BY g.rank DESC NULLS LAST`,
    [since],
  );
  const groups = rows.filter((r) => r.groups !== null);
  return {
    events: groups.reduce((n, r) => n + Number(r.events), 0),
    errors: groups.reduce((n, r) => n + Number(r.errors), 0),
    groupsByMaxRank: groups.map((r) => ({ rank: r.rank, groups: r.groups as number })),
    refreshedAt: rows[0]?.refreshed_at ?? undefined,
  };
}

/**
 * The start of the newest hour from which the rollup counts at least `count` events of `filter`
 * (its time, exact types and sources; `rollupAnswers`) up to the range's end, hours read newest
 * first; undefined when the range's hours hold fewer. A guess, never a bound: the rollup counts
 * whole hours (the range's first and last may hold events outside it), not the rows ingested since
 * its last refresh, and keeps the hours of a detached month; a reader that needs the newest
 * `count` events reads from there and goes on before it when that held fewer. Also undefined,
 * nothing read, when the rollup was last refreshed before `refreshedSince` (its watermark).
 */
export async function rollupNewestHour(
  db: DatabasePool,
  filter: { from?: Date; to?: Date; types?: readonly string[]; sources?: readonly string[] },
  count: number,
  refreshedSince?: Date,
): Promise<Date | undefined> {
  const p = new SqlParams();
  const least = p.add(count);
  const conditions: string[] = [];
  if (filter.from)
    conditions.push(`bucket_start >= date_trunc('hour', ${p.add(filter.from)}::timestamptz, 'UTC')`);
  if (filter.to) conditions.push(`bucket_start < ${p.add(filter.to)}::timestamptz`);
  // One name as `=`: the index then gives its hours in order (`= ANY` of one does not).
  const oneOf = (column: string, names: readonly string[] | undefined) => {
    if (names?.length === 1) conditions.push(`${column} = ${p.add(names[0])}`);
    else if (names?.length) conditions.push(`${column} = ANY(${p.add(names)}::text[])`);
  };
  oneOf('ce_type', filter.types);
  oneOf('ce_source', filter.sources);
  // Without a row in the subquery's table this is false, as before the first refresh; a condition
  // on no column, so it is decided once, before any hour is read.
  if (refreshedSince)
    conditions.push(
      `EXISTS (SELECT FROM events.event_rollup_watermark WHERE ingested_from >= ${p.add(refreshedSince)}::timestamptz)`,
    );
  const where = conditions.length > 0 ? `WHERE ${conditions.join(' AND ')}` : '';
  // The running sum follows the hours newest first, as the outer order does. Over one type or
  // source, with the inner order asked for, the index is read backward and grouped as it goes, and
  // the scan stops at the first hour that reaches `count` (1 ms on the bench store, 5 ms grouping
  // and sorting two months first); over several names every row of the range is grouped and
  // sorted first, so callers bound the range.
  const { rows } = await db.query<{ hour: Date }>(
    `SELECT hour FROM (
       SELECT bucket_start AS hour, sum(sum(event_count)) OVER (ORDER BY bucket_start DESC) AS running
         FROM ${hourlyCountsTable(db, filter)} ${where}
        GROUP BY bucket_start ORDER BY bucket_start DESC) AS hours
      WHERE running >= ${least} ORDER BY hour DESC LIMIT 1`,
    p.values,
  );
  return rows[0]?.hour;
}
