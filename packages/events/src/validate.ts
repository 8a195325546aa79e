/**
 * Attribute validation rules (CloudEvents 1.0 plus this service's own):
 *
 * - `specversion` must be exactly `1.0`.
 * - `id`, `type`, `subject` (when present): non-empty CloudEvents Strings (no control characters,
 *   no unpaired surrogates).
 * - `source`: non-empty URI-reference (RFC 3986 characters only, `%` followed by two hex digits).
 * - `dataschema` (when present): absolute URI (a scheme, then RFC 3986 characters).
 * - `datacontenttype` (when present): an RFC 2046 media type `type/subtype` with optional parameters.
 * - `time` (when present): RFC 3339 `date-time` with valid field ranges; presence is checked by
 *   {@link checkTimeWindow}, not here, so a Kafka record without `time` still decodes.
 * - extension names: `[a-z0-9]{1,20}` and not `data`; values: CloudEvents Strings.
 * - `data` with a JSON (or no) or text media type: one the event store can hold
 *   ({@link checkStorablePayload}).
 * Nothing is repaired: an unacceptable value is rejected, never trimmed or defaulted.
 */
import { isUtf8 } from 'node:buffer';
import { type CloudEvent, SPEC_VERSION } from './model.js';
import { EventRejection, invalidAttributes, invalidPayload, malformed } from './rejection.js';
import { EARLIEST_EVENT_TIME_MS, MAX_AHEAD_MS } from './time-window.js';

/** The extension attribute naming rule: lower-case ASCII letters and digits, 1 to 20 characters. */
export const EXTENSION_NAME = /^[a-z0-9]{1,20}$/;

