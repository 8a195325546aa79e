/**
 * How fresh the store is: the `ingested_at` of the newest event (the controller's
 * `status.flow.lastStoredAt`). `cloud_event_ingested_at_idx` answers it with one index probe per
 * partition, so it is cheap on a large store and on a read-only connection.
 */
import type { Queryable } from './queryable.js';

/** The newest `ingested_at` in `events.cloud_event`; undefined when it holds no event. */
export async function newestIngestedAt(db: Queryable): Promise<Date | undefined> {
  const { rows } = await db.query<{ newest: Date | null }>(
    'SELECT max(ingested_at) AS newest FROM events.cloud_event',
  );
  return rows[0]?.newest ?? undefined;
}
