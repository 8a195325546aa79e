/**
 * What the batch processor writes to, as two small interfaces: the store (`EventWriter` on the
 * write pool) and the dead-letter topic (the service's producer). The processor's retry and
 * bisection are unit-tested against in-memory implementations of these.
 */
import type { Checkpoint } from '@event-observatory/store';
import type { Message } from 'kafkajs';
import type { EventRow } from './decode.js';

export interface InsertResult {
  attempted: number;
  /** Inserted rows per CloudEvents type. */
  insertedByType: Map<string, number>;
  inserted: number;
}

/** The store side. A failure is classified by its SQLSTATE (`store-errors.ts`). */
export interface EventSink {
  /** Rows and checkpoints in one transaction: both become durable together or not at all. */
  writeWithCheckpoints(rows: readonly EventRow[], checkpoints: readonly Checkpoint[]): Promise<InsertResult>;
  /** Rows alone, durable on their own (bisection: each part stands alone). */
  insert(rows: readonly EventRow[]): Promise<InsertResult>;
  /** Checkpoints alone (after bisection, or for a batch of nothing but dead letters). */
  checkpoint(checkpoints: readonly Checkpoint[]): Promise<void>;
}

export interface DeadLetterSink {
  /** Publishes dead letters and resolves once the broker acknowledged all of them. */
  publish(messages: Message[]): Promise<void>;
}
