/**
 * The batch processor's store side on the write pool: the store's `insertEvents` (one statement a
 * batch) and `upsertCheckpoints`, together in one transaction (`insertEventsWithCheckpoints`) or
 * alone.
 */
import {
  type Checkpoint,
  type DatabasePool,
  type EventInsertResult,
  type EventInsertRow,
  insertEvents,
  insertEventsWithCheckpoints,
  upsertCheckpoints,
} from '@event-observatory/store';
import type { EventSink } from './sink.js';

/** The sink of the batch processor on the write pool. */
export class EventWriter implements EventSink {
  constructor(
    private readonly pool: DatabasePool,
    private readonly group: string,
  ) {}

  /** Rows and checkpoints in one transaction: both become durable together or not at all. */
  writeWithCheckpoints(
    rows: readonly EventInsertRow[],
    cps: readonly Checkpoint[],
  ): Promise<EventInsertResult> {
    return insertEventsWithCheckpoints(this.pool, this.group, rows, cps);
  }

  /** One autocommit insert (bisection: each half stands alone). */
  insert(rows: readonly EventInsertRow[]): Promise<EventInsertResult> {
    return insertEvents(this.pool, rows);
  }

  /** Checkpoints alone (after bisection, or for a batch of nothing but dead letters). */
  checkpoint(cps: readonly Checkpoint[]): Promise<void> {
    return upsertCheckpoints(this.pool, this.group, cps);
  }
}
