/**
 * The monthly partitions of `events.cloud_event`: their names and bounds as
 * `events.create_month_partition(date)` writes them (`events.cloud_event_YYYY_MM`,
 * `[YYYY-MM-01 00:00:00+00, next month)`), UTC month arithmetic, and the SQL the
 * partition-maintenance job runs against the catalog and the default partition. Raw SQL on
 * purpose: catalog reads and partition DDL, which the drizzle schema does not describe.
 *
 * @example
 * monthPartitionName(new Date('2026-11-21T10:00:00Z')); // 'cloud_event_2026_11'
 * addMonths(new Date('2026-12-10T00:00:00Z'), 1); // 2027-01-01T00:00:00.000Z
 */
import type { Queryable } from './queryable.js';

export function monthPartitionName(at: Date): string {
  return `cloud_event_${at.getUTCFullYear()}_${String(at.getUTCMonth() + 1).padStart(2, '0')}`;
}

export function monthPartitionBounds(at: Date): { from: string; to: string } {
  const fmt = (d: Date) =>
    `${d.getUTCFullYear()}-${String(d.getUTCMonth() + 1).padStart(2, '0')}-01 00:00:00+00`;
  return { from: fmt(addMonths(at, 0)), to: fmt(addMonths(at, 1)) };
}

/** The UTC start of the month `n` months after the one containing `at` (n may be negative). */
export function addMonths(at: Date, n: number): Date {
  // setUTCFullYear, not Date.UTC: Date.UTC reads years 0-99 as 1900-1999.
  const month = new Date(0);
  month.setUTCFullYear(at.getUTCFullYear(), at.getUTCMonth() + n, 1);
  return month;
}

/** A bounded partition of `events.cloud_event` (the default partition is not one). */
export interface MonthPartition {
  name: string;
  from: Date;
  to: Date;
}

/**
 * Each bounded partition attached to `events.cloud_event` with its bounds and the planner's size
 * figures (`pg_class`), from the catalog, which every role may read.
 */
const MONTH_PARTITIONS = `SELECT c.oid, c.relname AS name, b.m[1]::timestamptz AS "from", b.m[2]::timestamptz AS "to",
         c.reltuples, c.relpages
    FROM pg_inherits i
    JOIN pg_class c ON c.oid = i.inhrelid
    CROSS JOIN LATERAL regexp_match(pg_get_expr(c.relpartbound, c.oid),
                                    'FROM \\(''([^'']+)''\\) TO \\(''([^'']+)''\\)') AS b(m)
   WHERE i.inhparent = 'events.cloud_event'::regclass AND b.m IS NOT NULL`;

/** The bounded partitions attached to `events.cloud_event`, oldest first, read from the catalog. */
export async function listPartitions(db: Queryable): Promise<MonthPartition[]> {
  const { rows } = await db.query<{ name: string; from: Date; to: Date }>(
    `SELECT name, "from", "to" FROM (${MONTH_PARTITIONS}) AS p ORDER BY "from"`,
  );
  return rows;
}

/**
 * The rows of the month partitions that lie within `[from, to)`, every viewer's, as the planner
 * reckons a table's size: its rows per page at the last ANALYZE or VACUUM times its pages now.
 * Undefined when no partition lies there or one has never been analysed. Under row-level security
 * an EXPLAIN's estimate is the rows the planner guesses the policy admits, a share it cannot know
 * (the scope is a setting); the catalog's figure is the same for every role.
 */
export async function monthRowsEstimate(db: Queryable, from: Date, to: Date): Promise<number | undefined> {
  const { rows } = await db.query<{ n: number | null }>(
    `SELECT CASE WHEN bool_and(reltuples >= 0) THEN sum(CASE WHEN relpages > 0
              THEN reltuples / relpages * (pg_relation_size(oid) / current_setting('block_size')::int)
              ELSE reltuples END) END AS n
       FROM (${MONTH_PARTITIONS}) AS p WHERE "from" >= $1 AND "to" <= $2`,
    [from, to],
  );
  const n = rows[0]?.n;
  return n === null || n === undefined ? undefined : Number(n);
}

/**
 * Where retention has cut the store: the end of the newest month detached from the event table
 * (partition-maintenance detaches, never drops, so the month's table stays, named as its partition
 * was), or undefined when no month was detached. A later event of such a month belongs nowhere in
 * the event table: the default partition is out of the detached table's reach, and the month cannot
 * be created again while its table exists. Retention detaches the oldest months only, so a table of
 * that name ending after the oldest attached partition starts is something else (a month staged
 * before its ATTACH, a restore, a month detached for repair) and is not a cut.
 */
export async function retentionCutoff(db: Queryable): Promise<Date | undefined> {
  const [oldest] = await listPartitions(db);
  if (!oldest) return undefined;
  const { rows } = await db.query<{ name: string }>(
    `SELECT c.relname AS name FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
      WHERE n.nspname = 'events' AND c.relkind = 'r' AND NOT c.relispartition
        AND c.relname ~ '^cloud_event_[0-9]{4}_[0-9]{2}$'`,
  );
  const ends = rows
    .map(({ name }) => {
      const [year, month] = name.slice('cloud_event_'.length).split('_').map(Number) as [number, number];
      const start = new Date(0);
      start.setUTCFullYear(year, month - 1, 1);
      return addMonths(start, 1);
    })
    .filter((end) => end <= oldest.from);
  return ends.length === 0 ? undefined : new Date(Math.max(...ends.map((e) => e.getTime())));
}

