-- The hourly rollup summed per day (UTC), type and source: for the search histogram whose bars are
-- whole days (ranges longer than 30 days), which otherwise read one rollup row per hour, type and
-- source. A viewer of five of the 5 M-event bench store's 50 sources read 43,680 hourly rows for
-- an unfiltered six-month page (24 ms, against 7 ms for the viewer of everything, who reads one
-- total an hour from 0015); its days are 1,820 rows.
--
-- Kept like the totals of 0015, by triggers on events.event_rollup_hourly: each day, type and
-- source a statement's rows (`changed`) belong to is recomputed from the hourly rows of that day,
-- so it is right whatever writer wrote the hours and in whatever order. A refresh recomputes a
-- few hours, so it recomputes their days' rows of the pairs it touched. The function runs as the owner (SECURITY DEFINER): the writer role writes the hourly rollup, never
-- the days.
--
-- Row-level security: the hourly rollup's policy (0012), on the same columns.

CREATE TABLE events.event_rollup_daily (
  bucket_start timestamptz NOT NULL,
  ce_type text NOT NULL,
  ce_source text NOT NULL,
  event_count bigint NOT NULL,
  error_count bigint NOT NULL,
  PRIMARY KEY (bucket_start, ce_type, ce_source)
);
-- The index paths of 0019, for a histogram of types and a reader scoped to sources.
CREATE INDEX event_rollup_daily_type_idx ON events.event_rollup_daily (ce_type, bucket_start)
  INCLUDE (ce_source, event_count, error_count);
CREATE INDEX event_rollup_daily_source_idx ON events.event_rollup_daily (ce_source, bucket_start)
  INCLUDE (ce_type, event_count, error_count);

ALTER TABLE events.event_rollup_daily ENABLE ROW LEVEL SECURITY;
CREATE POLICY event_rollup_daily_in_scope ON events.event_rollup_daily FOR SELECT TO PUBLIC USING (events.scope_admits(
  (SELECT events.read_scope_all()), (SELECT events.read_scope_list('sources')),
  (SELECT events.read_scope_list('sourcePrefixes')), (SELECT events.read_scope_list('typePrefixes')),
  (SELECT events.read_scope_list('producers')),
  ce_source, ce_type, '{}'));

-- Recomputes the days, types and sources of the statement's rows (`changed`), each from its day's
-- hourly rows by one range of an index of 0019 (by source: 24 rows for each type of the source;
-- 24 probes of the primary key instead made a full refresh of the store tests' 24,000 events take
-- three times as long). EXECUTE plans the statement on each
-- call: PL/pgSQL would keep the plan of a session's first call, made when the daily rollup was
-- empty, and a nested loop over every daily row for each key then took 29 s for the 12,000 keys
-- of the store tests' 24,000 events. Days are UTC days whatever the writer's time zone.
CREATE FUNCTION events.sum_rollup_days() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp SET TimeZone = 'UTC' AS $$
BEGIN
  EXECUTE $sql$
    WITH sums AS MATERIALIZED (
      SELECT k.day, k.ce_type, k.ce_source, s.event_count, s.error_count
        FROM (SELECT DISTINCT date_trunc('day', bucket_start, 'UTC') AS day, ce_type, ce_source FROM changed) k
        CROSS JOIN LATERAL (
          SELECT sum(r.event_count) AS event_count, sum(r.error_count) AS error_count
            FROM events.event_rollup_hourly r
           WHERE r.ce_type = k.ce_type AND r.ce_source = k.ce_source
             AND r.bucket_start >= k.day AND r.bucket_start < k.day + interval '24 hours') s
    ),
    gone AS (
      DELETE FROM events.event_rollup_daily d USING sums s
       WHERE s.event_count IS NULL
         AND d.bucket_start = s.day AND d.ce_type = s.ce_type AND d.ce_source = s.ce_source
    )
    INSERT INTO events.event_rollup_daily (bucket_start, ce_type, ce_source, event_count, error_count)
    SELECT day, ce_type, ce_source, event_count, error_count FROM sums WHERE event_count IS NOT NULL
     ORDER BY 1, 2, 3
    ON CONFLICT (bucket_start, ce_type, ce_source) DO UPDATE
      SET event_count = excluded.event_count, error_count = excluded.error_count
  $sql$;
  RETURN NULL;
END $$;
REVOKE EXECUTE ON FUNCTION events.sum_rollup_days() FROM PUBLIC;

-- The writers of the hourly rollup write one at a time: each statement first takes the rollup
-- refresh's lock (ADVISORY_LOCKS.rollupRefresh, which a refresh holds already), so two writers of
-- different hours of one day, each summing the day in its own snapshot, cannot leave it without
-- the other's hours. Before the statement, not in the trigger after it: a writer holding its
-- rows' locks there waited for a refresh that waited for those rows.
CREATE FUNCTION events.lock_rollup_days() RETURNS trigger
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
BEGIN
  PERFORM pg_advisory_xact_lock(4242013);
  RETURN NULL;
END $$;
CREATE TRIGGER event_rollup_hourly_days_lock BEFORE INSERT OR UPDATE OR DELETE ON events.event_rollup_hourly
  FOR EACH STATEMENT EXECUTE FUNCTION events.lock_rollup_days();

CREATE TRIGGER event_rollup_hourly_days_inserted AFTER INSERT ON events.event_rollup_hourly
  REFERENCING NEW TABLE AS changed FOR EACH STATEMENT EXECUTE FUNCTION events.sum_rollup_days();
CREATE TRIGGER event_rollup_hourly_days_deleted AFTER DELETE ON events.event_rollup_hourly
  REFERENCING OLD TABLE AS changed FOR EACH STATEMENT EXECUTE FUNCTION events.sum_rollup_days();
CREATE TRIGGER event_rollup_hourly_days_updated_from AFTER UPDATE ON events.event_rollup_hourly
  REFERENCING OLD TABLE AS changed FOR EACH STATEMENT EXECUTE FUNCTION events.sum_rollup_days();
CREATE TRIGGER event_rollup_hourly_days_updated_to AFTER UPDATE ON events.event_rollup_hourly
  REFERENCING NEW TABLE AS changed FOR EACH STATEMENT EXECUTE FUNCTION events.sum_rollup_days();

INSERT INTO events.event_rollup_daily (bucket_start, ce_type, ce_source, event_count, error_count)
SELECT date_trunc('day', bucket_start, 'UTC'), ce_type, ce_source, sum(event_count), sum(error_count)
  FROM events.event_rollup_hourly GROUP BY 1, 2, 3;
ANALYZE events.event_rollup_daily;
