-- Finer planner statistics on the two jsonb columns the search service filters with containment
-- (`data @> '{"device":{"id":"dev-7"}}'`, `extensions @> '{"region":"eu"}'`), measured by
-- bench/search on 5 M rows (bench/results/search-after.md).
--
-- PostgreSQL estimates `jsonb @> constant` (matchingsel) by testing the constant against the
-- column's histogram of whole documents. With the default target (100 entries) a value found in one
-- sampled document is estimated at 1 % of its partition: 8,600 rows where it has 85. In one
-- partition of the benchmark that happened to 98 of 5,000 device ids (2 %), so about one payload
-- search in eight was estimated at ~9,000 matches instead of ~1,000, and the page query switched
-- from the GIN bitmap (1,000 heap reads) to walking the time index newest first with the
-- containment as a filter (33,000 heap reads: 1-1.6 s, a timeout on a cold cache). With 1,000
-- histogram entries one hit is 0.1 %: the worst estimate seen in that partition was 2,558, and no
-- device id switches plan. The price is ANALYZE's sample: 300,000 rows a partition instead of 30,000.
--
-- New partitions do not inherit a column's statistics target (CREATE TABLE ... PARTITION OF copies
-- the columns, not attstattarget), so events.create_month_partition sets it on each new month.

ALTER TABLE events.cloud_event
  ALTER COLUMN data SET STATISTICS 1000,
  ALTER COLUMN extensions SET STATISTICS 1000;

CREATE OR REPLACE FUNCTION events.create_month_partition(p_month date) RETURNS text
LANGUAGE plpgsql AS $$
DECLARE
  v_start date := date_trunc('month', p_month)::date;
  v_end   date := (date_trunc('month', p_month) + interval '1 month')::date;
  v_name  text := 'cloud_event_' || to_char(v_start, 'YYYY_MM');
BEGIN
  IF to_regclass(format('events.%I', v_name)) IS NOT NULL THEN
    RETURN NULL;
  END IF;
  EXECUTE format(
    'CREATE TABLE events.%I PARTITION OF events.cloud_event FOR VALUES FROM (%L) TO (%L) '
    'WITH (autovacuum_vacuum_scale_factor = 0.05, autovacuum_analyze_scale_factor = 0.02, '
    'autovacuum_vacuum_insert_scale_factor = 0.05)',
    v_name, to_char(v_start, 'YYYY-MM-DD') || ' 00:00:00+00', to_char(v_end, 'YYYY-MM-DD') || ' 00:00:00+00');
  EXECUTE format(
    'ALTER TABLE events.%I ALTER COLUMN data SET STATISTICS 1000, ALTER COLUMN extensions SET STATISTICS 1000',
    v_name);
  RETURN v_name;
END $$;

-- The target counts from the next ANALYZE; autovacuum seldom analyses a closed month again.
ANALYZE events.cloud_event (data, extensions);
