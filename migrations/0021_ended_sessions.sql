-- Login sessions of the search UI ended before their expiry (a logout). The session cookie is
-- sealed and carries its own expiry, so without a record a copy of it would open the session
-- until then; every search replica reads this table and refuses the sessions named here.
--
-- session_id is a digest of the session (the search's session.ts), never the cookie. A row is
-- needed until its session would have expired anyway; the search deletes rows past expires_at
-- when it records a new one.
--
-- Row-level security: the search's reader role reads every row, adds rows, and deletes only rows
-- whose session has expired, so no statement of the search can bring an ended session back.

CREATE TABLE events.ended_session (
  session_id text PRIMARY KEY,
  expires_at timestamptz NOT NULL,
  ended_at timestamptz NOT NULL DEFAULT clock_timestamp(),
  CONSTRAINT ended_session_session_id_check CHECK (octet_length(session_id) BETWEEN 16 AND 64)
);

-- Replicas read the rows ended since their last read.
CREATE INDEX ended_session_ended_at_idx ON events.ended_session (ended_at);

ALTER TABLE events.ended_session ENABLE ROW LEVEL SECURITY;
CREATE POLICY ended_session_read ON events.ended_session FOR SELECT TO PUBLIC USING (true);
CREATE POLICY ended_session_add ON events.ended_session FOR INSERT TO PUBLIC WITH CHECK (true);
CREATE POLICY ended_session_prune ON events.ended_session FOR DELETE TO PUBLIC
  USING (expires_at < now());
