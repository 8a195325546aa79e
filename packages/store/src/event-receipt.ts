/**
 * The search service's receipt view: what became of the record ingest published to (topic,
 * partition, offset), from the store alone (the search service never reads the broker). Stored
 * when a row carries those coordinates; otherwise the consumer's checkpoints of that partition
 * (`events.consumer_checkpoint`, the next offset each group will read) tell whether the consumer
 * has passed the offset (then it wrote no row: the record was dead-lettered) or not yet. A topic no
 * group has a checkpoint of, or a partition of it none has, is named as such: the consumer does not
 * read it (or has not yet committed anything there), which "not yet stored" would hide.
 *
 * A reader who sees part of the store (a scope other than everything) finds no row of an event
 * outside it, so "passed" means dead-lettered *or* not theirs (`scoped`), and the topics of other
 * teams are not listed to them.
 *
 * No index covers the broker coordinates: the row is looked for at the event's time when it is
 * given (the identity index), else among the rows ingested in the last `RECEIPT_WINDOW` (the
 * `ingested_at` index).
 *
 * @example
 * const r = await receiptOf(pool, { topic: 'cobalt.cloudevents.v1', partition: 3, offset: '1207' });
 * r.status; // 'stored' | 'pending' | 'passed' | 'unknown-topic' | 'unknown-partition'
 */
import { eq } from 'drizzle-orm';
import { scopeOf } from './cancellable-pool.js';
import { clause, type EventRow, type RawRow, ROW_COLUMNS, rowOf, SqlParams } from './event-search.js';
import { orm } from './orm.js';
import type { DatabasePool } from './queryable.js';
import { consumerCheckpoint as checkpoint } from './schema.js';

/** How far back (by ingestion time) a receipt without the event's time looks for its row. */
export const RECEIPT_WINDOW = '24 hours';

export interface ReceiptQuery {
  topic: string;
  partition: number;
  /** Decimal offset (a Kafka offset can exceed 2^53). */
  offset: string;
  /**
   * The event's own time as ingest answered it (ISO 8601 with its offset), compared by PostgreSQL at
   * the store's precision (microseconds): narrows the lookup to the time index.
   */
  time?: string;
}

export interface GroupCheckpoint {
  group: string;
  /** The next offset the group will read on this partition. */
  nextOffset: bigint;
}

/**
 * Where the receipt was read, when that is a streaming replica (search's `database.readUrl`): the
 * commit time of the last transaction it has replayed. An event the consumer stored after that is
 * not on the replica yet, so a receipt that finds no row says so instead of "not stored".
 */
export interface ReplicaPosition {
  /** Null until the replica has replayed a transaction since it started. */
  replayedUpTo: Date | null;
}

type NotFound =
  /** No group has read past the offset yet; `behind` records lie before it. */
  | { status: 'pending'; checkpoints: GroupCheckpoint[]; behind: bigint }
  /** A group read past the offset and stored no row with those coordinates (within the window searched). */
  | { status: 'passed'; checkpoints: GroupCheckpoint[] }
  /** No group has a checkpoint of this topic; `topics` are those that have one. */
  | { status: 'unknown-topic'; topics: string[] }
  /** Groups have checkpoints of the topic, none of this partition; `partitions` are those they have. */
  | { status: 'unknown-partition'; partitions: number[] };

export type Receipt =
  | { status: 'stored'; row: EventRow; ingestedAt: Date }
  | (NotFound & {
      replica?: ReplicaPosition;
      /** Read under a scope of part of the store: a row outside it is missing to this reader too. */
      scoped?: true;
    });

export async function receiptOf(db: DatabasePool, q: ReceiptQuery): Promise<Receipt> {
  const scope = scopeOf(db);
  const scoped = scope !== undefined && scope.all !== true;
  const found = await lookUp(db, q, scoped);
  if (found.status === 'stored') return found;
  const replica = await replicaPosition(db);
  return { ...found, ...(replica && { replica }), ...(scoped && { scoped: true as const }) };
}

/** The session's server, when it is a standby: how far it has replayed. */
async function replicaPosition(db: DatabasePool): Promise<ReplicaPosition | undefined> {
  const { rows } = await db.query<{ standby: boolean; replayed: Date | null }>(
    'SELECT pg_is_in_recovery() AS standby, pg_last_xact_replay_timestamp() AS replayed',
  );
  return rows[0]?.standby ? { replayedUpTo: rows[0].replayed } : undefined;
}

/** The row with those coordinates, else what the checkpoints say of them. */
async function lookUp(db: DatabasePool, q: ReceiptQuery, scoped: boolean): Promise<Receipt> {
  const p = new SqlParams();
  const where = [
    `broker_topic = ${p.add(q.topic)}`,
    `broker_partition = ${p.add(q.partition)}`,
    `broker_offset = ${p.add(q.offset)}::bigint`,
    q.time
      ? `occurred_at = ${p.add(q.time)}::timestamptz`
      : `ingested_at >= now() - ${p.add(RECEIPT_WINDOW)}::interval`,
  ];
  const { rows } = await db.query<RawRow & { ingested_at: Date }>(
    `SELECT ${ROW_COLUMNS}, ingested_at FROM events.cloud_event ${clause(where)} LIMIT 1`,
    p.values,
  );
  if (rows[0]) return { status: 'stored', row: rowOf(rows[0]), ingestedAt: rows[0].ingested_at };
  const ofTopic = await orm(db)
    .select({
      group: checkpoint.consumerGroup,
      partition: checkpoint.partition,
      nextOffset: checkpoint.nextOffset,
    })
    .from(checkpoint)
    .where(eq(checkpoint.topic, q.topic));
  if (ofTopic.length === 0) {
    if (scoped) return { status: 'unknown-topic', topics: [] };
    const topics = await orm(db).selectDistinct({ topic: checkpoint.topic }).from(checkpoint);
    return { status: 'unknown-topic', topics: topics.map((t) => t.topic).sort() };
  }
  const checkpoints = ofTopic
    .filter((c) => c.partition === q.partition)
    .map(({ group, nextOffset }) => ({ group, nextOffset }))
    .sort((a, b) => a.group.localeCompare(b.group));
  if (checkpoints.length === 0)
    return {
      status: 'unknown-partition',
      partitions: [...new Set(ofTopic.map((c) => c.partition))].sort((a, b) => a - b),
    };
  const offset = BigInt(q.offset);
  if (checkpoints.some((c) => c.nextOffset > offset)) return { status: 'passed', checkpoints };
  // No group is past the offset: the one furthest on leaves the fewest records before it.
  let behind = offset - checkpoints[0]!.nextOffset;
  for (const c of checkpoints) if (offset - c.nextOffset < behind) behind = offset - c.nextOffset;
  return { status: 'pending', checkpoints, behind };
}
