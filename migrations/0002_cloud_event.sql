-- The event table, range-partitioned monthly on occurred_at (the event's own `time`).
CREATE TABLE events.cloud_event (
  occurred_at        timestamptz NOT NULL,
  ce_source          text        NOT NULL,
  ce_id              text        NOT NULL,
  ce_type            text        NOT NULL,
  ce_specversion     text        NOT NULL DEFAULT '1.0',
  ce_subject         text,
  ce_datacontenttype text,
  ce_dataschema      text,
  partition_key      text,
  raw                jsonb       NOT NULL,
  data               jsonb,
  extensions         jsonb       NOT NULL DEFAULT '{}'::jsonb,
  device_id          text        GENERATED ALWAYS AS (events.device_id_of(extensions, data)) STORED,
  severity_rank      smallint    GENERATED ALWAYS AS (events.severity_rank_of(extensions, data)) STORED,
  tags               text[]      GENERATED ALWAYS AS (events.tags_of(extensions, data)) STORED,
  search_doc         tsvector    GENERATED ALWAYS AS
                       (events.search_doc_of(ce_type, ce_source, ce_subject, extensions, data)) STORED,
  event_uid          uuid        NOT NULL DEFAULT gen_random_uuid(),
  broker_topic       text,
  broker_partition   integer,
  broker_offset      bigint,
  ingested_at        timestamptz NOT NULL DEFAULT now(),
  CONSTRAINT cloud_event_identity UNIQUE (occurred_at, ce_source, ce_id)
) PARTITION BY RANGE (occurred_at);

COMMENT ON TABLE events.cloud_event IS
  'CloudEvents persisted by the consumer; monthly partitions cloud_event_YYYY_MM, bounds at +00.';

-- Index shapes of the search service: time (keyset over occurred_at, event_uid), text, payload,
-- attributes, severity. Created on the parent, so every partition gets them.
CREATE INDEX cloud_event_time_idx ON events.cloud_event (occurred_at DESC, event_uid DESC);
CREATE INDEX cloud_event_search_doc_idx ON events.cloud_event USING gin (search_doc);
CREATE INDEX cloud_event_data_idx ON events.cloud_event USING gin (data jsonb_path_ops);
CREATE INDEX cloud_event_extensions_idx ON events.cloud_event USING gin (extensions jsonb_path_ops);
CREATE INDEX cloud_event_type_idx ON events.cloud_event (ce_type, occurred_at DESC);
CREATE INDEX cloud_event_source_idx ON events.cloud_event (ce_source, occurred_at DESC);
CREATE INDEX cloud_event_device_idx ON events.cloud_event (device_id, occurred_at DESC) WHERE device_id IS NOT NULL;
CREATE INDEX cloud_event_tags_idx ON events.cloud_event USING gin (tags);
CREATE INDEX cloud_event_severe_idx ON events.cloud_event (occurred_at DESC, severity_rank)
  WHERE severity_rank >= 50;

-- The catch-all partition must stay empty: it refuses every row (CHECK false), so an event whose
-- month has no partition fails with SQLSTATE 23514 and is dead-lettered `unpersistable` at full
-- throughput instead of silently landing here (where it would block creating that month).
CREATE TABLE events.cloud_event_default PARTITION OF events.cloud_event DEFAULT;
ALTER TABLE events.cloud_event_default
  ADD CONSTRAINT cloud_event_default_refuses_rows CHECK (false);

-- Creates the partition of the month containing p_month, named cloud_event_YYYY_MM, bounds written
-- with an explicit +00 offset, with the autovacuum settings every partition shares. Returns the
-- partition name, or NULL when it already exists. Used by this migration and the maintenance job.
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
  RETURN v_name;
END $$;

-- Initial partitions: the month before the migration ran through three months ahead, so the
-- system accepts events before the maintenance job first runs.
SELECT events.create_month_partition((date_trunc('month', now() AT TIME ZONE 'UTC') + make_interval(months => m))::date)
FROM generate_series(-1, 3) AS m;
