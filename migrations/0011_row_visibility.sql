-- Who may see which events, enforced here so that no read path of the search service can forget it
-- (packages/store/DESIGN.md, "Row visibility"). Row-level security on the event table and the
-- hourly rollup: every role but the owner (which bypasses RLS: the migrations, and whoever logs
-- in as it) and the writer (whose policy admits everything, created by the grants of the
-- migration runner, which know its name) sees only the rows of the scope its transaction carries
-- in the setting `observatory.scope`, JSON written by the store's `scopedPool`:
--   {"all": true}, or
--   {"sources": [...], "sourcePrefixes": [...], "typePrefixes": [...], "producers": [...]}
-- A row is admitted when any list admits it. Without the setting nothing is admitted.
--
-- The reader reaches the rows only through the parent: RLS of a partitioned table is not applied
-- when a partition is named directly, so the grants give the reader no privilege on partitions.

-- The scope of the current transaction, NULL when it has none (set_config(..., true) leaves ''
-- behind once its transaction ends). STABLE: one value for the whole statement.
CREATE FUNCTION events.read_scope() RETURNS jsonb
LANGUAGE sql STABLE PARALLEL SAFE SET search_path = pg_catalog, pg_temp AS $$
  SELECT nullif(current_setting('observatory.scope', true), '')::jsonb
$$;

-- Whether the current scope admits everything.
CREATE FUNCTION events.read_scope_all() RETURNS boolean
LANGUAGE sql STABLE PARALLEL SAFE SET search_path = pg_catalog, pg_temp AS $$
  SELECT coalesce((events.read_scope() ->> 'all')::boolean, false)
$$;

-- One list of the current scope ('sources', 'sourcePrefixes', 'typePrefixes', 'producers'); empty
-- when the scope lacks it or there is no scope.
CREATE FUNCTION events.read_scope_list(p_key text) RETURNS text[]
LANGUAGE sql STABLE PARALLEL SAFE SET search_path = pg_catalog, pg_temp AS $$
  SELECT coalesce(array(SELECT jsonb_array_elements_text(
           CASE jsonb_typeof(events.read_scope() -> p_key) WHEN 'array' THEN events.read_scope() -> p_key END)),
         '{}')
$$;

-- Each function call sits in its own sub-select, so the planner evaluates it once per statement
-- (an InitPlan), not once per row; `= ANY` and `^@ ANY` (starts_with) are leakproof comparisons.
ALTER TABLE events.cloud_event ENABLE ROW LEVEL SECURITY;
CREATE POLICY cloud_event_in_scope ON events.cloud_event FOR SELECT TO PUBLIC USING (
  (SELECT events.read_scope_all())
  OR ce_source = ANY ((SELECT events.read_scope_list('sources'))::text[])
  OR ce_source ^@ ANY ((SELECT events.read_scope_list('sourcePrefixes'))::text[])
  OR ce_type ^@ ANY ((SELECT events.read_scope_list('typePrefixes'))::text[])
  OR producer ->> 'authid' = ANY ((SELECT events.read_scope_list('producers'))::text[])
  OR producer ->> 'namespace' = ANY ((SELECT events.read_scope_list('producers'))::text[])
);

-- The rollup has no producer: a scope's producers admit none of its rows, and the store's
-- histogram counts such a scope from the event table instead.
ALTER TABLE events.event_rollup_hourly ENABLE ROW LEVEL SECURITY;
CREATE POLICY event_rollup_hourly_in_scope ON events.event_rollup_hourly FOR SELECT TO PUBLIC USING (
  (SELECT events.read_scope_all())
  OR ce_source = ANY ((SELECT events.read_scope_list('sources'))::text[])
  OR ce_source ^@ ANY ((SELECT events.read_scope_list('sourcePrefixes'))::text[])
  OR ce_type ^@ ANY ((SELECT events.read_scope_list('typePrefixes'))::text[])
);
