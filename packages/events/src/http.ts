/**
 * CloudEvents HTTP protocol binding (1.0): mode selection, binary mode, structured mode (JSON
 * event format) and the JSON batch format.
 *
 * Mode selection by the request `content-type` (media type compared case-insensitively,
 * parameters ignored for the choice):
 * - `application/cloudevents-batch` (any `+suffix`): batch. Only `/v1/events:batchCreate` takes it.
 * - `application/cloudevents` or `application/cloudevents+json`: structured. Another suffix
 *   (`+xml`, `+avro`, ...) is an unsupported event format (`malformed`). A `charset` other than
 *   UTF-8 is refused (`malformed`).
 * - anything else, or no `content-type`: binary; the `content-type` is the event's
 *   `datacontenttype` and `ce-specversion`, `ce-id`, `ce-source`, `ce-type` are required.
 *
 * Binary-mode `ce-*` header names are case-insensitive; values are percent-decoded exactly once
 * (`%XY` sequences become bytes, then the bytes must be valid UTF-8). A `%` not followed by two
 * hex digits, or invalid UTF-8, is `malformed`. `ce-datacontenttype` is refused (the binding
 * carries it in `content-type`). Other headers are ignored; in structured mode `ce-*` headers are
 * ignored too.
 */
import { memberSpan, splitJsonArray } from './json-scan.js';
import type { CloudEvent } from './model.js';
import { isContextAttribute } from './model.js';
import { invalidAttributes, invalidPayload, malformed } from './rejection.js';
import {
  buildEvent,
  checkExtensionName,
  type EventFields,
  isJsonMediaType,
  mediaTypeEssence,
  mediaTypeParameter,
} from './validate.js';

export type ContentMode = 'binary' | 'structured' | 'batch';

/** The media type of the JSON batch format. */
export const BATCH_MEDIA_TYPE = 'application/cloudevents-batch+json';
/** The media type of the JSON structured format. */
export const STRUCTURED_MEDIA_TYPE = 'application/cloudevents+json';

/** Request headers as (name, value) pairs, e.g. a WHATWG `Headers` object. */
export type HeaderPairs = Iterable<readonly [string, string]>;

/** Chooses the content mode from the request's `content-type` (see the module comment). */
export function selectMode(contentType: string | undefined | null): ContentMode {
  if (!contentType) return 'binary';
  const essence = mediaTypeEssence(contentType);
  if (essence === 'application/cloudevents-batch' || essence.startsWith('application/cloudevents-batch+')) {
    return 'batch';
  }
  if (essence === 'application/cloudevents' || essence.startsWith('application/cloudevents+')) {
    return 'structured';
  }
  return 'binary';
}

const strictUtf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

/** Decodes UTF-8 strictly; throws `malformed` on invalid sequences. */
export function decodeUtf8(bytes: Uint8Array, what: string): string {
  try {
    return strictUtf8.decode(bytes);
  } catch {
    throw malformed(`${what} is not valid UTF-8`);
  }
}

function hexValue(c: number): number {
  if (c >= 0x30 && c <= 0x39) return c - 0x30;
  if (c >= 0x41 && c <= 0x46) return c - 0x37;
  if (c >= 0x61 && c <= 0x66) return c - 0x57;
  return -1;
}

/**
 * Percent-decodes a `ce-*` header value exactly once (HTTP binding 3.1.3.2). Characters that
 * arrived unencoded are taken as the bytes the HTTP parser read (Latin-1), so raw UTF-8 still
 * decodes; the resulting bytes must be valid UTF-8.
 */
