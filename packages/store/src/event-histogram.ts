/**
 * The search page's histogram: matching events per time bucket over the whole selected range,
 * split by severity level. Read from the hourly rollup (`events.event_rollup_hourly`, one
 * range scan of its primary key) when the filter is only time, exact types and sources, and the
 * buckets are whole hours; from the event table otherwise (the filter's index paths, as the page's
 * rows), within the read pool's statement timeout.
 *
 * @example
 * const h = await histogramEvents(pool, { types: ['com.example.alarm'] }, { from, to, bucketMs: 3_600_000 });
 * h.buckets[0]; // { start, severe: 3, warning: 0, other: 41 }
 */
import { clause, type EventFilter, SqlParams, whereOf } from './event-search.js';
import type { DatabasePool } from './queryable.js';
import { SEVERE_RANK, SEVERITY } from './severity.js';

const HOUR_MS = 3_600_000;

export interface HistogramBucket {
  start: Date;
  /** Severity error and above. */
  severe: number;
  /** Warning (always 0 from the rollup, which keeps only errors apart: counted in `other` there). */
  warning: number;
  /** Everything else, unknown severity included. */
  other: number;
}

export interface Histogram {
  buckets: HistogramBucket[];
  bucketMs: number;
  /** `rollup`: whole hours from the hourly rollup (as fresh as its last refresh); `table`: the events. */
  source: 'rollup' | 'table';
}

export interface HistogramRange {
  from: Date;
  to: Date;
  bucketMs: number;
}

/** The rollup holds time, type and source only; it answers a filter of nothing else, in whole hours. */
export function rollupAnswers(filter: EventFilter, bucketMs: number): boolean {
  return (
    bucketMs % HOUR_MS === 0 &&
    filter.text === undefined &&
    !filter.payload?.length &&
    !filter.ids?.length &&
    filter.subject === undefined &&
    Object.keys(filter.extensions ?? {}).length === 0 &&
    filter.minSeverity === undefined &&
    !filter.types?.some((t) => t.endsWith('*'))
  );
}

/** Counts per bucket (`date_bin` from `range.from`), every bucket of the range present, oldest first. */
export async function histogramEvents(
  db: DatabasePool,
  filter: EventFilter,
  range: HistogramRange,
): Promise<Histogram> {
  const p = new SqlParams();
  const bucket = p.add(`${range.bucketMs / 1000} seconds`);
  const origin = p.add(range.from);
  const rollup = rollupAnswers(filter, range.bucketMs);
  let sql: string;
  if (rollup) {
    // Whole hours: the first bucket counts its hour from the hour's start.
    const where = [
      `bucket_start >= date_trunc('hour', ${p.add(range.from)}::timestamptz, 'UTC')`,
      `bucket_start < ${p.add(range.to)}`,
    ];
    if (filter.types?.length) where.push(`ce_type = ANY(${p.add(filter.types)}::text[])`);
    if (filter.sources?.length) where.push(`ce_source = ANY(${p.add(filter.sources)}::text[])`);
    sql = `SELECT date_bin(${bucket}::interval, bucket_start, date_trunc('hour', ${origin}::timestamptz, 'UTC')) AS start,
        sum(error_count)::bigint AS severe, 0::bigint AS warning, sum(event_count - error_count)::bigint AS other
      FROM events.event_rollup_hourly WHERE ${where.join(' AND ')} GROUP BY 1`;
  } else {
    const where = whereOf({ ...filter, from: range.from, to: range.to }, p);
    sql = `SELECT date_bin(${bucket}::interval, occurred_at, ${origin}::timestamptz) AS start,
        count(*) FILTER (WHERE severity_rank >= ${SEVERE_RANK}) AS severe,
        count(*) FILTER (WHERE severity_rank >= ${SEVERITY.warn} AND severity_rank < ${SEVERE_RANK}) AS warning,
        count(*) FILTER (WHERE severity_rank IS NULL OR severity_rank < ${SEVERITY.warn}) AS other
      FROM events.cloud_event ${clause(where)} GROUP BY 1`;
  }
  const { rows } = await db.query<{ start: Date; severe: string; warning: string; other: string }>(
    sql,
    p.values,
  );
  const found = new Map(rows.map((r) => [r.start.getTime(), r]));
  const originMs = rollup ? Math.floor(range.from.getTime() / HOUR_MS) * HOUR_MS : range.from.getTime();
  const buckets: HistogramBucket[] = [];
  for (let t = originMs; t < range.to.getTime(); t += range.bucketMs) {
    const r = found.get(t);
    buckets.push({
      start: new Date(t),
      severe: Number(r?.severe ?? 0),
      warning: Number(r?.warning ?? 0),
      other: Number(r?.other ?? 0),
    });
  }
  return { buckets, bucketMs: range.bucketMs, source: rollup ? 'rollup' : 'table' };
}

/** The oldest stored event's time (the start of an unbounded range); undefined for an empty store. */
export async function oldestEventTime(db: DatabasePool): Promise<Date | undefined> {
  const { rows } = await db.query<{ t: Date | null }>('SELECT min(occurred_at) AS t FROM events.cloud_event');
  return rows[0]?.t ?? undefined;
}
