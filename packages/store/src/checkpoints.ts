/**
 * Every statement on `events.consumer_checkpoint`: the externalised offsets of a consumer group,
 * one row per (group, topic, partition) holding the next offset to read.
 *
 * The consumer upserts them in the transaction that stores a batch's rows (so a checkpoint is
 * durable exactly when its rows are), its probe reads them to compare with the broker's committed
 * offsets, and its `clear-checkpoints` command deletes them.
 *
 * @example
 * await upsertCheckpoints(client, 'cobalt-cloudevents-v1', [{ topic, partition: 3, nextOffset: '1208' }]);
 * const stored = await readCheckpoints(pool, 'cobalt-cloudevents-v1', topic); // Map { 3 => 1208n }
 */
import type { Queryable } from './queryable.js';

/** The offset to record for one partition (the next record to read). */
export interface Checkpoint {
  topic: string;
  partition: number;
  nextOffset: string;
}

// `GREATEST`: a redelivered batch never moves a checkpoint back.
const UPSERT = `
INSERT INTO events.consumer_checkpoint AS c (consumer_group, topic, partition, next_offset, updated_at)
SELECT $1, t.topic, t.part, t.off, now()
FROM unnest($2::text[], $3::int[], $4::bigint[]) AS t(topic, part, off)
ON CONFLICT (consumer_group, topic, partition)
DO UPDATE SET next_offset = GREATEST(c.next_offset, EXCLUDED.next_offset), updated_at = now()`;

const READ =
  'SELECT partition, next_offset FROM events.consumer_checkpoint WHERE consumer_group = $1 AND topic = $2';

const DELETE = 'DELETE FROM events.consumer_checkpoint WHERE consumer_group = $1 AND topic = $2';

/**
 * Records the checkpoints of `group`, never moving one back. One named statement (parsed once per
 * connection) whatever the number of partitions. Callers pass the checkpoints in a fixed order
 * (topic, partition), so concurrent transactions lock the rows in the same order.
 */
export async function upsertCheckpoints(
  db: Queryable,
  group: string,
  checkpoints: readonly Checkpoint[],
): Promise<void> {
  if (checkpoints.length === 0) return;
  await db.query({
    name: 'observatory_upsert_checkpoints',
    text: UPSERT,
    values: [
      group,
      checkpoints.map((c) => c.topic),
      checkpoints.map((c) => c.partition),
      checkpoints.map((c) => c.nextOffset),
    ],
  });
}

/** The stored next offset of each partition of `topic` for `group`. */
export async function readCheckpoints(
  db: Queryable,
  group: string,
  topic: string,
): Promise<Map<number, bigint>> {
  const { rows } = await db.query<{ partition: number; next_offset: string }>(READ, [group, topic]);
  return new Map(rows.map((r) => [r.partition, BigInt(r.next_offset)]));
}

/** Forgets every checkpoint of `group` on `topic`; returns how many rows went. */
export async function deleteCheckpoints(db: Queryable, group: string, topic: string): Promise<number> {
  const { rowCount } = await db.query(DELETE, [group, topic]);
  return rowCount ?? 0;
}
