/**
 * Synthetic events written straight into `events.cloud_event` with `generate_series` (no broker,
 * no consumer), for the search service's tests and benchmark. Row n (1 = newest) is a pure
 * function of n, so tests can predict what a filter matches:
 *
 * - time: `end - n * step`, step = span / count; id `<prefix>-<n>`
 * - type `com.example.t<n % 20>`, source `urn:seed:source-<n % 50>`, subject `subject-<n % 1000>`
 * - data `{ n, temperature: n % 100, device: { id: "dev-<n % 5000>" }, message }`; the message's
 *   word is one of 7 by n % 7, plus `overflow` when n % 997 = 0
 * - extensions `{ region: eu | us | ap by n % 3, severity }`; severity `critical` when
 *   n % 500 = 1, `error` when n % 100 = 0, `warning` when n % 10 = 0, `debug` when n % 3 = 0, else `info`
 *
 * @example
 * await seedEvents(pool, { count: 12_000, spanMs: 7 * 86_400_000 });
 * await rollupFromEvents(pool);
 */
import type pg from 'pg';

export interface SeedOptions {
  count: number;
  /** Time between the newest and the oldest row. */
  spanMs: number;
  /** Time of row 0 (the newest is one step older); default now. */
  end?: Date;
  /** Prefix of the ids, so seeds of one database never collide; default `seed`. */
  idPrefix?: string;
  /** Rows per INSERT statement; default 50,000. */
  chunk?: number;
}

export const SEED_WORDS = ['alpha', 'bravo', 'charlie', 'delta', 'echo', 'foxtrot', 'golf'] as const;

/** Creates the monthly partitions the seeded range needs, then inserts the rows in chunks. */
export async function seedEvents(db: pg.Pool, opts: SeedOptions): Promise<void> {
  const end = opts.end ?? new Date();
  const stepUs = Math.max(1, Math.floor((opts.spanMs * 1000) / opts.count));
  const chunk = opts.chunk ?? 50_000;
  await db.query(
    `SELECT events.create_month_partition(m::date)
       FROM generate_series(date_trunc('month', $1::timestamptz - $2 * interval '1 millisecond'),
                            date_trunc('month', $1::timestamptz), interval '1 month') AS m`,
    [end, opts.spanMs],
  );
  for (let first = 1; first <= opts.count; first += chunk) {
    const last = Math.min(opts.count, first + chunk - 1);
    await db.query(INSERT, [first, last, end, stepUs, opts.idPrefix ?? 'seed', SEED_WORDS]);
  }
}

const INSERT = `
INSERT INTO events.cloud_event
  (occurred_at, ce_source, ce_id, ce_type, ce_subject, ce_datacontenttype, raw, data, extensions, device_id)
SELECT t, src, id, typ, subj, 'application/json',
       jsonb_build_object('specversion', '1.0', 'id', id, 'source', src, 'type', typ,
         'time', to_char(t AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"'), 'subject', subj,
         'datacontenttype', 'application/json', 'data', data) || ext,
       data, ext, data -> 'device' ->> 'id'
FROM (
  SELECT n,
    $3::timestamptz - n * $4::bigint * interval '1 microsecond' AS t,
    'urn:seed:source-' || (n % 50) AS src,
    $5::text || '-' || n AS id,
    'com.example.t' || (n % 20) AS typ,
    'subject-' || (n % 1000) AS subj,
    jsonb_build_object('n', n, 'temperature', n % 100, 'device', jsonb_build_object('id', 'dev-' || (n % 5000)),
      'message', 'reading ' || ($6::text[])[n % 7 + 1] || CASE WHEN n % 997 = 0 THEN ' overflow' ELSE '' END) AS data,
    jsonb_build_object('region', (ARRAY['eu', 'us', 'ap'])[n % 3 + 1], 'severity',
      CASE WHEN n % 500 = 1 THEN 'critical' WHEN n % 100 = 0 THEN 'error' WHEN n % 10 = 0 THEN 'warning'
           WHEN n % 3 = 0 THEN 'debug' ELSE 'info' END) AS ext
  FROM generate_series($1::bigint, $2::bigint) AS n
) AS s`;

/**
 * Fills `events.event_rollup_hourly` from the rows and moves the refresh's watermark to now (what
 * the rollup-refresh job maintains; this is a whole recount for tests and benchmarks with no
 * concurrent writer, not that job): the rows stored so far count as rolled up.
 */
export async function rollupFromEvents(db: pg.Pool): Promise<void> {
  await db.query(`
    INSERT INTO events.event_rollup_hourly (bucket_start, ce_type, ce_source, event_count, error_count, max_severity_rank)
    SELECT date_trunc('hour', occurred_at), ce_type, ce_source, count(*), count(*) FILTER (WHERE severity_rank >= 50),
           max(severity_rank)
      FROM events.cloud_event GROUP BY 1, 2, 3
    ON CONFLICT (bucket_start, ce_type, ce_source) DO UPDATE
      SET event_count = EXCLUDED.event_count, error_count = EXCLUDED.error_count,
          max_severity_rank = EXCLUDED.max_severity_rank, refreshed_at = now()`);
  await db.query(`
    INSERT INTO events.event_rollup_watermark (singleton, ingested_from, newest_ingested_at, refreshed_at)
    VALUES (true, now(), (SELECT max(ingested_at) FROM events.cloud_event), now())
    ON CONFLICT (singleton) DO UPDATE
      SET ingested_from = EXCLUDED.ingested_from, newest_ingested_at = EXCLUDED.newest_ingested_at,
          refreshed_at = EXCLUDED.refreshed_at`);
}
