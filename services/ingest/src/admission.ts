/**
 * The in-flight byte budget (`INGEST_MAX_INFLIGHT_BYTES`): what bounds the service's memory when
 * more is offered than it can publish. A request is charged before its body is read (its declared
 * `content-length`, or its route's ceiling when the length is not declared, plus a fixed share for
 * what every request holds besides its body) and released once it is answered; a request that
 * does not fit is refused at once with 503 UNAVAILABLE and `retry-after`, its body never
 * processed (only read off the connection and dropped), so an overloaded service sheds the work
 * instead of queueing it. Everything a request allocates (the body, its decoded events, their
 * Kafka records) lives only while it is in flight, so the budget bounds all of it.
 */
import { ApiError } from '@event-observatory/service-kit/errors';

/**
 * What a request holds besides its body (parsed headers, the request and response objects, the
 * promises of its publish): charged on top, so bodiless events are not free.
 */
export const REQUEST_OVERHEAD_BYTES = 2048;

/** The 503 of a request that does not fit the budget (the spec's retryable failure). */
export function overloaded(limitBytes: number): ApiError {
  return new ApiError(
    'Unavailable',
    `the service holds its limit of ${limitBytes} bytes of requests in flight; retry later`,
    {
      reason: 'unpersistable',
      metadata: { failure: 'overloaded', limitBytes: String(limitBytes) },
      headers: { 'retry-after': '1' },
    },
  );
}

/**
 * The charge of one request: its declared length, or its route's ceiling when it declares none,
 * plus the overhead. A declared length over the ceiling is charged nothing for its body: it is
 * refused with 413 before a byte of it is read.
 */
export function chargeOf(declared: string | undefined, ceiling: number): number {
  const length = declared !== undefined && /^\d+$/.test(declared) ? Number(declared) : ceiling;
  return (length > ceiling ? 0 : length) + REQUEST_OVERHEAD_BYTES;
}

export class InFlightBudget {
  private used = 0;

  constructor(readonly limitBytes: number) {}

  /** Bytes charged to the requests in flight. */
  get inFlightBytes(): number {
    return this.used;
  }

  /**
   * Runs `work` charged `bytes` and releases them when it settles; throws the 503 at once, without
   * running it, when they do not fit.
   */
  async run<T>(bytes: number, work: () => Promise<T>): Promise<T> {
    if (this.used + bytes > this.limitBytes) throw overloaded(this.limitBytes);
    this.used += bytes;
    try {
      return await work();
    } finally {
      this.used -= bytes;
    }
  }
}
