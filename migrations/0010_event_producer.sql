-- Who produced each event: the `observatory-producer` record header ingest writes beside the
-- CloudEvent (authtype, authid, issuer, namespace), stored by the consumer. NULL for events stored
-- before it, and for records without a readable header (written by another producer).
--
-- Added on the parent, so every attached partition gets it; a nullable column without a default
-- changes only the catalog, not the stored rows. A partition detached before this migration lacks
-- the column: add it (ALTER TABLE ... ADD COLUMN producer jsonb) before attaching it again.
ALTER TABLE events.cloud_event ADD COLUMN producer jsonb;

COMMENT ON COLUMN events.cloud_event.producer IS
  'The verified caller that sent the event to ingest (observatory-producer header); NULL when unknown.';
