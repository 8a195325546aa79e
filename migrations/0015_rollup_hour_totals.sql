-- The hourly rollup summed over types and sources: one row an hour, kept by triggers on
-- events.event_rollup_hourly, for the search histogram of a filter without types or sources
-- (packages/store/src/event-histogram.ts). Summing the hourly rollup itself read one row per hour,
-- type and source: six months of the 5 M-event bench store are 436,800 rows, 5,800 pages, about
-- 200 ms on an idle machine for a histogram that has 4,368 hours (bench/results/latest.md).
--
-- Triggers rather than the refresh's own statements: every writer of the rollup (the refresh job,
-- the seeders' upsert, a hand-run repair) keeps the totals, and an hour's total is recomputed
-- from the rollup's rows of that hour, so it is right whatever order they come in. The function
-- runs as the owner (SECURITY DEFINER): the writer role writes the rollup, never the totals.
--
-- Row-level security: a total counts every source, so only a scope that admits everything
-- (`{"all": true}`) reads it; any other reader reads the hourly rollup under its policy.

CREATE TABLE events.event_rollup_hour_total (
  bucket_start timestamptz PRIMARY KEY,
  event_count bigint NOT NULL,
  error_count bigint NOT NULL
);

ALTER TABLE events.event_rollup_hour_total ENABLE ROW LEVEL SECURITY;
CREATE POLICY event_rollup_hour_total_in_scope ON events.event_rollup_hour_total FOR SELECT TO PUBLIC
  USING ((SELECT events.read_scope_all()));

-- Recomputes the totals of the hours the statement's rows (`changed`) belong to.
CREATE FUNCTION events.sum_rollup_hours() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
BEGIN
  WITH hours AS (SELECT DISTINCT bucket_start FROM changed),
  gone AS (
    DELETE FROM events.event_rollup_hour_total t USING hours h
     WHERE t.bucket_start = h.bucket_start
       AND NOT EXISTS (SELECT 1 FROM events.event_rollup_hourly r WHERE r.bucket_start = h.bucket_start)
  )
  INSERT INTO events.event_rollup_hour_total (bucket_start, event_count, error_count)
  SELECT r.bucket_start, sum(r.event_count), sum(r.error_count)
    FROM events.event_rollup_hourly r JOIN hours h ON h.bucket_start = r.bucket_start
   GROUP BY r.bucket_start
  ON CONFLICT (bucket_start) DO UPDATE
    SET event_count = excluded.event_count, error_count = excluded.error_count;
  RETURN NULL;
END $$;
REVOKE EXECUTE ON FUNCTION events.sum_rollup_hours() FROM PUBLIC;

-- A trigger with transition tables fires for one event; an update may move a row between hours.
CREATE TRIGGER event_rollup_hourly_inserted AFTER INSERT ON events.event_rollup_hourly
  REFERENCING NEW TABLE AS changed FOR EACH STATEMENT EXECUTE FUNCTION events.sum_rollup_hours();
CREATE TRIGGER event_rollup_hourly_deleted AFTER DELETE ON events.event_rollup_hourly
  REFERENCING OLD TABLE AS changed FOR EACH STATEMENT EXECUTE FUNCTION events.sum_rollup_hours();
CREATE TRIGGER event_rollup_hourly_updated_from AFTER UPDATE ON events.event_rollup_hourly
  REFERENCING OLD TABLE AS changed FOR EACH STATEMENT EXECUTE FUNCTION events.sum_rollup_hours();
CREATE TRIGGER event_rollup_hourly_updated_to AFTER UPDATE ON events.event_rollup_hourly
  REFERENCING NEW TABLE AS changed FOR EACH STATEMENT EXECUTE FUNCTION events.sum_rollup_hours();

INSERT INTO events.event_rollup_hour_total (bucket_start, event_count, error_count)
SELECT bucket_start, sum(event_count), sum(error_count) FROM events.event_rollup_hourly GROUP BY 1;
ANALYZE events.event_rollup_hour_total;
