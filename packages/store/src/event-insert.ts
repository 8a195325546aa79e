/**
 * Writes events to `events.cloud_event`: one statement per batch, alone or in a transaction with
 * the batch's checkpoints (`upsertCheckpoints`).
 *
 * Raw SQL, not the query builder: this is the consumer's hot path, and bench/consume showed the
 * fixed-shape statements below are what keep the write close to COPY. The rows travel as 18
 * parallel arrays that `unnest` turns back into rows, so the statement text never changes (18
 * parameters whatever the batch size) and is named (prepared once per connection, then only bound
 * and executed).
 *
 * Two statements over the same arrays. `INSERT_EVENTS` skips rows that already exist (`ON
 * CONFLICT DO NOTHING`, repeats within the batch included) and `RETURNING ce_type` gives the
 * inserted rows, so duplicates = attempted - inserted. `INSERT_NEW_EVENTS` is a plain INSERT: no
 * speculative insertion (an arbiter index probe and a confirmation WAL record a row) and nothing
 * returned, the cheaper statement for the batch whose rows are all new, as nearly every batch is.
 * `insertEventsWithCheckpoints` tries it first; a unique violation (a redelivered or repeated row)
 * rolls the whole transaction back, and the batch is written again with `INSERT_EVENTS`.
 *
 * @example
 * const result = await insertEventsWithCheckpoints(pool, 'cobalt-cloudevents-v1', rows, checkpoints);
 * result.attempted - result.inserted; // rows that were already stored
 */
import { type Checkpoint, upsertCheckpoints } from './checkpoints.js';
import { errorCodeOf } from './errors.js';
import type { DatabasePool, Queryable } from './queryable.js';
import type { NewCloudEventRow } from './schema.js';
import { inPooledTransaction } from './transactions.js';

/** Separator of the tags travelling as one text per row (`string_to_array` in the statement). */
export const TAG_SEPARATOR = '\u001f';

/**
 * Values of one row of `events.cloud_event` to insert, in the form the statement's arrays carry
 * them (text for timestamps and JSON, the offset as a decimal string), not drizzle's values
 * (`Date`, objects, numbers), which the hot path would only convert back. `EVENT_INSERT_FIELDS`
 * ties them to the columns of the drizzle schema.
 */
export interface EventInsertRow {
  occurredAt: string;
  source: string;
  id: string;
  type: string;
  specversion: string;
  subject: string | null;
  datacontenttype: string | null;
  dataschema: string | null;
  partitionKey: string | null;
  /** The verbatim CloudEvent in JSON format (text, spliced into a jsonb parameter). */
  raw: string;
  /** The payload as JSON text, or null. */
  data: string | null;
  extensions: string;
  /** Derived by `deviceIdOf`. */
  deviceId: string | null;
  /** Derived by `tagsOf`, joined with `TAG_SEPARATOR` (tags never contain it: it is stripped). */
  tags: string;
  topic: string;
  partition: number;
  offset: string;
  /** Who sent it (the `observatory-producer` header) as JSON text, or null when unknown. */
  producer: string | null;
}

/** Columns the server fills itself (defaults); every other insertable column is the writer's. */
type WrittenColumn = Exclude<keyof NewCloudEventRow, 'eventUid' | 'ingestedAt'>;

/** The fields that may fill column `C`: any, but one that may be null only a nullable column. */
type FieldFor<C extends WrittenColumn> = {
  [F in keyof EventInsertRow]: null extends EventInsertRow[F]
    ? null extends NewCloudEventRow[C]
      ? F
      : never
    : F;
}[keyof EventInsertRow];

/**
 * The field of `EventInsertRow` that fills each column of `cloudEvent` (schema.ts). The build
 * fails when the schema gains a column the insert does not write, or a field may carry null into a
 * NOT NULL column: the insert follows the schema.
 */
export const EVENT_INSERT_FIELDS = {
  occurredAt: 'occurredAt',
  ceSource: 'source',
  ceId: 'id',
  ceType: 'type',
  ceSpecversion: 'specversion',
  ceSubject: 'subject',
  ceDatacontenttype: 'datacontenttype',
  ceDataschema: 'dataschema',
  partitionKey: 'partitionKey',
  raw: 'raw',
  data: 'data',
  extensions: 'extensions',
  deviceId: 'deviceId',
  tags: 'tags',
  brokerTopic: 'topic',
  brokerPartition: 'partition',
  brokerOffset: 'offset',
  producer: 'producer',
} as const satisfies { [C in WrittenColumn]: FieldFor<C> };

export interface EventInsertResult {
  attempted: number;
  /** Inserted rows per CloudEvents type. */
  insertedByType: Map<string, number>;
  inserted: number;
}

/**
 * The rows as `unnest` rebuilds them from the 18 arrays, every one or none: a row already stored
 * fails the statement with a unique violation.
 */
const INSERT_NEW_EVENTS = `
INSERT INTO events.cloud_event (
  occurred_at, ce_source, ce_id, ce_type, ce_specversion, ce_subject, ce_datacontenttype,
  ce_dataschema, partition_key, raw, data, extensions, broker_topic, broker_partition, broker_offset,
  device_id, tags, producer)
SELECT t.occurred_at::timestamptz, t.src, t.id, t.typ, t.spec, t.subj, t.dct, t.dsch, t.pkey,
       t.raw::jsonb, t.data::jsonb, t.ext::jsonb, t.topic, t.part, t.off, t.dev,
       string_to_array(t.tags, E'\\x1f'), t.producer::jsonb
FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[],
            $8::text[], $9::text[], $10::text[], $11::text[], $12::text[], $13::text[], $14::int[],
            $15::bigint[], $16::text[], $17::text[], $18::text[])
     AS t(occurred_at, src, id, typ, spec, subj, dct, dsch, pkey, raw, data, ext, topic, part, off, dev, tags,
          producer)`;