/** A stretch of time, either end open. */
export interface TimeSpan {
  from?: Date;
  to?: Date;
}

/**
 * `span` cut at the bounds of the partitions that fall inside it, newest piece first: each piece
 * lies in one bounded partition, or in a stretch no bounded partition covers (the default
 * partition's). As many pieces as the partitions make, at most twice their count plus one,
 * whatever the span's length.
 */
export function piecesByPartition(partitions: readonly MonthPartition[], span: TimeSpan): TimeSpan[] {
  const inside = (t: Date) =>
    (span.from === undefined || t > span.from) && (span.to === undefined || t < span.to);
  const cuts = [...new Set(partitions.flatMap((p) => [p.from.getTime(), p.to.getTime()]))]
    .map((ms) => new Date(ms))
    .filter(inside)
    .sort((a, b) => b.getTime() - a.getTime());
  const pieces: TimeSpan[] = [];
  let to = span.to;
  for (const cut of cuts) {
    pieces.push({ from: cut, ...(to === undefined ? {} : { to }) });
    to = cut;
  }
  pieces.push({
    ...(span.from === undefined ? {} : { from: span.from }),
    ...(to === undefined ? {} : { to }),
  });
  return pieces;
}

/**
 * Months of future partitions: how many whole months after the one containing `now` are covered,
 * without a gap, by partitions, provided the current month is covered too (0 otherwise).
 */
export function headroomMonths(partitions: readonly MonthPartition[], now: Date): number {
  const covered = (month: Date) => partitions.some((p) => p.from <= month && month < p.to);
  if (!covered(addMonths(now, 0))) return 0;
  let months = 0;
  while (months < 1200 && covered(addMonths(now, months + 1))) months++;
  return months;
}

/** Rows in the default partition, all of them or those of the month containing `month`. */
export async function countDefaultRows(db: Queryable, month?: Date): Promise<number> {
  if (!month) {
    const { rows } = await db.query<{ n: string }>('SELECT count(*) AS n FROM events.cloud_event_default');
    return Number(rows[0]?.n ?? 0);
  }
  const { from, to } = monthPartitionBounds(month);
  const { rows } = await db.query<{ n: string }>(
    'SELECT count(*) AS n FROM events.cloud_event_default WHERE occurred_at >= $1 AND occurred_at < $2',
    [from, to],
  );
  return Number(rows[0]?.n ?? 0);
}

/** Creates the month's partition with the migration's function; its name, or null when it existed. */
export async function createMonthPartition(db: Queryable, month: Date): Promise<string | null> {
  const { rows } = await db.query<{ name: string | null }>(
    'SELECT events.create_month_partition($1::date) AS name',
    [monthPartitionBounds(month).from.slice(0, 10)],
  );
  return rows[0]?.name ?? null;
}

/**
 * Detaches (never drops) a month partition: the table stays, outside `events.cloud_event`. Through
 * the migration's `events.detach_month_partition`, which the writer role may run without owning
 * the table (migration 0009).
 */
export async function detachPartition(db: Queryable, name: string): Promise<void> {
  await db.query('SELECT events.detach_month_partition($1)', [name]);
}

/**
 * The statements a human runs to create the month whose rows sit in the default partition, as one
 * transaction: block inserts into the event table (parent first, the order inserts lock in: locking
 * the default partition alone deadlocked with a consumer insert of that month once the creation
 * asked for the parent), copy the month's rows aside, delete them
 * from the default, create the month with `events.create_month_partition` (same settings as every
 * other month), and insert the rows again through the parent. Every stored column is copied
 * (event_uid and ingested_at included); the generated ones are computed again, to the same values.
 */
export async function moveDefaultRowsStatements(db: Queryable, month: Date): Promise<string> {
  const { rows } = await db.query<{ columns: string }>(
    `SELECT string_agg(quote_ident(attname), ', ' ORDER BY attnum) AS columns
       FROM pg_attribute
      WHERE attrelid = 'events.cloud_event'::regclass AND attnum > 0 AND NOT attisdropped
        AND attgenerated = ''`,
  );
  const columns = rows[0]!.columns;
  const { from, to } = monthPartitionBounds(month);
  const moving = `moving_${monthPartitionName(month)}`;
  const range = `occurred_at >= '${from}' AND occurred_at < '${to}'`;
  return [
    'BEGIN;',
    'LOCK TABLE events.cloud_event IN EXCLUSIVE MODE;',
    `CREATE TEMP TABLE ${moving} ON COMMIT DROP AS SELECT ${columns} FROM events.cloud_event_default WHERE ${range};`,
    `DELETE FROM events.cloud_event_default WHERE ${range};`,
    `SELECT events.create_month_partition('${from.slice(0, 10)}');`,
    `INSERT INTO events.cloud_event (${columns}) SELECT ${columns} FROM ${moving};`,
    'COMMIT;',
  ].join('\n');
}
