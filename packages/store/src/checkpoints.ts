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
import { and, eq, sql } from 'drizzle-orm';
import { orm } from './orm.js';
import type { Queryable } from './queryable.js';
import { consumerCheckpoint as checkpoint } from './schema.js';

/** The offset to record for one partition (the next record to read). */
export interface Checkpoint {
  topic: string;
  partition: number;
  nextOffset: string;
}

const ofTopic = (group: string, topic: string) =>
  and(eq(checkpoint.consumerGroup, group), eq(checkpoint.topic, topic));

/**
 * Records the checkpoints of `group`, never moving one back. One named statement (parsed once per
 * connection) whatever the number of partitions: the rows come as three arrays through `unnest`.
 * Callers pass the checkpoints in a fixed order (topic, partition), so concurrent transactions lock
 * the rows in the same order.
 */
export async function upsertCheckpoints(
  db: Queryable,
  group: string,
  checkpoints: readonly Checkpoint[],
): Promise<void> {
  if (checkpoints.length === 0) return;
  await orm(db)
    .insert(checkpoint)
    .select(
      sql`SELECT ${group}, t.topic, t.part, t.off, now()
            FROM unnest(${sql.param(checkpoints.map((c) => c.topic))}::text[],
                        ${sql.param(checkpoints.map((c) => c.partition))}::int[],
                        ${sql.param(checkpoints.map((c) => c.nextOffset))}::bigint[]) AS t(topic, part, off)`,
    )
    .onConflictDoUpdate({
      target: [checkpoint.consumerGroup, checkpoint.topic, checkpoint.partition],
      // `GREATEST`: a redelivered batch never moves a checkpoint back.
      set: {
        nextOffset: sql`GREATEST(${checkpoint.nextOffset}, excluded.next_offset)`,
        updatedAt: sql`now()`,
      },
    })
    .prepare('observatory_upsert_checkpoints')
    .execute();
}

/** The stored next offset of each partition of `topic` for `group`. */
export async function readCheckpoints(
  db: Queryable,
  group: string,
  topic: string,
): Promise<Map<number, bigint>> {
  const rows = await orm(db)
    .select({ partition: checkpoint.partition, nextOffset: checkpoint.nextOffset })
    .from(checkpoint)
    .where(ofTopic(group, topic));
  return new Map(rows.map((r) => [r.partition, r.nextOffset]));
}

/** Forgets every checkpoint of `group` on `topic`; returns how many rows went. */
export async function deleteCheckpoints(db: Queryable, group: string, topic: string): Promise<number> {
  const { rowCount } = await orm(db).delete(checkpoint).where(ofTopic(group, topic));
  return rowCount ?? 0;
}
