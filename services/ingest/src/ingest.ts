/**
 * The ingestion rules for one event (README): size on the raw bytes, decode, `time`
 * plausibility, publish, and the metrics that go with each outcome.
 */

import {
  type EventProducer,
  PublishError,
  type PublishReceipt,
  RECORD_OVERHEAD_BYTES,
  recordBytesOver,
} from '@event-observatory/broker';
import {
  type CloudEvent,
  checkTimeWindow,
  decodeHttpEvent,
  decodeJsonEvent,
  EventRejection,
  eventName,
  type HeaderPairs,
  isJsonMediaType,
  type KafkaRecordOut,
  partitionKey,
  type RejectionReason,
  toKafkaRecordFrom,
  tooLarge,
} from '@event-observatory/events';
import { ApiError, type ErrorBodyFields, type ErrorInfo } from '@event-observatory/service-kit/errors';
import type { Limits } from './config.js';
import type { KnownTypes } from './known-types.js';
import type { IngestMeters, Mode } from './metrics.js';

/** The created resource (`Event` in the OpenAPI document). */
export interface EventResource {
  name: string;
  id: string;
  source: string;
  eventType: string;
  time: string;
  partitionKey: string;
  destination?: { topic: string; partition: number; offset: number };
}

export interface IngestorDeps {
  producer: Pick<EventProducer, 'publish'>;
  limits: Limits;
  meters: IngestMeters;
  knownTypes: KnownTypes;
  /** Service clock in epoch ms; default `Date.now`. */
  now?: () => number;
}

/** The resource for an event; with a receipt it includes where it landed. */
function resourceOf(event: CloudEvent, receipt?: PublishReceipt): EventResource {
  const r: EventResource = {
    name: eventName(event),
    id: event.id,
    source: event.source,
    eventType: event.type,
    time: event.time ?? '',
    partitionKey: partitionKey(event),
  };
  if (receipt) {
    r.destination = { topic: receipt.topic, partition: receipt.partition, offset: Number(receipt.offset) };
  }
  return r;
}

/** Turns a rejection or publish failure into the spec's error; anything else is rethrown. */
export function toApiError(err: unknown): ApiError {
  if (err instanceof ApiError) return err;
  if (err instanceof EventRejection) {
    return new ApiError(err.kind, err.message, { reason: err.reason, metadata: { ...err.metadata } });
  }
  if (err instanceof PublishError) return unavailable(err);
  throw err;
}

/**
 * The 503 of a publish failure, made once per failure: the producer refuses every record of a
 * full queue with one shared error, so each refused event of an overload shares one answer too.
 */
const unavailableOf = new WeakMap<PublishError, ApiError>();
function unavailable(err: PublishError): ApiError {
  let api = unavailableOf.get(err);
  if (api === undefined) {
    api = new ApiError('Unavailable', `event not published: ${err.message}`, {
      reason: 'unpersistable',
      metadata: { failure: err.kind },
      headers: { 'retry-after': '1' },
    });
    unavailableOf.set(err, api);
  }
  return api;
}

/** The closed-set reason of an error about one event. */
function reasonOf(err: ApiError): RejectionReason {
  return (err.details[0]?.reason ?? 'malformed') as RejectionReason;
}

/**
 * ErrorBody (without the `error` wrapper), for batch entries and validate responses. Its details
 * only ever carry the closed rejection reasons.
 */
export type IngestErrorBody = Omit<ErrorBodyFields, 'details'> & {
  details: Array<ErrorInfo & { reason: RejectionReason }>;
};

export function errorBodyOf(err: ApiError): IngestErrorBody {
  return err.toBody().error as IngestErrorBody;
}

