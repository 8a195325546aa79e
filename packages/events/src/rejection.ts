/**
 * Rejection reasons and the error type every decoder and validator throws.
 *
 * The reasons are a closed set, shared by the ingestion API's refusals and the consumer's poison and
 * unrecognised records; `ErrorInfo.reason` and the `reason` tag of `ingest_events_rejected_total` both use it.
 *
 * Mapping used by this package (the spec leaves most of it open):
 *
 * | reason | when |
 * |---|---|
 * | `malformed` | not a CloudEvent at all: body not JSON / not UTF-8, JSON not an object, a required attribute (specversion, id, source, type) missing, bad percent-encoding or invalid UTF-8 in a `ce-` header, unsupported event format or media type, batch document not an array |
 * | `invalid-attributes` | attributes present but not acceptable: wrong JSON type, empty, not a URI, bad RFC 3339 time, `time` absent, `time` outside the plausibility window, bad extension name, unsupported specversion |
 * | `invalid-payload` | the payload does not match its envelope: both `data` and `data_base64`, bad base64, a JSON `datacontenttype` with a payload that is not JSON, a non-string `data` for a non-JSON media type |
 * | `unknown-type` | never produced by ingestion (it accepts every type and only counts unrecognised ones); used by the consumer |
 * | `too-large` | a body or batch element over `INGEST_MAX_EVENT_BYTES`, a batch over `INGEST_MAX_BATCH_EVENTS` |
 * | `unpersistable` | the broker did not acknowledge (produced by the service, not by this package) |
 */

export const REJECTION_REASONS = [
  'malformed',
  'invalid-attributes',
  'invalid-payload',
  'unknown-type',
  'too-large',
  'unpersistable',
] as const;

export type RejectionReason = (typeof REJECTION_REASONS)[number];

/**
 * Error kinds of the API's error body (service-kit's `/errors`) that a decoder can produce. `InvalidArgument` and `OutOfRange` are
 * 400, `PayloadTooLarge` is 413.
 */
export type RejectionKind = 'InvalidArgument' | 'OutOfRange' | 'PayloadTooLarge';

/** A refusal of one event, with the closed-set reason and the numbers that explain it. */
export class EventRejection extends Error {
  override readonly name = 'EventRejection';
  constructor(
    readonly kind: RejectionKind,
    readonly reason: RejectionReason,
    message: string,
    readonly metadata: Readonly<Record<string, string>> = {},
  ) {
    super(message);
  }
}

/** `malformed` InvalidArgument. */
export function malformed(message: string, metadata?: Record<string, string>): EventRejection {
  return new EventRejection('InvalidArgument', 'malformed', message, metadata);
}

/** `invalid-attributes` InvalidArgument. */
export function invalidAttributes(message: string, metadata?: Record<string, string>): EventRejection {
  return new EventRejection('InvalidArgument', 'invalid-attributes', message, metadata);
}

/** `invalid-payload` InvalidArgument. */
export function invalidPayload(message: string, metadata?: Record<string, string>): EventRejection {
  return new EventRejection('InvalidArgument', 'invalid-payload', message, metadata);
}

/** `too-large` PayloadTooLarge (413). */
export function tooLarge(message: string, metadata?: Record<string, string>): EventRejection {
  return new EventRejection('PayloadTooLarge', 'too-large', message, metadata);
}
