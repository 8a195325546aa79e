-- Saved searches: named, per viewer, written by the search service (packages/store/DESIGN.md,
-- "Saved searches"). A row holds only the filter parameters of a search URL (its query string),
-- never events or results, so whoever opens the link reads under their own visibility.
--
-- The table of 0003 was read and written by nothing, so it is replaced, not altered: its `query`
-- jsonb and its missing owner fit no use.
DROP TABLE events.saved_search;

-- Bounds live here too, so no client can store more than the service lets through: a name of
-- 1 to 100 characters, parameters up to 2048 bytes, an owner (the viewer's subject) up to 512.
CREATE TABLE events.saved_search (
  id         uuid        PRIMARY KEY DEFAULT gen_random_uuid(),
  owner      text        NOT NULL,
  name       text        NOT NULL,
  params     text        NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  CONSTRAINT saved_search_owner_name_key UNIQUE (owner, name),
  CONSTRAINT saved_search_owner_check CHECK (octet_length(owner) BETWEEN 1 AND 512),
  CONSTRAINT saved_search_name_check CHECK (char_length(name) BETWEEN 1 AND 100),
  CONSTRAINT saved_search_params_check CHECK (octet_length(params) <= 2048)
);

-- The viewer of the current transaction (the setting `observatory.viewer`, written by the store's
-- saved-search statements), NULL when it has none.
CREATE FUNCTION events.current_viewer() RETURNS text
LANGUAGE sql STABLE PARALLEL SAFE SET search_path = pg_catalog, pg_temp AS $$
  SELECT nullif(current_setting('observatory.viewer', true), '')
$$;

-- Every role but the owner sees, adds, changes and deletes only the rows of the transaction's
-- viewer; without one, none. The search's reader is granted the writes on this table alone
-- (grants.ts), so a mistake in a statement cannot reach another viewer's searches.
ALTER TABLE events.saved_search ENABLE ROW LEVEL SECURITY;
CREATE POLICY saved_search_of_viewer ON events.saved_search TO PUBLIC
  USING (owner = (SELECT events.current_viewer()))
  WITH CHECK (owner = (SELECT events.current_viewer()));
