-- The type and source names a viewer's free text is matched against, cheap to read under a scope
-- (packages/store/DESIGN.md, "Names under a scope"). Resolving a word against every distinct type
-- and source by skipping through the event table's B-trees walks, under row-level security, every
-- row of the names the viewer cannot see. So the names live in a catalog of their own: one row per
-- month and (source, type, producer) that an event carried, kept by a trigger on the event table,
-- and read under the same scope predicate as the events, so a viewer sees a name exactly when an
-- event of theirs carries it.

-- The scope predicate, one definition for every table under row-level security: whether a row with
-- this source, type and producer (its authid and namespace, either maybe null) is in the scope the
-- other arguments spell out. Each policy passes the scope as InitPlans, the setting read once per
-- statement as before; this function has no sub-select and no SET, so the planner inlines it into
-- the policy (an opaque call would cost a function call per row). A SQL-standard body is parsed
-- here, once: its operators are fixed whatever search_path a caller has.
CREATE FUNCTION events.scope_admits(
  p_all boolean, p_sources text[], p_source_prefixes text[], p_type_prefixes text[], p_producers text[],
  p_source text, p_type text, p_producer_ids text[]) RETURNS boolean
LANGUAGE sql IMMUTABLE PARALLEL SAFE
RETURN p_all
  OR p_source = ANY (p_sources)
  OR p_source ^@ ANY (p_source_prefixes)
  OR p_type ^@ ANY (p_type_prefixes)
  OR p_producer_ids && p_producers;

-- What the predicate and the catalog read of an event: its producer as [authid, namespace], and
-- its month (UTC, whatever the session's time zone). Inlined as the predicate is.
CREATE FUNCTION events.producer_ids(p_producer jsonb) RETURNS text[]
LANGUAGE sql IMMUTABLE PARALLEL SAFE
RETURN ARRAY[p_producer ->> 'authid', p_producer ->> 'namespace'];

CREATE FUNCTION events.utc_month(p_at timestamptz) RETURNS date
LANGUAGE sql IMMUTABLE PARALLEL SAFE
RETURN date_trunc('month', p_at AT TIME ZONE 'UTC')::date;

-- The policies of 0011, now through the shared predicate (the same rows admitted: `&&` ignores a
-- null element as `= ANY` never matches one). The rollup has no producer.
ALTER POLICY cloud_event_in_scope ON events.cloud_event USING (events.scope_admits(
  (SELECT events.read_scope_all()), (SELECT events.read_scope_list('sources')),
  (SELECT events.read_scope_list('sourcePrefixes')), (SELECT events.read_scope_list('typePrefixes')),
  (SELECT events.read_scope_list('producers')),
  ce_source, ce_type, events.producer_ids(producer)));

ALTER POLICY event_rollup_hourly_in_scope ON events.event_rollup_hourly USING (events.scope_admits(
  (SELECT events.read_scope_all()), (SELECT events.read_scope_list('sources')),
  (SELECT events.read_scope_list('sourcePrefixes')), (SELECT events.read_scope_list('typePrefixes')),
  (SELECT events.read_scope_list('producers')),
  ce_source, ce_type, '{}'));

-- Every (source, type, producer) an event of the month (UTC) carried. The producer is the pair the
-- predicate reads, [authid, namespace], as an array so that rows without one share a key (array
-- equality holds between null elements, where a null column would be distinct). The month lets a
-- detached partition take its names along.
CREATE TABLE events.event_name (
  month date NOT NULL,
  ce_source text NOT NULL,
  ce_type text NOT NULL,
  producer_ids text[] NOT NULL,
  PRIMARY KEY (month, ce_source, ce_type, producer_ids)
);

ALTER TABLE events.event_name ENABLE ROW LEVEL SECURITY;
CREATE POLICY event_name_in_scope ON events.event_name FOR SELECT TO PUBLIC USING (events.scope_admits(
  (SELECT events.read_scope_all()), (SELECT events.read_scope_list('sources')),
  (SELECT events.read_scope_list('sourcePrefixes')), (SELECT events.read_scope_list('typePrefixes')),
  (SELECT events.read_scope_list('producers')),
  ce_source, ce_type, producer_ids));

-- Once per INSERT statement on the event table, whoever runs it (the consumer's batch, a seed, the
-- re-insert of a month moved out of the default partition), over the rows it inserted. In key
-- order, so two batches adding the same new names wait for each other instead of deadlocking.
-- SECURITY INVOKER: the writer inserts the names as it inserts the events (grants.ts).
CREATE FUNCTION events.record_event_names() RETURNS trigger
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
BEGIN
  INSERT INTO events.event_name (month, ce_source, ce_type, producer_ids)
  SELECT DISTINCT events.utc_month(occurred_at), ce_source, ce_type, events.producer_ids(producer)
    FROM inserted_events
   ORDER BY 1, 2, 3, 4
  ON CONFLICT DO NOTHING;
  RETURN NULL;
END $$;

CREATE TRIGGER cloud_event_names AFTER INSERT ON events.cloud_event
  REFERENCING NEW TABLE AS inserted_events
  FOR EACH STATEMENT EXECUTE FUNCTION events.record_event_names();

-- The names of the events stored so far (after the trigger: an insert waits for this transaction).
INSERT INTO events.event_name (month, ce_source, ce_type, producer_ids)
SELECT DISTINCT events.utc_month(occurred_at), ce_source, ce_type, events.producer_ids(producer)
  FROM events.cloud_event;
ANALYZE events.event_name;

-- Detaching a month (0009) takes its names along: no event of that month stays in the table.
-- 0009's body goes on under another name, as 0007 did for create_month_partition, and runs as its
-- caller: only through the new function, as the owner, can it detach anything (a writer granted
-- EXECUTE on the old name before this migration keeps it on the renamed one, uselessly).
ALTER FUNCTION events.detach_month_partition(text) RENAME TO detach_month_partition_table;
ALTER FUNCTION events.detach_month_partition_table(text) SECURITY INVOKER;

CREATE FUNCTION events.detach_month_partition(p_name text) RETURNS void
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
BEGIN
  PERFORM events.detach_month_partition_table(p_name);
  DELETE FROM events.event_name WHERE month = to_date(substr(p_name, 13), 'YYYY_MM');
END $$;
REVOKE EXECUTE ON FUNCTION events.detach_month_partition(text) FROM PUBLIC;
