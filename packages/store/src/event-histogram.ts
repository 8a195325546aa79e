/**
 * The search page's histogram: matching events per time bucket over the whole selected range,
 * split by severity level. Read from the hourly rollup (`events.event_rollup_hourly`: with types
 * or sources, ranges of its B-tree by type or by source, migration 0019; its totals per hour,
 * `events.event_rollup_hour_total`, for a filter without types or sources and a scope of
 * everything; for buckets of whole days, the days inside a bucket from its sums per day,
 * `events.event_rollup_daily`, migration 0020) when the filter is only time, exact types and
 * sources, and the buckets are whole hours, except the hours holding rows ingested since the
 * rollup's last refresh, which are counted from the table; from the event table otherwise (the
 * filter's index paths, as the page's rows, and for a reader whose scope admits rows by producer,
 * which the rollup does not hold), within the read pool's statement timeout.
 *
 * A table histogram costs one heap visit per match (GIN and B-tree bitmaps cannot give the time
 * and severity columns): on the 5 M-event bench store a common word over six months is 714,000
 * matches on 596,000 pages, 1.8-4 s. So when the planner expects more than `HISTOGRAM_EXACT_MAX`
 * matches (a payload comparison, which it can only guess at, counted as matching every row), the
 * counts are estimated from a repeatable block sample (`TABLESAMPLE SYSTEM`, about
 * `HISTOGRAM_SAMPLE_ROWS` rows of the months the range touches, whatever the filter) scaled by
 * its share, and the histogram says `source: 'sample'`.
 *
 * @example
 * const h = await histogramEvents(pool, { types: ['com.example.alarm'] }, { from, to, bucketMs: 3_600_000 });
 * h.buckets[0]; // { start, severe: 3, warning: 0, other: 41 }
 */

import { scopeOf } from './cancellable-pool.js';
import { hourlyCountsTable, rollupIngestedFrom } from './event-rollup.js';
import {
  clause,
  type EventFilter,
  estimateRows,
  type FilterExpression,
  onlyTimeTypesAndSources,
  readFilter,
  SqlParams,
  whereOf,
} from './event-search.js';
import { addMonths, monthRowsEstimate } from './partitions.js';
import type { DatabasePool } from './queryable.js';
import { rollupCovers } from './read-scope.js';
import { SEVERE_RANK, SEVERITY } from './severity.js';

export const HOUR_MS = 3_600_000;
export const DAY_MS = 24 * HOUR_MS;
/** Expected matches up to which a table histogram is counted exactly (about as many page visits). */
export const HISTOGRAM_EXACT_MAX = 10_000;
/** Rows of the range a sampled histogram reads, about (the sample's share is this over the range's rows). */
export const HISTOGRAM_SAMPLE_ROWS = 100_000;

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
  /**
   * `rollup`: whole hours from the hourly rollup, those it has not counted yet from the table; `table`: the
   * events, counted; `sample`: estimated from `samplePercent` % of the range's pages, scaled.
   */
  source: 'rollup' | 'table' | 'sample';
  /** The share of the range's pages read, in percent (`sample` only). */
  samplePercent?: number;
}

export interface HistogramRange {
  from: Date;
  to: Date;
  bucketMs: number;
}

/** When a table histogram is sampled (tests lower them to sample a small store). */
export interface SampleLimits {
  /** Expected matches up to which the table is counted. */
  exactMax: number;
  /** Rows of the range a sample reads, about. */
  sampleRows: number;
}

export const SAMPLE_LIMITS: SampleLimits = {
  exactMax: HISTOGRAM_EXACT_MAX,
  sampleRows: HISTOGRAM_SAMPLE_ROWS,
};

/** The rollup holds time, type and source only; it answers a filter of nothing else, in whole hours. */
export function rollupAnswers(filter: EventFilter, bucketMs: number): boolean {
  return bucketMs % HOUR_MS === 0 && onlyTimeTypesAndSources(filter);
}

/** The statement of a histogram (`histogramEvents`), where it counts, and its sample's share; tests EXPLAIN it. */
export interface HistogramStatement {
  text: string;
  values: unknown[];
  rollup: boolean;
  percent: number | undefined;
}

