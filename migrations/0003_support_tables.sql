-- Externalised consumer offsets: one row per (group, topic, partition), written in the same
-- transaction as the rows of every committed batch (dead letters included). next_offset is the
-- offset committed to the broker (the next record to read), as Kafka spells commits.
CREATE TABLE events.consumer_checkpoint (
  consumer_group text        NOT NULL,
  topic          text        NOT NULL,
  partition      integer     NOT NULL,
  next_offset    bigint      NOT NULL,
  updated_at     timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (consumer_group, topic, partition)
);

-- Hourly rollup behind the overview page, refreshed by the rollup-refresh job.
CREATE TABLE events.event_rollup_hourly (
  bucket_start      timestamptz NOT NULL,
  ce_type           text        NOT NULL,
  ce_source         text        NOT NULL,
  event_count       bigint      NOT NULL,
  error_count       bigint      NOT NULL DEFAULT 0,
  max_severity_rank smallint,
  refreshed_at      timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (bucket_start, ce_type, ce_source)
);

-- Created but read and written by nothing (spec).
CREATE TABLE events.saved_search (
  id         uuid        PRIMARY KEY DEFAULT gen_random_uuid(),
  name       text        NOT NULL,
  query      jsonb       NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now()
);
