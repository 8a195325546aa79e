-- Index paths for the subject filter and for the lookup of one event by source and id, two
-- filters of the search page that read every month in full (bench/search, BENCH_STORE=skewed:
-- bench/results/search-skewed.md).
--
-- * cloud_event_subject_idx (ce_subject text_pattern_ops, occurred_at DESC), partial: a subject
--   was filtered by a sequential scan of every partition (2 s and more on 5 M rows, past the read
--   pool's statement timeout). Equality uses the index newest first; `text_pattern_ops` also makes
--   a prefix (`ce_subject ^@ 'p'`, turned by the planner into a range of the index) an index
--   condition whatever the database's collation. Events without a subject are left out: no filter
--   looks for a null subject, and they cost the writer nothing here.
-- * cloud_event_source_id_idx (ce_source, ce_id): a CloudEvent's name (`events/<source>,<id>`,
--   what ingest answers) carries no time, and the identity index leads with occurred_at, so a
--   lookup read each month's identity index whole (3 s for a frequent source). Reordering the
--   identity to (ce_source, ce_id, occurred_at) instead would give the lookup its path without
--   another index, but the identity index is also the only time index since 0005 (time ranges, the
--   keyset order, the default page): dropping that order would need cloud_event_time_idx back,
--   the same count of B-trees a row plus a rebuild of the unique index. So one narrower B-tree.
--
-- Both are one more B-tree on every insert (bench/consume, figures in bench/results/search-skewed.md:
-- about 12 us of PostgreSQL CPU a row for the consumer's insert). On an existing store the
-- migration builds them on every partition in its transaction, holding each partition's SHARE
-- lock (writes wait, reads do not) until it commits (the time on the 5 M-event benchmark store:
-- bench/results/search-skewed.md). CREATE INDEX on the parent attaches a
-- partition's matching index instead of building one, so the operator of a large store can build
-- them beforehand with CREATE INDEX CONCURRENTLY on each partition (same columns, operator class
-- and predicate) while the consumer writes, and this migration then only attaches them.
CREATE INDEX cloud_event_subject_idx ON events.cloud_event (ce_subject text_pattern_ops, occurred_at DESC)
  WHERE ce_subject IS NOT NULL;
CREATE INDEX cloud_event_source_id_idx ON events.cloud_event (ce_source, ce_id);
