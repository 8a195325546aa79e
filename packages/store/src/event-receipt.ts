/**
 * The search service's receipt view: what became of the record ingest published to (topic,
 * partition, offset), from the store alone (the search service never reads the broker). Stored
 * when a row carries those coordinates; otherwise the consumer's checkpoints of that partition
 * (`events.consumer_checkpoint`, the next offset each group will read) tell whether the consumer
 * has passed the offset (then it wrote no row: the record was dead-lettered) or not yet.
 *
 * No index covers the broker coordinates: the row is looked for at the event's time when it is
 * given (the identity index), else among the rows ingested in the last `RECEIPT_WINDOW` (the
 * `ingested_at` index).
 *
 * @example
 * const r = await receiptOf(pool, { topic: 'cobalt.cloudevents.v1', partition: 3, offset: '1207' });
 * r.status; // 'stored' | 'pending' | 'passed'
 */
import { and, eq } from 'drizzle-orm';
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
  /** The event's own time, as ingest answered it: narrows the lookup to the time index. */
  time?: Date;
}

export interface GroupCheckpoint {
  group: string;
  /** The next offset the group will read on this partition. */
  nextOffset: bigint;
}

export type Receipt =
  | { status: 'stored'; row: EventRow; ingestedAt: Date }
  /** No group has read past the offset yet; `behind` records lie before it (unset: no checkpoint at all). */
  | { status: 'pending'; checkpoints: GroupCheckpoint[]; behind: bigint | undefined }
  /** A group read past the offset and stored no row with those coordinates (within the window searched). */
  | { status: 'passed'; checkpoints: GroupCheckpoint[] };

export async function receiptOf(db: DatabasePool, q: ReceiptQuery): Promise<Receipt> {
  const p = new SqlParams();
  const where = [
    `broker_topic = ${p.add(q.topic)}`,
    `broker_partition = ${p.add(q.partition)}`,
    `broker_offset = ${p.add(q.offset)}::bigint`,
    q.time ? `occurred_at = ${p.add(q.time)}` : `ingested_at >= now() - ${p.add(RECEIPT_WINDOW)}::interval`,
  ];
  const { rows } = await db.query<RawRow & { ingested_at: Date }>(
    `SELECT ${ROW_COLUMNS}, ingested_at FROM events.cloud_event ${clause(where)} LIMIT 1`,
    p.values,
  );
  if (rows[0]) return { status: 'stored', row: rowOf(rows[0]), ingestedAt: rows[0].ingested_at };
  const checkpoints = (
    await orm(db)
      .select({ group: checkpoint.consumerGroup, nextOffset: checkpoint.nextOffset })
      .from(checkpoint)
      .where(and(eq(checkpoint.topic, q.topic), eq(checkpoint.partition, q.partition)))
  ).sort((a, b) => a.group.localeCompare(b.group));
  const offset = BigInt(q.offset);
  if (checkpoints.some((c) => c.nextOffset > offset)) return { status: 'passed', checkpoints };
  const furthest = checkpoints.reduce<bigint | undefined>(
    (m, c) => (m === undefined || c.nextOffset > m ? c.nextOffset : m),
    undefined,
  );
  return { status: 'pending', checkpoints, behind: furthest === undefined ? undefined : offset - furthest };
}
