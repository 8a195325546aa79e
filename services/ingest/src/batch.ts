/**
 * The batch rules (README, "Endpoints"): the whole batch is refused (413) over its ceilings; otherwise each
 * element goes through the single-event rules on its own (not atomic), the accepted ones are handed
 * to the producer in request order, and the answer lists every element by its index.
 */
import { type CloudEvent, splitBatch, tooLarge } from '@event-observatory/events';
import { ApiError } from '@event-observatory/service-kit/errors';
import type { Limits } from './config.js';
import {
  type EventResource,
  errorBodyOf,
  type IngestErrorBody,
  type Ingestor,
  toApiError,
} from './ingest.js';
import type { IngestMeters } from './metrics.js';

/** One element's outcome, at its index in the request. */
export type BatchEntry = { index: number; event: EventResource } | { index: number; error: IngestErrorBody };

/** BatchCreateResponse: the answer to a batch. */
export interface BatchCreateResponse {
  events: EventResource[];
  entries: BatchEntry[];
  created: number;
  failed: number;
}

/** A batch document that passed the whole-batch checks. */
export interface AcceptedBatch {
  elements: Uint8Array[];
  /** The raw body's size, for `ingest_payload_bytes`. */
  bytes: number;
}

export interface BatchDeps {
  ingestor: Ingestor;
  meters: IngestMeters;
  limits: Pick<Limits, 'maxBatchEvents'>;
}

export function createBatchIngestor(deps: BatchDeps) {
  const { ingestor, meters, limits } = deps;

  /** Judges one element; a refusal becomes its entry's error instead of failing the batch. */
  function judge(bytes: Uint8Array): CloudEvent | ApiError {
    try {
      return ingestor.judgeElement(bytes);
    } catch (err) {
      return toApiError(err);
    }
  }

  return {
    /**
     * Splits the batch document into its elements' raw bytes; throws (for the whole batch) when it
     * is no JSON array of the batch media type or holds more than `INGEST_MAX_BATCH_EVENTS`.
     */
    accept(contentType: string | undefined, body: Uint8Array): AcceptedBatch {
      // The split stops one element past the limit: the rest of a refused batch is not read.
      const elements = splitBatch(contentType, body, limits.maxBatchEvents);
      if (elements.length > limits.maxBatchEvents) {
        throw tooLarge(
          `the batch holds more than ${limits.maxBatchEvents} events; at most ${limits.maxBatchEvents} are accepted`,
          { limitEvents: String(limits.maxBatchEvents) },
        );
      }
      return { elements, bytes: body.byteLength };
    },

    /** Judges every element, then publishes the accepted ones in request order, all with `producer`. */
    async create(batch: AcceptedBatch, producer: string): Promise<BatchCreateResponse> {
      meters.batch(batch.elements.length);
      const judged = batch.elements.map(judge);
      const outcomes = await Promise.all(
        judged.map((j) =>
          j instanceof ApiError
            ? j
            : ingestor.publish(j, 'structured', producer).catch((err: unknown) => toApiError(err)),
        ),
      );
      const events: EventResource[] = [];
      const entries = outcomes.map((o, index): BatchEntry => {
        if (o instanceof ApiError) {
          ingestor.rejected(o);
          return { index, error: errorBodyOf(o) };
        }
        events.push(o);
        return { index, event: o };
      });
      if (events.length > 0) meters.payload('structured', batch.bytes);
      return { events, entries, created: events.length, failed: entries.length - events.length };
    },
  };
}

export type BatchIngestor = ReturnType<typeof createBatchIngestor>;
