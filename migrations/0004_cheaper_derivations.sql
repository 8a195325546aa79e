-- Cheaper derivations (measured by bench/consume: the nested, non-inlinable SQL functions of 0001
-- behind the generated columns cost ~150 us a row and capped inserts near 4,000 rows/s).
--
-- * device_id and tags become plain columns that the writer fills (the consumer derives them with
--   deviceIdOf/tagsOf of packages/store, which implement the rules below; a test checks the
--   TypeScript against these SQL functions, which stay for backfills).
-- * severity_rank stays generated; its functions lose STRICT so PostgreSQL inlines them.
-- * search_doc stays generated, from one PL/pgSQL function over plain columns.
-- * Only string values count for device ids and tags.

CREATE OR REPLACE FUNCTION events.severity_rank(p_severity text) RETURNS smallint
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
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

CREATE OR REPLACE FUNCTION events.severity_rank_of_number(p_number text) RETURNS smallint
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  SELECT CASE
    WHEN p_number IS NULL OR btrim(p_number) !~ '^[0-9]{1,2}$' THEN NULL
    WHEN btrim(p_number)::int BETWEEN 1 AND 4 THEN 10
    WHEN btrim(p_number)::int BETWEEN 5 AND 8 THEN 20
    WHEN btrim(p_number)::int BETWEEN 9 AND 12 THEN 30
    WHEN btrim(p_number)::int BETWEEN 13 AND 16 THEN 40
    WHEN btrim(p_number)::int BETWEEN 17 AND 20 THEN 50
    WHEN btrim(p_number)::int BETWEEN 21 AND 24 THEN 60
  END::smallint
$$;

CREATE OR REPLACE FUNCTION events.device_id_of(p_extensions jsonb, p_data jsonb) RETURNS text
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  SELECT coalesce(
    nullif(btrim(p_extensions ->> 'deviceid'), ''),
    CASE WHEN jsonb_typeof(p_data) = 'object' THEN coalesce(
      CASE WHEN jsonb_typeof(p_data -> 'deviceId') = 'string' THEN nullif(btrim(p_data ->> 'deviceId'), '') END,
      CASE WHEN jsonb_typeof(p_data -> 'device_id') = 'string' THEN nullif(btrim(p_data ->> 'device_id'), '') END,
      CASE WHEN jsonb_typeof(p_data -> 'device') = 'object' AND jsonb_typeof(p_data -> 'device' -> 'id') = 'string'
           THEN nullif(btrim(p_data -> 'device' ->> 'id'), '') END
    ) END
  )
$$;

CREATE OR REPLACE FUNCTION events.tags_of(p_extensions jsonb, p_data jsonb) RETURNS text[]
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  SELECT coalesce(array_agg(DISTINCT t ORDER BY t), '{}'::text[])
  FROM (
    SELECT btrim(x) COLLATE "C" AS t FROM unnest(string_to_array(p_extensions ->> 'tags', ',')) AS x
    UNION ALL
    SELECT btrim(e #>> '{}') COLLATE "C" FROM jsonb_array_elements(
      CASE WHEN jsonb_typeof(p_data) = 'object' AND jsonb_typeof(p_data -> 'tags') = 'array'
           THEN p_data -> 'tags' ELSE '[]'::jsonb END) AS e
    WHERE jsonb_typeof(e) = 'string'
  ) s
  WHERE t <> ''
$$;

CREATE OR REPLACE FUNCTION events.search_doc(
  p_type text, p_source text, p_subject text, p_device_id text, p_tags text[], p_data jsonb
) RETURNS tsvector
LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE AS $$
BEGIN
  RETURN setweight(to_tsvector('simple'::regconfig, coalesce(p_type, '')), 'A')
      || setweight(to_tsvector('simple'::regconfig,
           coalesce(p_source, '') || ' ' || coalesce(p_subject, '') || ' ' || coalesce(p_device_id, '')
           || ' ' || coalesce(array_to_string(p_tags, ' '), '')), 'B')
      || CASE WHEN p_data IS NULL THEN ''::tsvector
              ELSE setweight(jsonb_to_tsvector('simple'::regconfig, p_data, '["string"]'), 'C') END;
END $$;

-- Dropping a column drops the indexes on it; they are created again below.
ALTER TABLE events.cloud_event DROP COLUMN search_doc, DROP COLUMN tags, DROP COLUMN device_id, DROP COLUMN severity_rank;
DROP FUNCTION events.search_doc_of(text, text, text, jsonb, jsonb);

ALTER TABLE events.cloud_event
  ADD COLUMN device_id text,
  ADD COLUMN tags text[] NOT NULL DEFAULT '{}'::text[];
UPDATE events.cloud_event
   SET device_id = events.device_id_of(extensions, data), tags = events.tags_of(extensions, data);
ALTER TABLE events.cloud_event
  ADD COLUMN severity_rank smallint GENERATED ALWAYS AS (events.severity_rank_of(extensions, data)) STORED,
  ADD COLUMN search_doc tsvector GENERATED ALWAYS AS
    (events.search_doc(ce_type, ce_source, ce_subject, device_id, tags, data)) STORED;

CREATE INDEX cloud_event_search_doc_idx ON events.cloud_event USING gin (search_doc);
CREATE INDEX cloud_event_device_idx ON events.cloud_event (device_id, occurred_at DESC) WHERE device_id IS NOT NULL;
CREATE INDEX cloud_event_tags_idx ON events.cloud_event USING gin (tags);
CREATE INDEX cloud_event_severe_idx ON events.cloud_event (occurred_at DESC, severity_rank)
  WHERE severity_rank >= 50;
