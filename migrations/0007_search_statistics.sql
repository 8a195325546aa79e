-- Finer planner statistics on the two jsonb columns the search service filters with containment
-- (`data @> '{"device":{"id":"dev-7"}}'`, `extensions @> '{"region":"eu"}'`), measured by
-- bench/search on 5 M rows (bench/results/search-perf.md).
--
-- PostgreSQL estimates `jsonb @> constant` (matchingsel) by testing the constant against the
-- column's histogram of whole documents. With the default target (100 entries) a value found in one
-- sampled document is estimated at 1 % of its partition: 8,600 rows where it has 140. The page query
-- of such a payload search then walked the time index newest first with the containment as a filter
-- (33,000 heap pages: 1-1.6 s, a timeout under load) instead of reading the GIN bitmap's 1,000 rows:
-- 566 of the benchmark's 5,000 device ids did. With 1,000 entries a hit is 0.1 % (853 rows) and none
-- does. Costs: ANALYZE samples 300,000 rows a partition instead of 30,000 (104 s for this file on
-- 5 M rows), and a payload value estimated at 853 rows is ANDed with a common word's GIN bitmap,
-- which costs CPU (bench/results/search-perf.md).
--
-- New partitions do not inherit a column's statistics target (CREATE TABLE ... PARTITION OF copies
-- the columns, not attstattarget), so events.create_month_partition sets it on each new month.
-- The target only counts from a partition's next ANALYZE, hence the one below.

ALTER TABLE events.cloud_event
  ALTER COLUMN data SET STATISTICS 1000,
  ALTER COLUMN extensions SET STATISTICS 1000;

-- The function partition-maintenance and the seeders call keeps its name and result; the body of
-- 0002 goes on under another name.
ALTER FUNCTION events.create_month_partition(date) RENAME TO create_month_partition_table;

CREATE FUNCTION events.create_month_partition(p_month date) RETURNS text
LANGUAGE plpgsql AS $$
DECLARE
  v_name text := events.create_month_partition_table(p_month);
BEGIN
  IF v_name IS NOT NULL THEN
    EXECUTE format(
      'ALTER TABLE events.%I ALTER COLUMN data SET STATISTICS 1000, ALTER COLUMN extensions SET STATISTICS 1000',
      v_name);
  END IF;
  RETURN v_name;
END $$;

ANALYZE events.cloud_event (data, extensions);