// C0 controls, DEL and C1 controls are not allowed in CloudEvents Strings.
// biome-ignore lint/suspicious/noControlCharactersInRegex: this regex exists to find control characters
const CONTROL = /[\u0000-\u001f\u007f-\u009f]/;
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;
const URI_REFERENCE = /^(?:[A-Za-z0-9\-._~:/?#[\]@!$&'()*+,;=]|%[0-9A-Fa-f]{2})+$/;
const ABSOLUTE_URI = /^[A-Za-z][A-Za-z0-9+.-]*:(?:[A-Za-z0-9\-._~:/?#[\]@!$&'()*+,;=]|%[0-9A-Fa-f]{2})*$/;
const TOKEN = "[!#$%&'*+.^_`|~0-9A-Za-z-]+";
const MEDIA_TYPE = new RegExp(
  `^${TOKEN}/${TOKEN}(?:[ \\t]*;[ \\t]*${TOKEN}=(?:${TOKEN}|"(?:[^"\\\\]|\\\\.)*"))*[ \\t]*$`,
);
const RFC3339 =
  /^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,9}))?(?:([Zz])|([+-])(\d{2}):(\d{2}))$/;

/** True when `value` is an acceptable CloudEvents String (no controls, no unpaired surrogates). */
export function isCloudEventsString(value: string): boolean {
  return !CONTROL.test(value) && !LONE_SURROGATE.test(value);
}

function requireString(name: string, value: string): void {
  if (value.length === 0)
    throw invalidAttributes(`attribute '${name}' must not be empty`, { attribute: name });
  if (!isCloudEventsString(value)) {
    throw invalidAttributes(`attribute '${name}' contains control characters or unpaired surrogates`, {
      attribute: name,
    });
  }
}

/** The last text `parseRfc3339` parsed and its result. */
let lastParsed: { text: string | undefined; ms: number | undefined } = { text: undefined, ms: undefined };

/**
 * Parses an RFC 3339 `date-time` into epoch milliseconds (fractions below a millisecond are
 * truncated). Returns `undefined` when the text is not a valid RFC 3339 timestamp.
 */
export function parseRfc3339(text: string): number | undefined {
  // One remembered result: each event's time is parsed twice (attribute check, then the
  // plausibility window) and events of one batch often share their time.
  if (text === lastParsed.text) return lastParsed.ms;
  const ms = parseRfc3339Uncached(text);
  lastParsed = { text, ms };
  return ms;
}

function parseRfc3339Uncached(text: string): number | undefined {
  const m = RFC3339.exec(text);
  if (!m) return undefined;
  const [, y, mo, d, h, mi, s, frac, z, sign, oh, om] = m;
  const year = Number(y);
  const month = Number(mo);
  const day = Number(d);
  const hour = Number(h);
  const minute = Number(mi);
  const second = Number(s);
  if (month < 1 || month > 12 || day < 1 || hour > 23 || minute > 59 || second > 60) return undefined;
  const daysInMonth = new Date(Date.UTC(year, month, 0)).getUTCDate();
  if (day > daysInMonth) return undefined;
  let offsetMinutes = 0;
  if (!z) {
    const offH = Number(oh);
    const offM = Number(om);
    if (offH > 23 || offM > 59) return undefined;
    offsetMinutes = (offH * 60 + offM) * (sign === '-' ? -1 : 1);
  }
  const ms = frac ? Number(frac.slice(0, 3).padEnd(3, '0')) : 0;
  const utc = new Date(0);
  utc.setUTCFullYear(year, month - 1, day);
  utc.setUTCHours(hour, minute, second, ms);
  return utc.getTime() - offsetMinutes * 60_000;
}

/** True when `value` is a JSON media type (`application/json`, `text/json`, or any `+json` suffix). */
export function isJsonMediaType(value: string | undefined): boolean {
  if (value === undefined) return false;
  const essence = mediaTypeEssence(value);
  return essence === 'application/json' || essence === 'text/json' || essence.endsWith('+json');
}

/** True for media types whose payload is text (rendered as a JSON string in structured JSON). */
export function isTextMediaType(value: string | undefined): boolean {
  if (value === undefined) return false;
  const essence = mediaTypeEssence(value);
  return essence.startsWith('text/') || essence === 'application/xml' || essence.endsWith('+xml');
}

/** `type/subtype` of a media type, lower-cased, parameters dropped. */
export function mediaTypeEssence(value: string): string {
  const semi = value.indexOf(';');
  return (semi === -1 ? value : value.slice(0, semi)).trim().toLowerCase();
}

/** The value of parameter `name` of a media type (lower-cased name match, quotes removed). */
export function mediaTypeParameter(value: string, name: string): string | undefined {
  const parts = value.split(';').slice(1);
  for (const part of parts) {
    const eq = part.indexOf('=');
    if (eq === -1) continue;
    if (part.slice(0, eq).trim().toLowerCase() !== name) continue;
    let v = part.slice(eq + 1).trim();
    if (v.startsWith('"') && v.endsWith('"') && v.length >= 2) v = v.slice(1, -1);
    return v;
  }
  return undefined;
}

/** Fields from which {@link buildEvent} makes a validated {@link CloudEvent}. */
export interface EventFields {
  specversion?: string;
  id?: string;
  source?: string;
  type?: string;
  time?: string;
  subject?: string;
  datacontenttype?: string;
  dataschema?: string;
  extensions: Record<string, string>;
  data?: Uint8Array;
}

/**
 * Validates the attribute rules above and returns the event. Missing required attributes are
 * `malformed` (the input is not a CloudEvent); present but unacceptable ones are
 * `invalid-attributes`.
 */
export function buildEvent(f: EventFields): CloudEvent {
  const missing = (['specversion', 'id', 'source', 'type'] as const).filter((k) => f[k] === undefined);
  if (missing.length > 0) {
    throw malformed(`required attribute(s) missing: ${missing.join(', ')}`, { missing: missing.join(',') });
  }
  if (f.specversion !== SPEC_VERSION) {
    throw invalidAttributes(`specversion '${f.specversion}' is not supported; expected '${SPEC_VERSION}'`, {
      attribute: 'specversion',
      supported: SPEC_VERSION,
    });
  }
  requireString('id', f.id!);
  requireString('type', f.type!);
  requireString('source', f.source!);
  if (!URI_REFERENCE.test(f.source!)) {
    throw invalidAttributes('attribute source must be a URI-reference', { attribute: 'source' });
  }
  if (f.subject !== undefined) requireString('subject', f.subject);
  if (f.time !== undefined && parseRfc3339(f.time) === undefined) {
    throw invalidAttributes('attribute time must be an RFC 3339 timestamp', { attribute: 'time' });
  }
  if (f.datacontenttype !== undefined && !MEDIA_TYPE.test(f.datacontenttype)) {
    throw invalidAttributes('attribute datacontenttype must be an RFC 2046 media type', {
      attribute: 'datacontenttype',
    });
  }
  if (f.dataschema !== undefined && !ABSOLUTE_URI.test(f.dataschema)) {
    throw invalidAttributes('attribute dataschema must be an absolute URI', { attribute: 'dataschema' });
  }
  for (const [name, value] of Object.entries(f.extensions)) {
    checkExtensionName(name);
    if (!isCloudEventsString(value)) {
      throw invalidAttributes(`extension '${name}' contains control characters or unpaired surrogates`, {
        attribute: name,
      });
    }
  }
  const event: {
    -readonly [K in keyof CloudEvent]: CloudEvent[K];
  } = {
    specversion: SPEC_VERSION,
    id: f.id!,
    source: f.source!,
    type: f.type!,
    extensions: f.extensions,
  };
  if (f.time !== undefined) event.time = f.time;
  if (f.subject !== undefined) event.subject = f.subject;
  if (f.datacontenttype !== undefined) event.datacontenttype = f.datacontenttype;
  if (f.dataschema !== undefined) event.dataschema = f.dataschema;
  if (f.data !== undefined && f.data.byteLength > 0) {
    checkStorablePayload(f.data, f.datacontenttype);
    event.data = f.data;
  }
  return event;
}

const BACKSLASH = 0x5c;
const U = 0x75;

/**
 * Throws `invalid-payload` for a payload PostgreSQL's jsonb (the `data` and `raw` columns) refuses
 * for its characters: U+0000 or an unpaired surrogate in any string or key. A JSON payload carries
 * them only as `\u` escapes, found by one scan of its bytes (`refusedEscape`: no parse, and a key
 * that a later duplicate hides from `JSON.parse` is still seen); a text payload, stored as a JSON
 * string, carries U+0000 as a NUL byte. Ingest refuses such an event instead of acknowledging one
 * the consumer could only dead-letter, and the consumer dead-letters one from another producer at
 * once instead of retrying its batch.
 */
export function checkStorablePayload(data: Uint8Array, datacontenttype: string | undefined): void {
  if (datacontenttype === undefined || isJsonMediaType(datacontenttype)) {
    if (refusedEscape(data)) {
      throw invalidPayload(
        'the JSON payload holds U+0000 or an unpaired surrogate (a \\u escape), which the event store (PostgreSQL jsonb) cannot hold',
      );
    }
  } else if (isTextMediaType(datacontenttype) && data.includes(0) && isUtf8(data)) {
    // (Text that is not UTF-8 is stored as base64, which holds any byte.)
    throw invalidPayload('the text payload holds U+0000, which the event store cannot hold');
  }
}

/**
 * Whether JSON text holds a `\u` escape jsonb refuses: `\u0000`, a high surrogate not followed at
 * once by a low one, or a low one alone. In a run of backslashes each pair is one escaped
 * backslash, and an odd last one escapes the byte after the run.
 */
function refusedEscape(bytes: Uint8Array): boolean {
  let i = bytes.indexOf(BACKSLASH);
  while (i !== -1) {
    let end = i;
    while (bytes[end] === BACKSLASH) end++;
    let next = end + 1;
    if ((end - i) % 2 === 1 && bytes[end] === U) {
      const unit = hex4(bytes, end + 1);
      next = end + 5;
      if (unit === 0 || (unit >= 0xdc00 && unit <= 0xdfff)) return true;
      if (unit >= 0xd800 && unit <= 0xdbff) {
        const low = bytes[next] === BACKSLASH && bytes[next + 1] === U ? hex4(bytes, next + 2) : -1;
        if (low < 0xdc00 || low > 0xdfff) return true;
        next += 6;
      }
    }
    i = bytes.indexOf(BACKSLASH, next);
  }
  return false;
}

/** The four hex digits at `at` as a number; -1 when they are not four hex digits. */
function hex4(bytes: Uint8Array, at: number): number {
  let n = 0;
  for (let k = at; k < at + 4; k++) {
    const c = bytes[k] ?? 0;
    const d =
      c >= 0x30 && c <= 0x39 ? c - 0x30 : (c | 0x20) >= 0x61 && (c | 0x20) <= 0x66 ? (c | 0x20) - 0x57 : -1;
    if (d < 0) return -1;
    n = n * 16 + d;
  }
  return n;
}

/** Throws `invalid-attributes` unless `name` is an acceptable extension attribute name. */
export function checkExtensionName(name: string): void {
  if (!EXTENSION_NAME.test(name)) {
    throw invalidAttributes(`attribute name '${name}' must match [a-z0-9]{1,20}`, { attribute: name });
  }
  if (name === 'data')
    throw invalidAttributes("'data' is reserved and cannot be an attribute", { attribute: name });
}

/** The plausibility window for `time`, in milliseconds on either side of the service clock. */
export interface TimeWindow {
  maxFutureSkewMs: number;
  maxPastSkewMs: number;
}

/** Direction and size of an event's distance from the service clock. */
export interface TimeSkew {
  direction: 'future' | 'past';
  seconds: number;
}

/**
 * Checks `time` is present and inside `[now - maxPast, now + maxFuture]` (both edges inclusive),
 * each side cut to the plausible window of `time-window.ts`.
 * Absent `time` is InvalidArgument; outside the window is OutOfRange; both carry the reason
 * `invalid-attributes`, and the window in `metadata`. Returns the skew for the metric.
 */
export function checkTimeWindow(event: CloudEvent, nowMs: number, window: TimeWindow): TimeSkew {
  if (event.time === undefined) {
    throw invalidAttributes('attribute time is required by this service', { attribute: 'time' });
  }
  const t = parseRfc3339(event.time);
  if (t === undefined)
    throw invalidAttributes('attribute time must be an RFC 3339 timestamp', { attribute: 'time' });
  const diff = t - nowMs;
  const skew: TimeSkew = { direction: diff > 0 ? 'future' : 'past', seconds: Math.abs(diff) / 1000 };
  // The configured skews never reach past the pipeline's plausible window (time-window.ts).
  const maxFuture = Math.min(window.maxFutureSkewMs, MAX_AHEAD_MS);
  const maxPast = Math.min(window.maxPastSkewMs, nowMs - EARLIEST_EVENT_TIME_MS);
  const limit = diff > 0 ? maxFuture : maxPast;
  if (Math.abs(diff) > limit) {
    throw new EventRejection(
      'OutOfRange',
      'invalid-attributes',
      `time is ${skew.seconds}s in the ${skew.direction}, beyond the allowed ${limit / 1000}s`,
      {
        attribute: 'time',
        direction: skew.direction,
        skewSeconds: String(skew.seconds),
        maxSkewSeconds: String(limit / 1000),
        earliest: new Date(nowMs - maxPast).toISOString(),
        latest: new Date(nowMs + maxFuture).toISOString(),
      },
    );
  }
  return skew;
}
