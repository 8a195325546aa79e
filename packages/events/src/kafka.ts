/**
 * CloudEvents Kafka protocol binding, binary content mode, and the structured JSON rendering.
 *
 * Record layout (encoder {@link toKafkaRecord}, decoder {@link fromKafkaRecord}):
 * - headers `ce_specversion`, `ce_id`, `ce_source`, `ce_type`, then `ce_time`, `ce_subject`,
 *   `ce_dataschema` when present, then `content-type` (= `datacontenttype`, as the binding says)
 *   when present, then `ce_<extension>` in ascending name order. Values are UTF-8 text, not
 *   percent-encoded. The fixed order makes the same event give byte-identical headers whichever
 *   HTTP mode it arrived in. Last, when given, `observatory-producer`: who sent it (producer.ts).
 * - value: the payload bytes; `null` when the event has no data.
 * - key: the partition key (`source#subject`, or `source`).
 * Headers not named `ce_*` or `content-type` (for example `traceparent`) are ignored by the decoder.
 *
 * Structured JSON ({@link toStructuredJson}, used for the store's verbatim `raw` column and for
 * dead letters): the context attributes and extensions as JSON strings, and the payload as
 * - `data` holding the payload verbatim as JSON text when `datacontenttype` is a JSON media type,
 *   or absent and the payload is a UTF-8 JSON document;
 * - `data` holding a JSON string when `datacontenttype` is a text type (`text/*`, XML) and the
 *   payload is valid UTF-8;
 * - `data_base64` otherwise (binary payloads, or text that is not UTF-8).
 * Extension values are strings there (the Kafka binary mode does not carry their JSON type).
 */
import type { CloudEvent } from './model.js';
import { isContextAttribute } from './model.js';
import { partitionKey } from './names.js';
import { PRODUCER_HEADER } from './producer.js';
import { invalidAttributes, invalidPayload, malformed } from './rejection.js';
import {
  buildEvent,
  checkExtensionName,
  type EventFields,
  isJsonMediaType,
  isTextMediaType,
} from './validate.js';

/** A record ready for kafkajs `producer.send` (`messages[i]`). */
export interface KafkaRecordOut {
  key: string;
  value: Buffer | null;
  headers: Record<string, string>;
}

/** A record as kafkajs hands it to a consumer (`eachMessage` / `eachBatch`). */
export interface KafkaRecordIn {
  key?: Buffer | string | null;
  value: Buffer | Uint8Array | null;
  headers?: Record<string, Buffer | string | (Buffer | string)[] | undefined>;
}

/** Header name of a context attribute or extension in the Kafka binary mode. */
export function kafkaHeaderName(attribute: string): string {
  return attribute === 'datacontenttype' ? 'content-type' : `ce_${attribute}`;
}

/**
 * The event's attributes in the fixed wire order: specversion, id, source, type, time, subject,
 * dataschema, datacontenttype (each when present), then extensions by ascending name.
 */
export function orderedAttributes(event: CloudEvent): [string, string][] {
  const out: [string, string][] = [
    ['specversion', event.specversion],
    ['id', event.id],
    ['source', event.source],
    ['type', event.type],
  ];
  for (const name of ['time', 'subject', 'dataschema', 'datacontenttype'] as const) {
    const v = event[name];
    if (v !== undefined) out.push([name, v]);
  }
  for (const name of Object.keys(event.extensions).sort()) out.push([name, event.extensions[name]!]);
  return out;
}

/** Encodes an event as a Kafka binary-mode record (see the module comment for the layout). */
export function toKafkaRecord(event: CloudEvent): KafkaRecordOut {
  const headers: Record<string, string> = {};
  for (const [name, value] of orderedAttributes(event)) headers[kafkaHeaderName(name)] = value;
  const value =
    event.data === undefined
      ? null
      : Buffer.isBuffer(event.data)
        ? event.data
        : Buffer.from(event.data.buffer, event.data.byteOffset, event.data.byteLength);
  return { key: partitionKey(event), value, headers };
}

/**
 * {@link toKafkaRecord} with the `observatory-producer` header last: `producer` is its value
 * (`encodeProducer`), who sent the event.
 */
export function toKafkaRecordFrom(event: CloudEvent, producer: string): KafkaRecordOut {
  const record = toKafkaRecord(event);
  record.headers[PRODUCER_HEADER] = producer;
  return record;
}

const strictUtf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

function headerText(name: string, value: Buffer | string): string {
  if (typeof value === 'string') return value;
  try {
    return strictUtf8.decode(value);
  } catch {
    throw malformed(`record header ${name} is not valid UTF-8`, { header: name });
  }
}