export function createIngestor(deps: IngestorDeps) {
  const now = deps.now ?? Date.now;
  const window = { maxFutureSkewMs: deps.limits.maxFutureSkewMs, maxPastSkewMs: deps.limits.maxPastSkewMs };

  function checkTime(event: CloudEvent): void {
    try {
      const skew = checkTimeWindow(event, now(), window);
      deps.meters.skew(skew.direction, skew.seconds);
    } catch (err) {
      if (err instanceof EventRejection && err.metadata.skewSeconds !== undefined) {
        deps.meters.skew(err.metadata.direction as 'future' | 'past', Number(err.metadata.skewSeconds));
      }
      throw err;
    }
  }

  function countUnrecognised(event: CloudEvent): void {
    if (!deps.knownTypes.configured) return;
    if (!deps.knownTypes.recognises(event.type)) deps.meters.unrecognised(event.type, 'unknown-type');
    else if (event.data !== undefined && !consumerReadsPayload(event.datacontenttype)) {
      deps.meters.unrecognised(event.type, 'invalid-payload');
    }
  }

  /**
   * Whether the consumer can make the payload its `data` column: JSON (also when no
   * `datacontenttype` is given, as the JSON event format implies) or text. Other media types are
   * stored only verbatim, so a recognised type carrying one counts as `invalid-payload`.
   */
  function consumerReadsPayload(contentType: string | undefined): boolean {
    return contentType === undefined || isJsonMediaType(contentType) || /^\s*text\//i.test(contentType);
  }

  // What the start-up check guarantees the topic holds (`RECORD_OVERHEAD_BYTES`).
  const recordLimit = deps.limits.maxEventBytes + RECORD_OVERHEAD_BYTES;

  /**
   * The event's Kafka record; 413 `too-large` when it would outgrow what the topic is known to
   * hold, so that the API refuses it, not the broker, which fails every record of its request.
   */
  function recordOf(event: CloudEvent, producer: string): KafkaRecordOut {
    const record = toKafkaRecordFrom(event, producer);
    const bytes = recordBytesOver(record, recordLimit);
    if (bytes !== undefined)
      throw toApiError(
        tooLarge(
          `the event's Kafka record (key, headers and payload) would take ${bytes} bytes; at most ${recordLimit} are sent`,
          { limitBytes: String(recordLimit) },
        ),
      );
    return record;
  }

  /** Decodes and checks a single-event request (binary or structured). */
  function judgeRequest(headers: HeaderPairs, body: Uint8Array): { mode: Mode; event: CloudEvent } {
    const decoded = decodeHttpEvent(headers, body);
    checkTime(decoded.event);
    return decoded;
  }

  /**
   * Publishes with the `observatory-producer` header `producer` (`producerHeader`) and waits for
   * acknowledgement; counts the event as received (and unrecognised) only then. Throws `ApiError`
   * Unavailable (`unpersistable`).
   */
  async function publish(event: CloudEvent, mode: Mode, producer: string): Promise<EventResource> {
    const record = recordOf(event, producer);
    let receipt: PublishReceipt;
    try {
      receipt = await deps.producer.publish(record);
    } catch (err) {
      throw toApiError(err);
    }
    deps.meters.received(event.type, mode);
    countUnrecognised(event);
    return resourceOf(event, receipt);
  }

  return {
    publish,

    /** A single-event request: judged, published, and its body counted once acknowledged. */
    async create(headers: HeaderPairs, body: Uint8Array, producer: string): Promise<EventResource> {
      const { mode, event } = judgeRequest(headers, body);
      const created = await publish(event, mode, producer);
      deps.meters.payload(mode, body.byteLength);
      return created;
    },

    /** A validate request: the event it would create (without destination); never publishes. */
    validate(
      headers: HeaderPairs,
      body: Uint8Array,
      producer: string,
    ): { valid: true; event: EventResource } {
      const { event } = judgeRequest(headers, body);
      recordOf(event, producer);
      return { valid: true, event: resourceOf(event) };
    },

    /** Size-checks, decodes and time-checks one batch element from its raw bytes. */
    judgeElement(bytes: Uint8Array): CloudEvent {
      if (bytes.byteLength > deps.limits.maxEventBytes) {
        throw tooLarge(`the event exceeds ${deps.limits.maxEventBytes} bytes`, {
          limitBytes: String(deps.limits.maxEventBytes),
        });
      }
      const event = decodeJsonEvent(bytes);
      checkTime(event);
      return event;
    },

    /** Counts a refusal under its reason. */
    rejected(err: ApiError): void {
      deps.meters.rejected(reasonOf(err));
    },
  };
}

export type Ingestor = ReturnType<typeof createIngestor>;
