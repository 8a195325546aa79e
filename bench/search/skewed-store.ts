/**
 * A skewed store for bench/search (`BENCH_STORE=skewed`): events as real stores have them, not the
 * uniform seed's 20 types x 50 sources x 1,000 subjects. Set-based SQL (generate_series) into the
 * columns the consumer writes, loaded as the uniform store is (indexes dropped, then rebuilt):
 *
 * - sources: 2,000, Zipf-like (`floor(2000 * u^4)`: the first source has ~15 % of the rows);
 *   each source sends up to 6 of 40 types (`com.acme.<domain>.<verb>`), skewed the same way, so
 *   the store holds thousands of type-source pairs and the hourly rollup millions of rows
 * - time: the rows fill the span in order (row n is older than row n + 1, as a consumer writes
 *   them), every hour by a weight: a day's curve, and one hour in ~200 a burst of 20x the rows,
 *   in which a third of the events are errors
 * - subjects: `tenant-<k % 97>/order-<k>`, k Zipf-like over 600,000 values;
 *   one event in ten has none
 * - payloads: a numeric `amount` (cubed: 3.5 % of rows above 9,000), a nested `customer` with an
 *   `address`, an `items` array of objects, a `tags` array, a device on a third of the rows, and a
 *   message of Zipf-distributed words
 *
 * Deterministic: every random draw is `hashint8extended(n, k)` of the row number n and a draw
 * number k (setseed would not survive the chunking or parallel workers), so two loads of one size
 * hold the same rows, shifted to the hour the load ends its span at.
 */
import type pg from 'pg';

/** How many sources there are, and the range of the subjects' order numbers. */
const SKEWED = { sources: 2_000, subjects: 600_000 } as const;

const DOMAINS = ['order', 'payment', 'shipment', 'invoice', 'account', 'device', 'stock', 'session'];
const VERBS = ['created', 'updated', 'failed', 'completed', 'cancelled'];
/** Words of the messages, most frequent first (drawn Zipf-like). */
export const SKEWED_WORDS = [
  'processed',
  'received',
  'accepted',
  'queued',
  'retried',
  'delayed',
  'rejected',
  'timeout',
  'mismatch',
  'overflow',
  'throttled',
  'corrupted',
] as const;

/** A uniform draw in [0, 1) of row n, draw k. */
const u = (k: number) => `((hashint8extended(n, ${k}) & 2147483647)::float8 / 2147483648.0)`;

/**
 * Hour weights of the span, oldest hour first: a day's curve (quiet nights), times 20 for the
 * burst hours. Returns the cumulative start of each hour (as a share of all rows), its share and
 * whether it is a burst.
 */
function hourWeights(hours: number): { starts: number[]; shares: number[]; bursts: boolean[] } {
  const weights: number[] = [];
  const bursts: boolean[] = [];
  for (let h = 0; h < hours; h++) {
    // A burst every ~200 hours, at hours no simple period hits twice in a row.
    const burst = (h * 2_654_435_761) % 4_294_967_296 < 4_294_967_296 / 200;
    // Quietest at midnight (0.4), busiest at noon (1.6).
    weights.push((1 - 0.6 * Math.cos(((h % 24) / 24) * 2 * Math.PI)) * (burst ? 20 : 1));
    bursts.push(burst);
  }
  const total = weights.reduce((a, b) => a + b, 0);
  const starts: number[] = [];
  let sum = 0;
  for (const w of weights) {
    starts.push(sum / total);
    sum += w;
  }
  return { starts, shares: weights.map((w) => w / total), bursts };
}

