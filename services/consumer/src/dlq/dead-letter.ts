/**
 * Dead letters: a structured-mode CloudEvent (JSON event format) per refused record, keyed by the
 * origin's `topic/partition/offset` so a record dead-lettered twice (redelivery) overwrites its
 * predecessor in the compacted topic.
 *
 * ```json
 * { "specversion": "1.0", "id": "events.cloudevents.v1/3/1207",
 *   "source": "/event-observatory/consumer/cobalt-cloudevents-v1",
 *   "type": "io.event-observatory.consumer.deadletter.v1", "time": "...",
 *   "subject": "events.cloudevents.v1/3/1207", "datacontenttype": "application/json",
 *   "reason": "unpersistable",
 *   "data": { "reason": "unpersistable", "detail": "SQLSTATE 23514: ...",
 *             "origin": { "topic": "...", "partition": 3, "offset": "1207", "timestamp": "1763..." },
 *             "record": { "key": "<base64>|null", "value": "<base64>|null",
 *                         "headers": [{ "key": "ce_id", "value": "<base64>" }, ...] } } }
 * ```
 * `record` holds the original bytes, so replay re-publishes key, value, headers and timestamp
 * unchanged.
 */
import type { RawRecord, RecordHeaders } from '@event-observatory/broker';
import type { PoisonReason } from '../write/decode.js';
import { POISON_REASONS } from '../write/decode.js';
import { type ConsumedRecord, coordinates } from '../write/record.js';

export const DEAD_LETTER_TYPE = 'io.event-observatory.consumer.deadletter.v1';
export const DEAD_LETTER_CONTENT_TYPE = 'application/cloudevents+json';

export interface DeadLetterData {
  reason: PoisonReason;
  detail: string;
  origin: { topic: string; partition: number; offset: string; timestamp: string };
  record: { key: string | null; value: string | null; headers: { key: string; value: string | null }[] };
}

export interface DeadLetter {
  specversion: '1.0';
  id: string;
  source: string;
  type: string;
  time: string;
  subject: string;
  datacontenttype: 'application/json';
  reason: PoisonReason;
  data: DeadLetterData;
}

const b64 = (b: Buffer | string | null | undefined): string | null =>
  b === null || b === undefined ? null : Buffer.from(b).toString('base64');

/** The dead letter of `record` (a structured-mode CloudEvent) and the broker message carrying it. */
export function buildDeadLetter(
  record: ConsumedRecord,
  reason: PoisonReason,
  detail: string,
  group: string,
  now: Date,
): { letter: DeadLetter; message: RawRecord } {
  const key = coordinates(record);
  const headers: { key: string; value: string | null }[] = [];
  for (const [name, value] of Object.entries(record.headers)) {
    if (value === undefined) continue;
    for (const v of Array.isArray(value) ? value : [value]) headers.push({ key: name, value: b64(v) });
  }
  const letter: DeadLetter = {
    specversion: '1.0',
    id: key,
    source: `/event-observatory/consumer/${group}`,
    type: DEAD_LETTER_TYPE,
    time: now.toISOString(),
    subject: key,
    datacontenttype: 'application/json',
    reason,
    data: {
      reason,
      detail: detail.slice(0, 2000),
      origin: {
        topic: record.topic,
        partition: record.partition,
        offset: record.offset,
        timestamp: record.timestamp,
      },
      record: { key: b64(record.key), value: b64(record.value), headers },
    },
  };
  return {
    letter,
    message: {
      key,
      value: JSON.stringify(letter),
      headers: { 'content-type': DEAD_LETTER_CONTENT_TYPE },
    },
  };
}

/** Parses a dead-letter record's value; undefined when it is not one of ours. */
export function parseDeadLetter(value: Buffer | null): DeadLetter | undefined {
  if (!value) return undefined;
  try {
    const v = JSON.parse(value.toString('utf8')) as DeadLetter;
    if (v?.type !== DEAD_LETTER_TYPE || typeof v.data !== 'object' || v.data === null) return undefined;
    if (!(POISON_REASONS as readonly string[]).includes(v.data.reason)) return undefined;
    return v;
  } catch {
    return undefined;
  }
}

/** The original record of a dead letter, ready to re-publish byte for byte. */
export function originalMessage(letter: DeadLetter): RawRecord {
  const headers: RecordHeaders = {};
  for (const h of letter.data.record.headers) {
    const value = h.value === null ? undefined : Buffer.from(h.value, 'base64');
    if (value === undefined) continue;
    const prev = headers[h.key];
    if (prev === undefined) headers[h.key] = value;
    else headers[h.key] = [...(Array.isArray(prev) ? prev : [prev]), value] as Buffer[];
  }
  return {
    key: letter.data.record.key === null ? null : Buffer.from(letter.data.record.key, 'base64'),
    value: letter.data.record.value === null ? null : Buffer.from(letter.data.record.value, 'base64'),
    headers,
    timestamp: letter.data.origin.timestamp,
  };
}
