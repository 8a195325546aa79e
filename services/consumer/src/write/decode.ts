/**
 * Turns a broker record (CloudEvents Kafka binary mode) into the row of `events.cloud_event`, or
 * into a poison verdict with a closed-set reason. Decoding is pure: no I/O, no clock (the caller
 * passes the time the plausible window is measured from). The `observatory-producer` header
 * becomes the `producer` column; a record without one, or with one that does not read, is stored
 * with NULL there, never refused for it.
 */
import {
  type CloudEvent,
  type DecodedKafkaRecord,
  decodeKafkaRecord,
  EventRejection,
  encodeStructured,
  encodeStructuredWithData,
  isJsonMediaType,
  isTextMediaType,
  plausibleTimeProblem,
  REJECTION_REASONS,
  type RejectionReason,
  readProducer,
} from '@event-observatory/events';
import { deviceIdOf, type EventInsertRow, TAG_SEPARATOR, tagsOf } from '@event-observatory/store';
import type { ConsumedRecord } from './record.js';

/**
 * The closed set of poison reasons (README, "Dead-letter record"): the rejection reasons but size (ingest
 * refuses an oversized event before it reaches the topic).
 */
export type PoisonReason = Exclude<RejectionReason, 'too-large'>;

export const POISON_REASONS: readonly PoisonReason[] = REJECTION_REASONS.filter(
  (reason): reason is PoisonReason => reason !== 'too-large',
);

export type Decoded =
  /** `occurredAtMs`: the event's `time` as epoch milliseconds, parsed once here. */
  | { ok: true; row: EventInsertRow; event: CloudEvent; occurredAtMs: number }
  | { ok: false; reason: PoisonReason; detail: string };

const RFC3339 = /^\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$/;

/**
 * `nowMs`: the consumer's clock, for the plausible `time` window (`time-window.ts` of the events
 * package): a time outside it is `invalid-attributes`, as ingest refuses it and search cannot ask
 * for it.
 */
export function decodeRecord(record: ConsumedRecord, nowMs: number): Decoded {
  let decoded: DecodedKafkaRecord;
  try {
    decoded = decodeKafkaRecord(record);
  } catch (err) {
    if (err instanceof EventRejection) {
      const reason = (POISON_REASONS as readonly string[]).includes(err.reason)
        ? (err.reason as PoisonReason)
        : 'malformed';
      return { ok: false, reason, detail: err.message };
    }
    return {
      ok: false,
      reason: 'malformed',
      detail: `record could not be decoded: ${(err as Error).message}`,
    };
  }
  const { event } = decoded;
  if (event.time === undefined) {
    return {
      ok: false,
      reason: 'invalid-attributes',
      detail: 'the event has no time attribute (occurred_at)',
    };
  }
  const occurredAtMs = Date.parse(event.time);
  if (!RFC3339.test(event.time) || Number.isNaN(occurredAtMs)) {
    return {
      ok: false,
      reason: 'invalid-attributes',
      detail: `time is not an RFC 3339 timestamp: ${event.time}`,
    };
  }
  const outside = plausibleTimeProblem(occurredAtMs, nowMs);
  if (outside !== undefined) {
    return {
      ok: false,
      reason: 'invalid-attributes',
      detail: `time ${event.time} is outside the plausible window: ${outside}`,
    };
  }
  const { text: data, parsed } = decoded.json
    ? { text: decoded.json.text, parsed: decoded.json.value }
    : dataOf(event);
  // The payload is decoded and parsed once, here: the raw rendering splices the same text.
  const raw = data === null ? encodeStructured(event) : encodeStructuredWithData(event, data);
  return {
    ok: true,
    event,
    occurredAtMs,
    row: {
      occurredAt: event.time,
      source: event.source,
      id: event.id,
      type: event.type,
      specversion: event.specversion,
      subject: event.subject ?? null,
      datacontenttype: event.datacontenttype ?? null,
      dataschema: event.dataschema ?? null,
      partitionKey: record.key === null ? null : record.key.toString('utf8'),
      raw,
      data,
      extensions: JSON.stringify(event.extensions),
      deviceId: deviceIdOf(event.extensions, parsed),
      tags: tagsOf(event.extensions, parsed)
        .map((t) => t.replaceAll(TAG_SEPARATOR, ''))
        .join(TAG_SEPARATOR),
      topic: record.topic,
      partition: record.partition,
      offset: record.offset,
      producer: readProducer(record),
    },
  };
}

const strictUtf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

/**
 * The payload as JSON text for the `data` column, as the structured rendering carries it: a JSON
 * payload verbatim, a text payload as a JSON string; null when absent or binary. `parsed` is the
 * parsed JSON payload (for the derived columns), parsed once. (A payload with a JSON content type
 * comes parsed from `decodeKafkaRecord`; this handles the others.)
 */
function dataOf(event: CloudEvent): { text: string | null; parsed: unknown } {
  const none = { text: null, parsed: null };
  if (event.data === undefined) return none;
  const ct = event.datacontenttype;
  let text: string;
  try {
    text = strictUtf8.decode(event.data);
  } catch {
    return none;
  }
  if (ct === undefined || isJsonMediaType(ct)) {
    try {
      return { text, parsed: JSON.parse(text) as unknown };
    } catch {
      return none;
    }
  }
  return isTextMediaType(ct) ? { text: JSON.stringify(text), parsed: text } : none;
}