/** Skips the rows already stored (or repeated in the batch) and returns the type of each inserted one. */
const INSERT_EVENTS = `${INSERT_NEW_EVENTS}
ON CONFLICT DO NOTHING
RETURNING ce_type`;

/** SQLSTATE unique_violation. */
const UNIQUE_VIOLATION = '23505';

/** Element type of the binary text arrays: the OID of `text`. */
const TEXT_OID = 25;

/**
 * A one-dimensional `text[]` in PostgreSQL's binary array format (what `array_recv` reads), which
 * node-postgres sends as a binary parameter because it is a Buffer: each value's UTF-8 bytes after
 * its length, null as length -1. No escaping here and no array literal for the server to parse:
 * the raw CloudEvent is most of the bytes and all of it passes here.
 */
export function binaryTextArray(values: readonly (string | null)[]): Buffer {
  if (values.length === 0) {
    const empty = Buffer.alloc(12); // no dimensions, no nulls
    empty.writeInt32BE(TEXT_OID, 8);
    return empty;
  }
  const lengths = new Array<number>(values.length);
  let size = 20;
  let hasNull = 0;
  for (let i = 0; i < values.length; i++) {
    const v = values[i];
    if (v === null || v === undefined) {
      lengths[i] = -1;
      hasNull = 1;
    } else {
      lengths[i] = Buffer.byteLength(v);
      size += lengths[i]!;
    }
    size += 4;
  }
  const buf = Buffer.allocUnsafe(size);
  buf.writeInt32BE(1, 0); // dimensions
  buf.writeInt32BE(hasNull, 4);
  buf.writeInt32BE(TEXT_OID, 8);
  buf.writeInt32BE(values.length, 12);
  buf.writeInt32BE(1, 16); // lower bound
  let at = 20;
  for (let i = 0; i < values.length; i++) {
    const length = lengths[i]!;
    buf.writeInt32BE(length, at);
    at += 4;
    if (length > 0) at += buf.write(values[i]!, at, length, 'utf8');
  }
  return buf;
}

/** A PostgreSQL array literal of integers (decimal strings or numbers). */
function intArrayLiteral(values: readonly (string | number)[]): string {
  return `{${values.join(',')}}`;
}

function insertParams(rows: readonly EventInsertRow[]): (Buffer | string)[] {
  const text = (pick: (r: EventInsertRow) => string | null) => binaryTextArray(rows.map(pick));
  return [
    text((r) => r.occurredAt),
    text((r) => r.source),
    text((r) => r.id),
    text((r) => r.type),
    text((r) => r.specversion),
    text((r) => r.subject),
    text((r) => r.datacontenttype),
    text((r) => r.dataschema),
    text((r) => r.partitionKey),
    text((r) => r.raw),
    text((r) => r.data),
    text((r) => r.extensions),
    text((r) => r.topic),
    intArrayLiteral(rows.map((r) => r.partition)),
    intArrayLiteral(rows.map((r) => r.offset)),
    text((r) => r.deviceId),
    text((r) => r.tags),
    text((r) => r.producer),
  ];
}

/** Inserts `rows` (autocommit on a pool, or in the caller's transaction); skips rows already stored. */
export async function insertEvents(
  db: Queryable,
  rows: readonly EventInsertRow[],
): Promise<EventInsertResult> {
  const insertedByType = new Map<string, number>();
  if (rows.length === 0) return { attempted: 0, inserted: 0, insertedByType };
  const res = await db.query<{ ce_type: string }>({
    name: 'observatory_insert_events',
    text: INSERT_EVENTS,
    values: insertParams(rows),
  });
  for (const r of res.rows) insertedByType.set(r.ce_type, (insertedByType.get(r.ce_type) ?? 0) + 1);
  return { attempted: rows.length, inserted: res.rows.length, insertedByType };
}

/** Inserts every one of `rows`, or fails with a unique violation when one is stored already. */
async function insertNewEvents(db: Queryable, rows: readonly EventInsertRow[]): Promise<EventInsertResult> {
  const insertedByType = new Map<string, number>();
  if (rows.length === 0) return { attempted: 0, inserted: 0, insertedByType };
  await db.query({
    name: 'observatory_insert_new_events',
    text: INSERT_NEW_EVENTS,
    values: insertParams(rows),
  });
  for (const r of rows) insertedByType.set(r.type, (insertedByType.get(r.type) ?? 0) + 1);
  return { attempted: rows.length, inserted: rows.length, insertedByType };
}

/**
 * Rows and the checkpoints of `group` in one transaction: both become durable together or not at
 * all. First as all-new rows (`INSERT_NEW_EVENTS`); when one was stored before, the transaction
 * is rolled back and run again skipping the stored rows (`INSERT_EVENTS`). A connection whose
 * ROLLBACK failed, or that failed with a connection error, is discarded rather than returned to
 * the pool.
 */
export async function insertEventsWithCheckpoints(
  pool: DatabasePool,
  group: string,
  rows: readonly EventInsertRow[],
  checkpoints: readonly Checkpoint[],
): Promise<EventInsertResult> {
  const write = (insert: typeof insertEvents) =>
    inPooledTransaction(pool, async (client) => {
      const result = await insert(client, rows);
      await upsertCheckpoints(client, group, checkpoints);
      return result;
    });
  try {
    return await write(insertNewEvents);
  } catch (err) {
    if (errorCodeOf(err) !== UNIQUE_VIOLATION) throw err;
    return write(insertEvents);
  }
}