export function percentDecodeHeader(value: string, header: string): string {
  let simple = true;
  for (let i = 0; i < value.length; i++) {
    const c = value.charCodeAt(i);
    if (c === 0x25 || c > 0x7e) {
      simple = false;
      break;
    }
  }
  if (simple) return value;
  const bytes: number[] = [];
  for (let i = 0; i < value.length; i++) {
    const c = value.charCodeAt(i);
    if (c === 0x25) {
      const hi = hexValue(value.charCodeAt(i + 1));
      const lo = hexValue(value.charCodeAt(i + 2));
      if (hi < 0 || lo < 0) throw malformed(`header ${header} has an invalid percent-encoding`, { header });
      bytes.push(hi * 16 + lo);
      i += 2;
    } else if (c > 0xff) {
      throw malformed(`header ${header} has a character outside ISO-8859-1`, { header });
    } else {
      bytes.push(c);
    }
  }
  try {
    return strictUtf8.decode(Uint8Array.from(bytes));
  } catch {
    throw malformed(`header ${header} does not percent-decode to valid UTF-8`, { header });
  }
}

/** Decodes a binary-mode request: attributes from `ce-*` headers, `content-type`, payload = body. */
export function decodeBinary(headers: HeaderPairs, body: Uint8Array): CloudEvent {
  const fields: EventFields = { extensions: {} };
  for (const [rawName, rawValue] of headers) {
    const name = rawName.toLowerCase();
    if (name === 'content-type') {
      fields.datacontenttype = rawValue;
      continue;
    }
    if (!name.startsWith('ce-')) continue;
    const attr = name.slice(3);
    const value = percentDecodeHeader(rawValue, name);
    if (attr === 'datacontenttype') {
      throw invalidAttributes(
        'in binary mode datacontenttype is the content-type header, not ce-datacontenttype',
        {
          attribute: attr,
        },
      );
    }
    if (isContextAttribute(attr)) {
      fields[attr] = value;
    } else {
      checkExtensionName(attr);
      fields.extensions[attr] = value;
    }
  }
  if (body.byteLength > 0) {
    fields.data = body;
    if (isJsonMediaType(fields.datacontenttype)) checkJsonPayload(body);
  }
  return buildEvent(fields);
}

/** Throws `invalid-payload` unless `bytes` is one UTF-8 JSON document. */
export function checkJsonPayload(bytes: Uint8Array): void {
  try {
    JSON.parse(strictUtf8.decode(bytes));
  } catch {
    throw invalidPayload('datacontenttype is JSON but the payload is not a UTF-8 JSON document');
  }
}

function checkStructuredContentType(contentType: string | undefined | null): void {
  if (!contentType) return;
  const essence = mediaTypeEssence(contentType);
  const plus = essence.indexOf('+');
  const suffix = plus === -1 ? 'json' : essence.slice(plus + 1);
  if (suffix !== 'json') {
    throw malformed(`event format '${suffix}' is not supported; use JSON`, { supportedFormat: 'json' });
  }
  const charset = mediaTypeParameter(contentType, 'charset');
  if (charset !== undefined && charset.toLowerCase() !== 'utf-8' && charset.toLowerCase() !== 'utf8') {
    throw malformed(`charset '${charset}' is not supported; JSON must be UTF-8`, {
      supportedCharset: 'utf-8',
    });
  }
}

const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;
const INT32_MIN = -2147483648;
const INT32_MAX = 2147483647;

/**
 * Decodes one JSON-format event from its raw bytes (a structured body or a batch element).
 *
 * Payload rules (JSON event format 1.0): `data_base64` (strict RFC 4648 base64) gives the bytes;
 * `data` with a JSON or absent `datacontenttype` gives the raw bytes of the `data` member exactly
 * as written in the document; `data` with any other media type must be a string and gives its
 * UTF-8 bytes. Both members together, bad base64 or a non-string `data` for a non-JSON media type
 * are `invalid-payload`. Extension values may be strings, booleans or 32-bit integers (canonical
 * string form); `null` or any other JSON type for an attribute is `invalid-attributes`.
 */
