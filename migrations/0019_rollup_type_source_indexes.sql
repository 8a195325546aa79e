-- Index paths into the hourly rollup for a histogram of one type and for a reader scoped to a few
-- sources, measured by bench/search on the 5 M-event store (bench/results/latest.md).
--
-- The primary key (bucket_start, ce_type, ce_source) leads with the hour, so a histogram over a
-- range read every type-source row of every hour in it and kept those of its type or sources: six
-- months of the bench store are 436,800 rollup rows, of which a type has 5 % and five sources 10 %
-- (100-200 ms for the scoped reader's histogram of an unfiltered page; the viewer who sees
-- everything reads event_rollup_hour_total instead, 0015). Each index here leads with the column the
-- histogram filters on, then the hour, and carries the other name and both counts, so the
-- histogram and the row-level security policy (which reads ce_type and ce_source) are answered from
-- the index alone once autovacuum has marked the rollup's pages all-visible, as it does for every
-- hour but the few the refresh rewrites.
--
-- The refresh deletes and inserts again the rows of the few hours it recomputes (one a type and
-- source of the hour), so each row it writes enters three B-trees instead of one: bench/rollup
-- measures the refresh with them.
CREATE INDEX event_rollup_hourly_type_idx ON events.event_rollup_hourly (ce_type, bucket_start)
  INCLUDE (ce_source, event_count, error_count);
CREATE INDEX event_rollup_hourly_source_idx ON events.event_rollup_hourly (ce_source, bucket_start)
  INCLUDE (ce_type, event_count, error_count);
