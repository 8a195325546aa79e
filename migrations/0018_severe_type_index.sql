-- An index path for a type filter with `severity >= error` (the severity the search page and the
-- query bar offer as a filter, and every alert's link), measured by bench/search on the skewed
-- 5 M-event store (bench/results/search-skewed.md).
--
-- Neither B-tree of 0002 answers both conditions: the type index returns every event of the type
-- and the heap tells the severity (a frequent type with few errors: the facets and the table
-- histogram read the type's whole months, 2-4 s), and the partial cloud_event_severe_idx returns
-- every severe event of every type. This one holds only the severe events (those
-- cloud_event_severe_idx holds, a few percent of the rows) by type, newest first: the page, the
-- facets' newest matches and the capped count stop after what they show, and `severity_rank` in the
-- key lets a higher minimum (critical, fatal) be checked on the index alone.
--
-- The search splices `severity_rank >= 50` (SEVERE_RANK) beside the bound minimum, so the planner
-- can prove the predicate. One more B-tree, for severe events only, on every insert. On an existing
-- store the migration builds it on every partition in its transaction, as 0017 does; the operator of
-- a large store can build it beforehand with CREATE INDEX CONCURRENTLY on each partition (same
-- columns and predicate) while the consumer writes, and this migration then only attaches it.
CREATE INDEX cloud_event_severe_type_idx ON events.cloud_event (ce_type, occurred_at DESC, severity_rank)
  WHERE severity_rank >= 50;
