-- One GIN index over the three columns the search matches by containment or full text
-- (search_doc, data, extensions) instead of one GIN index each (issue 13, measured by bench/search on
-- 5 M rows: bench/results/search-perf.md).
--
-- With one index per column, a search for a common word and a payload value ANDed two bitmaps:
-- the word's bitmap holds ~120,000 row pointers a partition and building it cost 80-200 ms of CPU
-- a partition under load, to keep ~25 rows of the payload's ~170 (text+payload p95 270-420 ms).
-- A multicolumn GIN index answers every condition on its columns in one scan, and that scan
-- intersects the entries' posting lists by skipping: it follows the rarest entry and jumps through
-- the others' posting trees, so the common word costs a few page visits, not its 120,000
-- pointers (the same query on one partition: 80 ms -> 1-5 ms). A condition on only one of the
-- columns searches that column's entries alone, as fast as a one-column index (GIN keys carry
-- their column). The write path keeps the same entries in one index instead of three, with the
-- same pending list settings as 0005 (tags keeps its own index: the search never combines it).

CREATE INDEX cloud_event_match_idx ON events.cloud_event
  USING gin (search_doc, data jsonb_path_ops, extensions jsonb_path_ops)
  WITH (fastupdate = on, gin_pending_list_limit = 16384);

DROP INDEX events.cloud_event_search_doc_idx, events.cloud_event_data_idx,
  events.cloud_event_extensions_idx;
