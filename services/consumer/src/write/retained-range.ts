/**
 * Where the store's retained range starts: the end of the newest month that retention detached from
 * `events.cloud_event` (the store's `retentionCutoff`), read at start and every
 * `RETAINED_RANGE_REFRESH_INTERVAL` off the consuming path. The processor compares each event's
 * time with it and dead-letters an older one: inserted, it would land in the default partition, out
 * of reach of the detached table, and its month cannot be created again. Months that were never
 * created are not a bound: an event older than the oldest partition of a store nothing was detached
 * from (a backfill on a new install) is stored in the default partition, as before, for the
 * runbook's move.
 *
 * No bound (every event is written, as without this) until a reading succeeds and while no month is
 * detached. A failed reading keeps the last bound: retention only moves it forward, so a stale one
 * lets through what a fresh one would refuse, never the reverse.
 */
import type { Logger } from '@event-observatory/service-kit/logger';
import { Periodic } from '@event-observatory/service-kit/resilience';
import { type Queryable, retentionCutoff } from '@event-observatory/store';

export interface RetainedRangeOptions {
  pool: Queryable;
  intervalMs: number;
  log: Logger;
}

export class RetainedRange {
  private readonly periodic: Periodic;
  private fromMs = Number.NEGATIVE_INFINITY;

  constructor(private readonly opts: RetainedRangeOptions) {
    this.periodic = new Periodic(opts.intervalMs, () => this.read());
  }

  /** Epoch milliseconds of the range's start; -Infinity when there is no bound. */
  get startMs(): number {
    return this.fromMs;
  }

  /** Reads the bound now, then every interval: resolves once the first reading ended. */
  start(): Promise<void> {
    this.periodic.start();
    return this.periodic.tick();
  }

  stop(): void {
    this.periodic.stop();
  }

  private async read(): Promise<void> {
    try {
      const cutoff = await retentionCutoff(this.opts.pool);
      const fromMs = cutoff ? cutoff.getTime() : Number.NEGATIVE_INFINITY;
      if (fromMs !== this.fromMs)
        this.opts.log.info({ retainedFrom: cutoff?.toISOString() ?? null }, 'retained range start read');
      this.fromMs = fromMs;
    } catch (err) {
      this.opts.log.warn({ err: (err as Error).message }, 'retained range not read; keeping the last bound');
    }
  }
}
