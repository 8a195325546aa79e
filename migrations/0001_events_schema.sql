-- Schema `events` and the pure functions the generated columns of events.cloud_event use.
-- The functions are IMMUTABLE so PostgreSQL accepts them in generated columns; the search service
-- calls events.severity_rank(text) for its filter, so both sides share one ordering
-- (mirrored in packages/store/src/severity.ts, checked by a test).

CREATE SCHEMA IF NOT EXISTS events;

-- Sessions run in UTC. Pools also pass `-c TimeZone=UTC`; this covers ad-hoc psql sessions.
DO $$
BEGIN
  EXECUTE format('ALTER DATABASE %I SET timezone TO %L', current_database(), 'UTC');
EXCEPTION WHEN insufficient_privilege THEN
  RAISE NOTICE 'not the database owner: sessions must set TimeZone=UTC themselves';
END $$;

-- Severity ordering. Text names (case-insensitive) map to ranks; 50 is error, and only ranks
-- >= 50 have an index path (partial index on events.cloud_event).
CREATE OR REPLACE FUNCTION events.severity_rank(p_severity text) RETURNS smallint
LANGUAGE sql IMMUTABLE PARALLEL SAFE STRICT AS $$
  SELECT CASE lower(btrim(p_severity))
    WHEN 'trace' THEN 10 WHEN 'finest' THEN 10
    WHEN 'debug' THEN 20 WHEN 'fine' THEN 20
    WHEN 'info' THEN 30 WHEN 'information' THEN 30 WHEN 'informational' THEN 30
    WHEN 'notice' THEN 35
    WHEN 'warn' THEN 40 WHEN 'warning' THEN 40
    WHEN 'error' THEN 50 WHEN 'err' THEN 50
    WHEN 'critical' THEN 60 WHEN 'crit' THEN 60 WHEN 'fatal' THEN 60
    WHEN 'alert' THEN 70
    WHEN 'emergency' THEN 80 WHEN 'emerg' THEN 80 WHEN 'panic' THEN 80
  END::smallint
$$;

-- OpenTelemetry SeverityNumber (1..24) to the same ranks.
CREATE OR REPLACE FUNCTION events.severity_rank_of_number(p_number text) RETURNS smallint
LANGUAGE sql IMMUTABLE PARALLEL SAFE STRICT AS $$
  SELECT CASE
    WHEN btrim(p_number) !~ '^[0-9]{1,2}$' THEN NULL
    WHEN btrim(p_number)::int BETWEEN 1 AND 4 THEN 10
    WHEN btrim(p_number)::int BETWEEN 5 AND 8 THEN 20
    WHEN btrim(p_number)::int BETWEEN 9 AND 12 THEN 30
    WHEN btrim(p_number)::int BETWEEN 13 AND 16 THEN 40
    WHEN btrim(p_number)::int BETWEEN 17 AND 20 THEN 50
    WHEN btrim(p_number)::int BETWEEN 21 AND 24 THEN 60
  END::smallint
$$;

-- Where an event's severity comes from, first match wins: extension `severity`, extension
-- `severitytext`, data.severity, data.severityText, data.level (names); then extension
-- `severitynumber`, data.severityNumber (OpenTelemetry numbers). Unknown or absent: NULL.
CREATE OR REPLACE FUNCTION events.severity_rank_of(p_extensions jsonb, p_data jsonb) RETURNS smallint
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  SELECT coalesce(
    events.severity_rank(p_extensions ->> 'severity'),
    events.severity_rank(p_extensions ->> 'severitytext'),
    events.severity_rank(CASE WHEN jsonb_typeof(p_data) = 'object' THEN p_data ->> 'severity' END),
    events.severity_rank(CASE WHEN jsonb_typeof(p_data) = 'object' THEN p_data ->> 'severityText' END),
    events.severity_rank(CASE WHEN jsonb_typeof(p_data) = 'object' THEN p_data ->> 'level' END),
    events.severity_rank_of_number(p_extensions ->> 'severitynumber'),
    events.severity_rank_of_number(CASE WHEN jsonb_typeof(p_data) = 'object' THEN p_data ->> 'severityNumber' END)
  )
$$;

-- Device id: extension `deviceid`, else data.deviceId, data.device_id, data.device.id. Never the subject.
CREATE OR REPLACE FUNCTION events.device_id_of(p_extensions jsonb, p_data jsonb) RETURNS text
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  SELECT coalesce(
    nullif(btrim(p_extensions ->> 'deviceid'), ''),
    CASE WHEN jsonb_typeof(p_data) = 'object' THEN coalesce(
      nullif(btrim(p_data ->> 'deviceId'), ''),
      nullif(btrim(p_data ->> 'device_id'), ''),
      CASE WHEN jsonb_typeof(p_data -> 'device') = 'object' THEN nullif(btrim(p_data -> 'device' ->> 'id'), '') END
    ) END
  )
$$;

-- Tags: extension `tags` split on commas, plus data.tags when it is an array; trimmed, empty
-- entries dropped, de-duplicated, sorted.
CREATE OR REPLACE FUNCTION events.tags_of(p_extensions jsonb, p_data jsonb) RETURNS text[]
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  SELECT coalesce(array_agg(DISTINCT t ORDER BY t), '{}'::text[])
  FROM (
    SELECT btrim(x) AS t FROM unnest(string_to_array(p_extensions ->> 'tags', ',')) AS x
    UNION ALL
    SELECT btrim(e) FROM jsonb_array_elements_text(
      CASE WHEN jsonb_typeof(p_data) = 'object' AND jsonb_typeof(p_data -> 'tags') = 'array'
           THEN p_data -> 'tags' ELSE '[]'::jsonb END) AS e
  ) s
  WHERE t <> ''
$$;

-- Full-text document, configuration 'simple' (identifiers, not prose): type (weight A); source,
-- subject and device id (B); tags (B); every string value of the payload (C).
CREATE OR REPLACE FUNCTION events.search_doc_of(
  p_type text, p_source text, p_subject text, p_extensions jsonb, p_data jsonb
) RETURNS tsvector
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  SELECT setweight(to_tsvector('simple'::regconfig, coalesce(p_type, '')), 'A')
      || setweight(to_tsvector('simple'::regconfig,
           concat_ws(' ', p_source, p_subject, events.device_id_of(p_extensions, p_data),
                     array_to_string(events.tags_of(p_extensions, p_data), ' '))), 'B')
      || setweight(CASE WHEN p_data IS NULL THEN ''::tsvector
                        ELSE jsonb_to_tsvector('simple'::regconfig, p_data, '["string"]') END, 'C')
$$;