/** Counts per bucket (`date_bin` from `range.from`), every bucket of the range present, oldest first. */
export async function histogramEvents(
  db: DatabasePool,
  given: EventFilter,
  range: HistogramRange,
  limits: SampleLimits = SAMPLE_LIMITS,
): Promise<Histogram> {
  const { text, values, rollup, percent } = await histogramStatement(db, given, range, limits);
  const { rows } = await db.query<{ start: Date; severe: string; warning: string; other: string }>(
    text,
    values,
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
  const source = rollup ? 'rollup' : percent === undefined ? 'table' : 'sample';
  return {
    buckets,
    bucketMs: range.bucketMs,
    source,
    ...(percent === undefined ? {} : { samplePercent: percent }),
  };
}

/** The statement `histogramEvents` runs for `given` on `db` (its watermark and sample share read first). */
export async function histogramStatement(
  db: DatabasePool,
  given: EventFilter,
  range: HistogramRange,
  limits: SampleLimits = SAMPLE_LIMITS,
): Promise<HistogramStatement> {
  const filter = await readFilter(db, given);
  const p = new SqlParams();
  const bucket = p.add(`${range.bucketMs / 1000} seconds`);
  const origin = p.add(range.from);
  // A scope that admits rows by producer is counted from the table: the rollup has no producer.
  const rollup = rollupAnswers(filter, range.bucketMs) && rollupCovers(scopeOf(db));
  let sql: string;
  let percent: number | undefined;
  if (rollup) {
    // Whole hours: the first bucket counts its hour from the hour's start.
    const first = `date_trunc('hour', ${p.add(range.from)}::timestamptz, 'UTC')`;
    const to = p.add(range.to);
    const types = filter.types?.length ? p.add(filter.types) : undefined;
    const sources = filter.sources?.length ? p.add(filter.sources) : undefined;
    const matches = (type: string, source: string) =>
      [
        ...(types ? [`${type} = ANY(${types}::text[])`] : []),
        ...(sources ? [`${source} = ANY(${sources}::text[])`] : []),
      ]
        .map((c) => ` AND ${c}`)
        .join('');
    // The hours holding rows the last refresh has not counted (ingested since its watermark) are
    // counted from the table, so the bars never show fewer events than the list: the rollup is
    // only as fresh as its last refresh. Those are the latest hours, a few index ranges. The
    // watermark is read first, on its own (`rollupIngestedFrom`): a refresh committed in between
    // leaves this statement an older watermark than its rollup's, which only moves hours the
    // rollup has counted to the table: no hour is counted twice or missed.
    const ingestedFrom = p.add(await rollupIngestedFrom(db));
    const hourly = hourlyCountsTable(db, filter);
    // Bars of whole days take the days inside a bar from the daily rollup (one row a day, type and
    // source instead of 24), the other hours of the range from the hourly one, and a day holding
    // an hour the refresh has not counted from the hourly one too, but for that hour. The totals
    // of every hour are already one row an hour.
    const spans =
      range.bucketMs % DAY_MS === 0 && hourly === 'events.event_rollup_hourly'
        ? daySpans(range.from, range.to, range.bucketMs)
        : { days: [], hours: [[floorMs(range.from.getTime(), HOUR_MS), range.to.getTime()] as Span] };
    // The range again beside the spans: a plan that does not join them first still reads only it.
    const inRange = `r.bucket_start >= ${first} AND r.bucket_start < ${to}`;
    const bounds = (list: [number, number][], i: 0 | 1) => p.add(list.map((span) => new Date(span[i])));
    sql = `WITH fresh AS (
        SELECT DISTINCT date_trunc('hour', occurred_at, 'UTC') AS hour FROM events.cloud_event
         WHERE ingested_at >= ${ingestedFrom}::timestamptz
           AND occurred_at >= ${first} AND occurred_at < ${to}
      ), day_spans AS (
        SELECT * FROM unnest(${bounds(spans.days, 0)}::timestamptz[], ${bounds(spans.days, 1)}::timestamptz[]) AS s(lo, hi)
      ), fresh_days AS (
        SELECT DISTINCT d.day FROM (SELECT date_trunc('day', hour, 'UTC') AS day FROM fresh) d
          JOIN day_spans s ON d.day >= s.lo AND d.day < s.hi
      ), hour_spans AS (
        SELECT * FROM unnest(${bounds(spans.hours, 0)}::timestamptz[], ${bounds(spans.hours, 1)}::timestamptz[]) AS s(lo, hi)
        UNION ALL SELECT day, day + interval '24 hours' FROM fresh_days
      ), hours AS (
        SELECT r.bucket_start AS hour, r.error_count, r.event_count FROM events.event_rollup_daily r
          JOIN day_spans s ON r.bucket_start >= s.lo AND r.bucket_start < s.hi
         WHERE ${inRange} AND r.bucket_start NOT IN (SELECT day FROM fresh_days)${matches('r.ce_type', 'r.ce_source')}
        UNION ALL
        SELECT r.bucket_start, r.error_count, r.event_count FROM ${hourly} r
          JOIN hour_spans s ON r.bucket_start >= s.lo AND r.bucket_start < s.hi
         WHERE ${inRange} AND r.bucket_start NOT IN (SELECT hour FROM fresh)${matches('r.ce_type', 'r.ce_source')}
        UNION ALL
        SELECT f.hour, count(*) FILTER (WHERE e.severity_rank >= ${SEVERE_RANK}), count(*)
          FROM fresh f JOIN events.cloud_event e
            ON e.occurred_at >= f.hour AND e.occurred_at < f.hour + interval '1 hour'${matches('e.ce_type', 'e.ce_source')}
         GROUP BY f.hour
      )
      SELECT date_bin(${bucket}::interval, hour, date_trunc('hour', ${origin}::timestamptz, 'UTC')) AS start,
        sum(error_count)::bigint AS severe, 0::bigint AS warning, sum(event_count - error_count)::bigint AS other
      FROM hours GROUP BY 1`;
  } else {
    const bounded = { ...filter, from: range.from, to: range.to };
    percent = await samplePercent(db, bounded, limits);
    // Every match is counted or sampled (no order, no limit), so the text index may intersect its
    // words with the types whatever the planner then expects (`typeLexemes`).
    const where = whereOf(bounded, p, { typeLexemes: true });
    // Each sampled row stands for 100 / percent rows; the seed keeps a reload's bars steady.
    const n = (cond: string) =>
      percent === undefined
        ? `count(*) FILTER (WHERE ${cond})`
        : `round(count(*) FILTER (WHERE ${cond}) * ${100 / percent})::bigint`;
    const sample = percent === undefined ? '' : ` TABLESAMPLE SYSTEM (${percent}) REPEATABLE (0)`;
    sql = `SELECT date_bin(${bucket}::interval, occurred_at, ${origin}::timestamptz) AS start,
        ${n(`severity_rank >= ${SEVERE_RANK}`)} AS severe,
        ${n(`severity_rank >= ${SEVERITY.warn} AND severity_rank < ${SEVERE_RANK}`)} AS warning,
        ${n(`severity_rank IS NULL OR severity_rank < ${SEVERITY.warn}`)} AS other
      FROM events.cloud_event${sample} ${clause(where)} GROUP BY 1`;
  }
  return { text: sql, values: p.values, rollup, percent };
}

/** `ms` rounded down to a multiple of `unit` (whole hours and days of UTC). */
function floorMs(ms: number, unit: number): number {
  return Math.floor(ms / unit) * unit;
}

/** Spans of time, `[from, to)` in epoch milliseconds. */
type Span = [number, number];

/**
 * How a rollup histogram of bars of whole days (`bucketMs`, from the hour of `from`) reads the
 * range: `days`, the spans of the UTC days that lie whole within the range and within one bar,
 * from the daily rollup; `hours`, the rest of the range from the hourly one. Bars that begin at
 * midnight make one span of days and at most two of hours; bars that begin at another hour make
 * a span of each a bar.
 */
export function daySpans(from: Date, to: Date, bucketMs: number): { days: Span[]; hours: Span[] } {
  const first = floorMs(from.getTime(), HOUR_MS);
  const end = to.getTime();
  const days: Span[] = [];
  for (let day = Math.ceil(first / DAY_MS) * DAY_MS; day + DAY_MS <= end; day += DAY_MS) {
    if ((day - first) % bucketMs > bucketMs - DAY_MS) continue;
    const last = days.at(-1);
    if (last?.[1] === day) last[1] = day + DAY_MS;
    else days.push([day, day + DAY_MS]);
  }
  const hours: Span[] = [];
  let at = first;
  for (const [lo, hi] of days) {
    if (lo > at) hours.push([at, lo]);
    at = hi;
  }
  if (at < end) hours.push([at, end]);
  return { days, hours };
}

/**
 * The share of pages to sample (percent, 3 significant digits), or undefined to count: when the
 * planner expects more than `exactMax` matches (of the filter less what it can only guess at,
 * `withoutGuesses`) and the range holds more than `sampleRows` rows
 * (the share is of the rows of the months it touches, every viewer's: a sample reads whole pages,
 * so a share of a narrower scope's rows would read more pages for fewer rows).
 * Up to three EXPLAINs, nothing read.
 */
export async function samplePercent(
  db: DatabasePool,
  filter: EventFilter,
  limits: SampleLimits,
): Promise<number | undefined> {
  if ((await estimateRows(db, withoutGuesses(filter))) <= limits.exactMax) return undefined;
  const { from, to } = filter as Required<Pick<EventFilter, 'from' | 'to'>>;
  // A short range is counted: its rows are few and adjacent (the default 24 h of the bench store).
  if ((await estimateRows(db, { from, to })) <= limits.sampleRows) return undefined;
  // SYSTEM takes its share of every partition the range touches, so the share is of whole months,
  // sized from the catalog (`monthRowsEstimate`): an EXPLAIN under row-level security would count
  // a reader who sees everything a share of them, and sample more pages than the owner. Statistics
  // older than the rows (a figure not above the range's) leave it to the EXPLAIN.
  const months = { from: addMonths(from, 0), to: addMonths(new Date(to.getTime() - 1), 1) };
  const catalog = await monthRowsEstimate(db, months.from, months.to);
  const rows =
    catalog !== undefined && catalog > limits.sampleRows ? catalog : await estimateRows(db, months);
  return Number(((100 * limits.sampleRows) / rows).toPrecision(3));
}

/**
 * `filter` without the conditions the planner can only guess at (`guessesAt`). It matches at least
 * what `filter` does, so its estimate bounds what a count would visit. A `where` holding such a
 * comparison goes whole: it is ANDed with the rest.
 */
function withoutGuesses(filter: EventFilter): EventFilter {
  const { payload, where, ...rest } = filter;
  const kept = payload?.filter((c) => c.op === '=');
  return {
    ...rest,
    ...(kept?.length ? { payload: kept } : {}),
    ...(where && !expressionGuesses(where) ? { where } : {}),
  };
}

/**
 * Whether `filter` holds a payload comparison other than equality: the planner has no statistics on
 * a JSON path chosen at query time, so it takes a default selectivity (`amount > N` over all of a
 * 5 M store was expected to match 8,000 rows, was counted, and ran into the statement timeout on
 * every page), and no index narrows it.
 */
export function guessesAt(filter: EventFilter): boolean {
  return (
    (filter.payload?.some((c) => c.op !== '=') ?? false) ||
    (filter.where !== undefined && expressionGuesses(filter.where))
  );
}

function expressionGuesses(e: FilterExpression): boolean {
  if ('all' in e) return e.all.some(expressionGuesses);
  if ('any' in e) return e.any.some(expressionGuesses);
  if ('not' in e) return expressionGuesses(e.not);
  return guessesAt(e.match);
}

/** The oldest stored event's time (the start of an unbounded range); undefined for an empty store. */
export async function oldestEventTime(db: DatabasePool): Promise<Date | undefined> {
  const { rows } = await db.query<{ t: Date | null }>('SELECT min(occurred_at) AS t FROM events.cloud_event');
  return rows[0]?.t ?? undefined;
}
