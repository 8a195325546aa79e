-- Planner statistics of which types occur with which sources (an MCV list of the pairs), on every
-- partition, measured by bench/search on 5 M rows (bench/results/latest.md).
--
-- A reader whose scope is a few sources reads with `ce_source = ANY(...)` as a condition, and a
-- type filter adds `ce_type = ...`. Without the pairs the planner multiplies the two selectivities
-- (a type of 5 % and sources of 10 %: 0.5 % of a partition) and walks the type index newest first,
-- expecting a page of matches soon. When none of that type's events come from those sources, the
-- walk reads every event of the type (250,000 heap pages on the bench store: 2 s, the read pool's
-- timeout). With the pairs it knows the combination is rare and ANDs the type and source bitmaps
-- instead (no heap page); a common pair still walks the type index. ANALYZE builds the list from
-- the same sample as the columns' statistics, so it costs the writes nothing.
--
-- Extended statistics belong to one table: the planner plans each partition with that partition's,
-- so each one gets them, and events.create_month_partition adds them to each new month.

DO $$
DECLARE
  r record;
BEGIN
  FOR r IN SELECT c.relname FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
            WHERE i.inhparent = 'events.cloud_event'::regclass LOOP
    EXECUTE format('CREATE STATISTICS IF NOT EXISTS events.%I (mcv) ON ce_type, ce_source FROM events.%I',
                   r.relname || '_type_source', r.relname);
  END LOOP;
END $$;

CREATE OR REPLACE FUNCTION events.create_month_partition(p_month date) RETURNS text
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
  v_name text := events.create_month_partition_table(p_month);
BEGIN
  IF v_name IS NOT NULL THEN
    EXECUTE format(
      'ALTER TABLE events.%I ALTER COLUMN data SET STATISTICS 1000, ALTER COLUMN extensions SET STATISTICS 1000',
      v_name);
    EXECUTE format('CREATE STATISTICS events.%I (mcv) ON ce_type, ce_source FROM events.%I',
                   v_name || '_type_source', v_name);
  END IF;
  RETURN v_name;
END $$;

ANALYZE events.cloud_event (ce_type, ce_source);