/**
 * Decodes a Kafka binary-mode record back into a validated event. Reasons: missing required
 * headers, repeated headers or invalid UTF-8 are `malformed`; bad attribute values
 * `invalid-attributes`; a JSON `content-type` whose value is not JSON `invalid-payload`. The
 * plausibility window is not applied (that is an ingestion rule).
 */
export function fromKafkaRecord(record: KafkaRecordIn): CloudEvent {
  return decodeKafkaRecord(record).event;
}

/** A decoded record; `json` is its payload's text and value when its content type is JSON. */
export interface DecodedKafkaRecord {
  event: CloudEvent;
  json?: { text: string; value: unknown };
}

/**
 * {@link fromKafkaRecord} that also hands out the JSON payload it parsed to check it, so a caller
 * that needs the parsed payload (the consumer's `data` column) does not decode and parse it again.
 */
export function decodeKafkaRecord(record: KafkaRecordIn): DecodedKafkaRecord {
  const fields: EventFields = { extensions: {} };
  for (const [rawName, raw] of Object.entries(record.headers ?? {})) {
    if (raw === undefined) continue;
    const name = rawName.toLowerCase();
    const isCe = name.startsWith('ce_');
    if (!isCe && name !== 'content-type') continue;
    if (Array.isArray(raw)) throw malformed(`record header ${name} appears more than once`, { header: name });
    const value = headerText(name, raw);
    if (name === 'content-type') {
      fields.datacontenttype = value;
      continue;
    }
    const attr = name.slice(3);
    if (attr === 'datacontenttype') {
      throw invalidAttributes('datacontenttype travels in the content-type header', { attribute: attr });
    }
    if (isContextAttribute(attr)) fields[attr] = value;
    else {
      checkExtensionName(attr);
      fields.extensions[attr] = value;
    }
  }
  let json: DecodedKafkaRecord['json'];
  if (record.value && record.value.byteLength > 0) {
    fields.data = record.value;
    if (isJsonMediaType(fields.datacontenttype)) {
      try {
        const text = strictUtf8.decode(record.value);
        json = { text, value: JSON.parse(text) };
      } catch {
        throw invalidPayload('content-type is JSON but the record value is not a UTF-8 JSON document');
      }
    }
  }
  const event = buildEvent(fields);
  return json ? { event, json } : { event };
}

type PayloadRendering = { member: 'data'; json: string } | { member: 'data_base64'; json: string };

function renderPayload(event: CloudEvent): PayloadRendering | undefined {
  const data = event.data;
  if (data === undefined) return undefined;
  const ct = event.datacontenttype;
  if (ct === undefined || isJsonMediaType(ct)) {
    try {
      const text = strictUtf8.decode(data);
      JSON.parse(text);
      return { member: 'data', json: text.trim() };
    } catch {
      // not JSON (only possible without a datacontenttype): fall through to base64
    }
  } else if (isTextMediaType(ct)) {
    try {
      return { member: 'data', json: JSON.stringify(strictUtf8.decode(data)) };
    } catch {
      // not UTF-8: base64
    }
  }
  return { member: 'data_base64', json: JSON.stringify(Buffer.from(data).toString('base64')) };
}

/**
 * The event in the JSON event format as text (structured mode). A JSON payload is spliced in
 * verbatim, so large integers and the producer's formatting survive.
 */
export function encodeStructured(event: CloudEvent): string {
  return spliceStructured(event, renderPayload(event));
}

/**
 * The same with the payload already rendered by the caller as the JSON text of the `data` member
 * (the consumer decodes and parses it once for its own columns): spliced in without decoding and
 * parsing it again.
 */
export function encodeStructuredWithData(event: CloudEvent, dataJson: string): string {
  return spliceStructured(event, { member: 'data', json: dataJson });
}

function spliceStructured(event: CloudEvent, payload: PayloadRendering | undefined): string {
  const head = JSON.stringify(Object.fromEntries(orderedAttributes(event)));
  if (!payload) return head;
  return `${head.slice(0, -1)},"${payload.member}":${payload.json}}`;
}

/** The event in the JSON event format as a parsed object (see {@link encodeStructured}). */
export function toStructuredJson(event: CloudEvent): Record<string, unknown> {
  return JSON.parse(encodeStructured(event)) as Record<string, unknown>;
}

/** Reads one header of a consumed record as UTF-8 text (first value when repeated). */
export function recordHeader(record: KafkaRecordIn, name: string): string | undefined {
  const raw = record.headers?.[name];
  if (raw === undefined) return undefined;
  const first = Array.isArray(raw) ? raw[0] : raw;
  if (first === undefined) return undefined;
  return typeof first === 'string' ? first : first.toString('utf8');
}
