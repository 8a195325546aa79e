-- What the maintenance jobs (services/jobs) need.
--
-- * The default partition accepts rows again (Document 2: "Catch-all partition for out-of-range
--   rows. Must stay empty."). 0002's CHECK (false) made an event whose month has no partition fail
--   with 23514 and be dead-lettered; the dead-letter topic deletes it after its retention, so a
--   maintenance outage longer than that lost events. Now such an event is stored in the default
--   partition, partition_default_rows and DefaultPartitionNotEmpty show it, and
--   partition-maintenance reports the month blocked with the statements that move the rows out.
-- * A B-tree on ingested_at, so rollup-refresh finds the rows ingested since its last run without
--   reading the whole store. The key only grows, so inserts append to the rightmost leaf of each
--   partition's index. A BRIN index was tried first and measured useless: once VACUUM has recorded
--   the few free bytes of each old page, small new rows land in pages all over the partition, every
--   block range then covers "recent" and the scan reads the whole partition.
-- * events.maintenance_run: one row per job run, from which a long-running service exports the
--   maintenance meters (the jobs are short-lived processes that Prometheus never scrapes).
-- * events.event_rollup_watermark: where rollup-refresh resumes.

ALTER TABLE events.cloud_event_default DROP CONSTRAINT cloud_event_default_refuses_rows;

CREATE INDEX cloud_event_ingested_at_idx ON events.cloud_event (ingested_at);

CREATE TABLE events.maintenance_run (
  id                  bigint      GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  job                 text        NOT NULL CHECK (job IN ('partition-maintenance', 'rollup-refresh')),
  outcome             text        NOT NULL CHECK (outcome IN ('success', 'failure', 'skipped')),
  started_at          timestamptz NOT NULL,
  duration_seconds    double precision NOT NULL CHECK (duration_seconds >= 0),
  partitions_created  integer     NOT NULL DEFAULT 0,
  partitions_detached integer     NOT NULL DEFAULT 0,
  -- partition-maintenance only: months blocked by rows in the default partition, headroom in
  -- months and rows in the default partition after the run (NULL when the run did not get there).
  partitions_blocked  integer,
  headroom_months     integer,
  default_rows        bigint,
  -- rollup-refresh only: hours recomputed.
  hours_refreshed     integer,
  error               text
);
CREATE INDEX maintenance_run_success_idx ON events.maintenance_run (job, started_at DESC)
  WHERE outcome = 'success';

-- One row: the next refresh reads rows with ingested_at >= ingested_from; newest_ingested_at is the
-- newest event the rollup counts (rollup_staleness).
CREATE TABLE events.event_rollup_watermark (
  singleton          boolean     PRIMARY KEY DEFAULT true CHECK (singleton),
  ingested_from      timestamptz NOT NULL,
  newest_ingested_at timestamptz,
  refreshed_at       timestamptz NOT NULL
);