// sql-witness: seeds the benchmark's store straight into the table, as seedEvents of devstack does.
const INSERT = `
INSERT INTO events.cloud_event
  (occurred_at, ce_source, ce_id, ce_type, ce_subject, ce_datacontenttype, partition_key, raw, data, extensions,
   device_id, tags, broker_topic, broker_partition, broker_offset)
SELECT t, src, id, typ, subj, 'application/json', subj,
       jsonb_build_object('specversion', '1.0', 'id', id, 'source', src, 'type', typ,
         'time', to_char(t AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"'), 'data', data,
         'datacontenttype', 'application/json') || ext
         || CASE WHEN subj IS NULL THEN '{}'::jsonb ELSE jsonb_build_object('subject', subj) END,
       data, ext, data -> 'device' ->> 'id', tags,
       'cobalt-cloudevents-v1', src_i % 12, n
FROM (
  SELECT n, src_i, src, id, subj, data, t, tags,
    'com.acme.' || ($8::text[])[typ_i % 8 + 1] || '.' || ($9::text[])[typ_i / 8 + 1] AS typ,
    jsonb_build_object('region', (ARRAY['eu', 'us', 'ap'])[src_i % 3 + 1], 'severity',
      CASE WHEN sev < 0.003 THEN 'critical' WHEN sev < CASE WHEN burst THEN 0.33 ELSE 0.02 END THEN 'error'
           WHEN sev < 0.08 THEN 'warning' WHEN sev < 0.25 THEN 'debug' ELSE 'info' END) AS ext
  FROM (
    SELECT n, src_i, 'urn:acme:svc-' || src_i AS src, ARRAY[channel, tier] AS tags, $6::text || '-' || n AS id,
      (src_i * 13 + floor(6 * power(${u(2)}, 2))::int) % 40 AS typ_i,
      CASE WHEN ${u(3)} < 0.1 THEN NULL ELSE 'tenant-' || (k % 97) || '/order-' || k END AS subj,
      ${u(5)} AS sev, ($7::boolean[])[h] AS burst,
      $4::timestamptz - $5::int * interval '1 hour' + (h - 1) * interval '1 hour'
        + least(0.999999, (pos - ($10::float8[])[h]) / ($11::float8[])[h]) * interval '1 hour' AS t,
      jsonb_strip_nulls(jsonb_build_object(
        'amount', round((power(${u(6)}, 3) * 10000)::numeric, 2),
        'currency', (ARRAY['EUR', 'USD', 'GBP', 'JPY'])[floor(4 * power(${u(7)}, 2))::int + 1],
        'customer', jsonb_build_object('id', 'c-' || k % 50000,
          'tier', (ARRAY['gold', 'silver', 'bronze', 'free'])[floor(4 * ${u(8)})::int + 1],
          'address', jsonb_build_object('country', (ARRAY['DE', 'FR', 'US', 'JP', 'BR', 'IN'])[n % 6 + 1],
            'zip', lpad((k % 99999)::text, 5, '0'))),
        'items', CASE n % 3
          WHEN 0 THEN jsonb_build_array(jsonb_build_object('sku', 'sku-' || (n * 31 % 5000), 'qty', 1))
          WHEN 1 THEN jsonb_build_array(jsonb_build_object('sku', 'sku-' || (n * 31 % 5000), 'qty', 1),
                                        jsonb_build_object('sku', 'sku-' || (n * 37 % 5000), 'qty', 2))
          ELSE jsonb_build_array(jsonb_build_object('sku', 'sku-' || (n * 31 % 5000), 'qty', 1),
                                 jsonb_build_object('sku', 'sku-' || (n * 37 % 5000), 'qty', 2),
                                 jsonb_build_object('sku', 'sku-' || (n * 41 % 5000), 'qty', 3)) END,
        'tags', to_jsonb(ARRAY[channel, tier]),
        'device', CASE WHEN n % 3 = 0 THEN jsonb_build_object('id', 'dev-' || floor(20000 * power(${u(10)}, 2))::int) END,
        'message', ($12::text[])[floor(12 * power(${u(11)}, 2))::int + 1] || ' '
          || ($12::text[])[floor(12 * power(${u(12)}, 3))::int + 1] || ' after ' || (n % 1000) || ' ms')) AS data
    FROM (
      -- OFFSET 0 keeps each level a subquery: flattened, every use of a column (data, t) would
      -- compute it again (2.5x the time a row).
      SELECT n, pos, width_bucket(pos, $10::float8[]) AS h,
        floor(${SKEWED.sources} * power(${u(1)}, 4))::int AS src_i,
        floor(${SKEWED.subjects} * power(${u(4)}, 2.5))::int AS k,
        -- The payload's tags; the column holds them as the consumer derives it (sorted, distinct).
        (ARRAY['api', 'batch', 'mobile', 'sdk'])[n % 4 + 1] AS channel, 'tier-' || floor(3 * ${u(9)})::int AS tier
      FROM (SELECT n, (n - 0.5) / $3::float8 AS pos FROM generate_series($1::bigint, $2::bigint) AS n) AS g
      OFFSET 0
    ) AS r
    OFFSET 0
  ) AS s
  OFFSET 0
) AS e`;

export interface SkewedSeed {
  /** Rows of the whole store (the span is shared out over them). */
  total: number;
  /** This call's rows: first..last (1-based, oldest first). */
  first: number;
  last: number;
  end: Date;
  spanMs: number;
  idPrefix: string;
}

/** Inserts rows first..last of the skewed store, 50,000 a statement (partitions made first). */
export async function seedSkewed(db: pg.Pool, s: SkewedSeed): Promise<void> {
  const hours = Math.round(s.spanMs / 3_600_000);
  const { starts, shares, bursts } = hourWeights(hours);
  await db.query(
    `SELECT events.create_month_partition(m::date)
       FROM generate_series(date_trunc('month', $1::timestamptz - $2 * interval '1 hour'),
                            date_trunc('month', $1::timestamptz), interval '1 month') AS m`,
    [s.end, hours],
  );
  for (let first = s.first; first <= s.last; first += 50_000) {
    const last = Math.min(s.last, first + 49_999);
    await db.query(INSERT, [
      first,
      last,
      s.total,
      s.end,
      hours,
      s.idPrefix,
      bursts,
      DOMAINS,
      VERBS,
      starts,
      shares,
      SKEWED_WORDS,
    ]);
  }
}
