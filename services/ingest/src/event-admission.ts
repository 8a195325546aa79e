/**
 * The adaptive limit on events in flight (DESIGN.md, "Overload control"): a request is charged
 * the events it is expected to hold before its body is read (one for a single event; for a batch,
 * its declared length over the average element size seen so far) and refused at once with the
 * 503 `overloaded` when they do not fit the limit, which a `GradientLimit` moves with the latency
 * of the publishes it admitted. Once a batch is split its charge becomes its real element count;
 * a batch that then does not fit is refused whole, before any of its elements is decoded or
 * published. The limit never exceeds the producer's queue capacity, so admitted events are not
 * refused one by one for `queue-full`.
 */
import { ApiError } from '@event-observatory/service-kit/errors';
import type { GradientLimit } from './concurrency-limit.js';

/** The 503 of a request over the event limit (the spec's retryable failure, as the byte budget's). */
export function overloadedEvents(limitEvents: number): ApiError {
  return new ApiError(
    'Unavailable',
    `the service holds its current limit of ${limitEvents} events in flight; retry later`,
    {
      reason: 'unpersistable',
      metadata: { failure: 'overloaded', limitEvents: String(limitEvents) },
      headers: { 'retry-after': '1' },
    },
  );
}

/** A publish that failed as unavailable (timeout, broker away, queue full): a failed sample. */
function unavailable(err: unknown): boolean {
  return err instanceof ApiError && err.code === 503;
}

/** The events one admitted request holds, and the latency of its publishing once measured. */
export class EventPermit {
  sample: { ms: number; ok: boolean } | undefined;

  constructor(
    private readonly admission: EventAdmission,
    public events: number,
  ) {}

  /**
   * Charges the batch's real element count instead of the estimate; throws the 503 when the
   * larger charge does not fit (unless this request is all that is in flight).
   */
  resize(elements: number, bodyBytes: number): void {
    this.admission.learn(elements, bodyBytes);
    const { limit } = this.admission;
    if (elements > this.events && !limit.tryAcquire(elements - this.events, this.events)) {
      throw this.admission.refused();
    }
    if (elements < this.events) limit.release(this.events - elements);
    this.events = elements;
  }

  /**
   * Runs the publishing and keeps its latency; `ok` says whether every publish succeeded, or
   * (undefined) that nothing was handed to the broker: a batch of no element, or of refused ones
   * only, answers in microseconds and would teach the limit a latency no publish has.
   */
  async measure<T>(work: () => Promise<T>, ok: (result: T) => boolean | undefined = () => true): Promise<T> {
    const started = performance.now();
    try {
      const result = await work();
      const published = ok(result);
      if (published !== undefined) this.sample = { ms: performance.now() - started, ok: published };
      return result;
    } catch (err) {
      if (unavailable(err)) this.sample = { ms: performance.now() - started, ok: false };
      throw err;
    }
  }
}

export class EventAdmission {
  /** Average raw bytes of a batch element (moving), for a batch's estimate before its body. */
  private elementBytes: number;
  /** The last refusal, answered again while the limit stays (no error built per refused request). */
  private refusal: ApiError | undefined;
  /** The last refusal's body as JSON bytes, for the early refusal (nothing serialized per request). */
  private refusalBody: [ApiError, Buffer] | undefined;
  private readonly onAdmit: () => void;

  /**
   * `onAdmit` runs as each request's events are admitted (ingest wakes its queueing delay
   * sampling there, `OwnQueueing`).
   */
  constructor(
    readonly limit: GradientLimit,
    private readonly maxBatchEvents: number,
    opts: { initialElementBytes?: number; onAdmit?: () => void } = {},
  ) {
    this.elementBytes = opts.initialElementBytes ?? 512;
    this.onAdmit = opts.onAdmit ?? (() => {});
  }

  /** Events a batch body of `declared` length is expected to hold (the average batch when unknown). */
  estimateBatch(declared: string | undefined): number {
    const length = declared !== undefined && /^\d+$/.test(declared) ? Number(declared) : undefined;
    const estimate = length === undefined ? this.maxBatchEvents : Math.round(length / this.elementBytes);
    return Math.min(this.maxBatchEvents, Math.max(1, estimate));
  }

  /** The 503 for the current limit. */
  refused(): ApiError {
    const limit = String(this.limit.limit);
    if (this.refusal?.details[0]?.metadata.limitEvents !== limit) {
      this.refusal = overloadedEvents(this.limit.limit);
    }
    return this.refusal;
  }

  /** Whether one more event would be refused now. */
  get full(): boolean {
    return !this.limit.fits(1);
  }

  /** The current refusal's body as JSON bytes. */
  refusedBody(): Buffer {
    const refusal = this.refused();
    if (this.refusalBody?.[0] !== refusal) {
      this.refusalBody = [refusal, Buffer.from(JSON.stringify(refusal.toBody()))];
    }
    return this.refusalBody[1];
  }

  /**
   * Moves the element size average a fifth of the way towards a batch just split, that batch's
   * size taken within a factor of 4 of the average: one body padded to megabytes around a single
   * element (or holding thousands of tiny ones) cannot swing every later batch's estimate at once.
   */
  learn(elements: number, bodyBytes: number): void {
    if (elements === 0) return;
    const sample = Math.min(4 * this.elementBytes, Math.max(this.elementBytes / 4, bodyBytes / elements));
    this.elementBytes += 0.2 * (sample - this.elementBytes);
  }

  /**
   * Runs `work` charged `events`, or throws the 503 at once without running it; the latency
   * the work measured (`EventPermit.measure`) moves the limit when it settles.
   */
  async run<T>(events: number, work: (permit: EventPermit) => Promise<T>): Promise<T> {
    if (!this.limit.tryAcquire(events)) throw this.refused();
    this.onAdmit();
    const permit = new EventPermit(this, events);
    try {
      return await work(permit);
    } finally {
      const { sample } = permit;
      if (sample) this.limit.complete(permit.events, sample.ms, sample.ok);
      else this.limit.release(permit.events);
    }
  }
}
