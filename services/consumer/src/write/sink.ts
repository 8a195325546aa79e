/**
 * What the batch processor writes to, as two small interfaces: the store (`EventWriter` on the
 * write pool) and the dead-letter topic (the broker's `DeadLetterProducer`). The processor's retry and
 * bisection are unit-tested against in-memory implementations of these.
 */
import type { RawRecord } from '@event-observatory/broker';
import type { Checkpoint, EventInsertResult, EventInsertRow } from '@event-observatory/store';

/** The store side. A failure is classified by the store's `classifyStoreError`. */
export interface EventSink {
  /** Rows and checkpoints in one transaction: both become durable together or not at all. */
  writeWithCheckpoints(
    rows: readonly EventInsertRow[],
    checkpoints: readonly Checkpoint[],
  ): Promise<EventInsertResult>;
  /** Rows alone, durable on their own (bisection: each part stands alone). */
  insert(rows: readonly EventInsertRow[]): Promise<EventInsertResult>;
  /** Checkpoints alone (after bisection, or for a batch of nothing but dead letters). */
  checkpoint(checkpoints: readonly Checkpoint[]): Promise<void>;
}

export interface DeadLetterSink {
  /** Publishes dead letters and resolves once the broker acknowledged all of them. */
  publish(letters: RawRecord[]): Promise<void>;
}
