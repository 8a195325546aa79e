/** What a caller hands to the producer and what it gets back. */

/** One record to publish (as `@event-observatory/events` `toKafkaRecord` makes it). */
export interface OutboundRecord {
  key: string;
  value: Buffer | null;
  headers: Record<string, string>;
}

/** Where an acknowledged record landed. `offset` is an int64 in decimal. */
export interface PublishReceipt {
  topic: string;
  partition: number;
  offset: string;
  key: string;
}

/**
 * Why a publish failed. All of them mean "not known to be durable; retry later" (HTTP 503):
 * `queue-full` (refused, never sent), `timeout` (deadline passed), `unavailable` (broker error or
 * unreachable), `closed` (producer shutting down).
 */
export type PublishFailure = 'queue-full' | 'timeout' | 'unavailable' | 'closed';

export class PublishError extends Error {
  override readonly name = 'PublishError';
  constructor(
    readonly kind: PublishFailure,
    message: string,
    /** True when the record was certainly not written (refused or expired before sending). */
    readonly notSent: boolean,
  ) {
    super(message);
  }
}
