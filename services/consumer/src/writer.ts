/**
 * Writes events to `events.cloud_event`, and with them the checkpoints (the store's
 * `upsertCheckpoints`, in the same transaction).
 *
 * One multi-row statement per batch: the rows travel as 17 parallel arrays that `unnest` turns
 * back into rows, so the statement text has a fixed shape (17 parameters whatever the batch size)
 * and `ON CONFLICT DO NOTHING` skips rows that already exist, including repeats within the batch.
 * `RETURNING ce_type` gives the inserted rows, so duplicates = attempted - inserted. The statement
 * is named (prepared once per connection, then only bound and executed).
 */
import { type Checkpoint, upsertCheckpoints } from '@event-observatory/store';
import type pg from 'pg';
import type { EventRow } from './decode.js';
import type { EventSink, InsertResult } from './sink.js';

const INSERT_EVENTS = `
INSERT INTO events.cloud_event (
  occurred_at, ce_source, ce_id, ce_type, ce_specversion, ce_subject, ce_datacontenttype,
  ce_dataschema, partition_key, raw, data, extensions, broker_topic, broker_partition, broker_offset,
  device_id, tags)
SELECT t.occurred_at::timestamptz, t.src, t.id, t.typ, t.spec, t.subj, t.dct, t.dsch, t.pkey,
       t.raw::jsonb, t.data::jsonb, t.ext::jsonb, t.topic, t.part, t.off, t.dev,
       string_to_array(t.tags, E'\\x1f')
FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[],
            $8::text[], $9::text[], $10::text[], $11::text[], $12::text[], $13::text[], $14::int[],
            $15::bigint[], $16::text[], $17::text[])
     AS t(occurred_at, src, id, typ, spec, subj, dct, dsch, pkey, raw, data, ext, topic, part, off, dev, tags)
ON CONFLICT DO NOTHING
RETURNING ce_type`;

const NEEDS_ESCAPE = /["\\]/g;

/**
 * A PostgreSQL array literal of text values: every element quoted, `"` and `\` escaped in one pass,
 * null as NULL. Built here rather than by node-postgres (which runs two regular expressions and a
 * type dispatch per element): the raw CloudEvent is most of the bytes and all of it passes here.
 */
export function textArrayLiteral(values: readonly (string | null)[]): string {
  let out = '{';
  for (let i = 0; i < values.length; i++) {
    const v = values[i];
    if (i > 0) out += ',';
    out += v === null || v === undefined ? 'NULL' : `"${v.replace(NEEDS_ESCAPE, '\\$&')}"`;
  }
  return `${out}}`;
}

/** A PostgreSQL array literal of integers (decimal strings or numbers). */
function intArrayLiteral(values: readonly (string | number)[]): string {
  return `{${values.join(',')}}`;
}

function insertParams(rows: readonly EventRow[]): string[] {
  const text = (pick: (r: EventRow) => string | null) => textArrayLiteral(rows.map(pick));
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
  ];
}

async function insertOn(client: pg.PoolClient | pg.Pool, rows: readonly EventRow[]): Promise<InsertResult> {
  const insertedByType = new Map<string, number>();
  if (rows.length === 0) return { attempted: 0, inserted: 0, insertedByType };
  const res = await client.query<{ ce_type: string }>({
    name: 'observatory_insert_events',
    text: INSERT_EVENTS,
    values: insertParams(rows),
  });
  for (const r of res.rows) insertedByType.set(r.ce_type, (insertedByType.get(r.ce_type) ?? 0) + 1);
  return { attempted: rows.length, inserted: res.rows.length, insertedByType };
}

/** The sink of the batch processor on the write pool. */
export class EventWriter implements EventSink {
  constructor(
    private readonly pool: pg.Pool,
    private readonly group: string,
  ) {}

  /** Rows and checkpoints in one transaction: both become durable together or not at all. */
  async writeWithCheckpoints(rows: readonly EventRow[], cps: readonly Checkpoint[]): Promise<InsertResult> {
    const client = await this.pool.connect();
    let broken = false;
    try {
      await client.query('BEGIN');
      try {
        const result = await insertOn(client, rows);
        await upsertCheckpoints(client, this.group, cps);
        await client.query('COMMIT');
        return result;
      } catch (err) {
        await client.query('ROLLBACK').catch(() => {
          broken = true;
        });
        throw err;
      }
    } catch (err) {
      broken ||= isConnectionError(err);
      throw err;
    } finally {
      client.release(broken);
    }
  }

  /** One autocommit insert (bisection: each half stands alone). */
  insert(rows: readonly EventRow[]): Promise<InsertResult> {
    return insertOn(this.pool, rows);
  }

  /** Checkpoints alone (after bisection, or for a batch of nothing but dead letters). */
  checkpoint(cps: readonly Checkpoint[]): Promise<void> {
    return upsertCheckpoints(this.pool, this.group, cps);
  }
}

function isConnectionError(err: unknown): boolean {
  const code = (err as { code?: string }).code;
  return code === undefined || code.startsWith('08') || code.startsWith('57P') || code.startsWith('E');
}