export function decodeJsonEvent(bytes: Uint8Array): CloudEvent {
  const text = decodeUtf8(bytes, 'the event document');
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch (err) {
    throw malformed(`the event document is not valid JSON: ${(err as Error).message}`);
  }
  if (doc === null || typeof doc !== 'object' || Array.isArray(doc)) {
    throw malformed('a CloudEvent in JSON format must be a JSON object');
  }
  const obj = doc as Record<string, unknown>;
  const fields: EventFields = { extensions: {} };
  for (const [name, value] of Object.entries(obj)) {
    if (name === 'data' || name === 'data_base64') continue;
    if (isContextAttribute(name)) {
      if (typeof value !== 'string') {
        throw invalidAttributes(`attribute '${name}' must be a JSON string`, { attribute: name });
      }
      fields[name] = value;
      continue;
    }
    checkExtensionName(name);
    if (typeof value === 'string') fields.extensions[name] = value;
    else if (typeof value === 'boolean') fields.extensions[name] = value ? 'true' : 'false';
    else if (
      typeof value === 'number' &&
      Number.isInteger(value) &&
      value >= INT32_MIN &&
      value <= INT32_MAX
    ) {
      fields.extensions[name] = String(value);
    } else {
      throw invalidAttributes(`extension '${name}' must be a string, a boolean or a 32-bit integer`, {
        attribute: name,
      });
    }
  }
  const hasData = Object.hasOwn(obj, 'data');
  const hasBase64 = Object.hasOwn(obj, 'data_base64');
  if (hasData && hasBase64) throw invalidPayload('an event cannot carry both data and data_base64');
  if (hasBase64) {
    const b64 = obj.data_base64;
    if (typeof b64 !== 'string' || !BASE64.test(b64)) {
      throw invalidPayload('data_base64 must be a base64 (RFC 4648) string');
    }
    fields.data = Buffer.from(b64, 'base64');
    // The same rule as binary mode, so an event is accepted in one mode exactly when in the other.
    if (isJsonMediaType(fields.datacontenttype)) checkJsonPayload(fields.data);
  } else if (hasData) {
    if (fields.datacontenttype === undefined || isJsonMediaType(fields.datacontenttype)) {
      fields.data = memberSpan(bytes, 'data');
    } else if (typeof obj.data === 'string') {
      fields.data = Buffer.from(obj.data, 'utf8');
    } else {
      throw invalidPayload('data must be a JSON string when datacontenttype is not a JSON media type', {
        datacontenttype: fields.datacontenttype,
      });
    }
  }
  return buildEvent(fields);
}

/** Decodes a structured-mode body (checks the event format and charset of `content-type` first). */
export function decodeStructured(contentType: string | undefined | null, body: Uint8Array): CloudEvent {
  checkStructuredContentType(contentType);
  return decodeJsonEvent(body);
}

/**
 * Splits a batch body into the raw bytes of each element (not yet decoded: decode each with
 * {@link decodeJsonEvent} after its own size check). Throws `malformed` for a wrong media type or
 * a body that is not a JSON array.
 */
export function splitBatch(
  contentType: string | undefined | null,
  body: Uint8Array,
  max = Number.POSITIVE_INFINITY,
): Uint8Array[] {
  if (selectMode(contentType) !== 'batch') {
    throw malformed(`a batch must be sent as ${BATCH_MEDIA_TYPE}`, { expectedMediaType: BATCH_MEDIA_TYPE });
  }
  checkStructuredContentType(contentType);
  return splitJsonArray(body, max);
}

/** Result of decoding a single-event request. */
export interface DecodedRequest {
  mode: 'binary' | 'structured';
  event: CloudEvent;
}

/**
 * Decodes a single-event request in the mode its `content-type` selects. A batch media type is
 * refused with `malformed` (batches go to `:batchCreate`).
 */
export function decodeHttpEvent(headers: HeaderPairs, body: Uint8Array): DecodedRequest {
  let contentType: string | undefined;
  for (const [name, value] of headers) {
    if (name.toLowerCase() === 'content-type') {
      contentType = value;
      break;
    }
  }
  const mode = selectMode(contentType);
  if (mode === 'batch') {
    throw malformed(`the batch media type is accepted only by /v1/events:batchCreate`, {
      mediaType: mediaTypeEssence(contentType ?? ''),
    });
  }
  if (mode === 'structured') return { mode, event: decodeStructured(contentType, body) };
  return { mode, event: decodeBinary(headers, body) };
}
