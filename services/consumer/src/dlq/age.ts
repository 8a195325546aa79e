/**
 * `dlq_oldest_age_seconds{partition}`: how long the oldest dead letter not yet replayed has waited
 * in each dead-letter partition, read every `DLQ_AGE_INTERVAL` (off the consuming path) by
 * `DlqAdmin.oldestPending`. 0 for a partition with no letter waiting; a failed reading removes
 * every series (unknown, not a stale age), a partition the bounded reading did not settle has none.
 */
import type { Gauge } from 'prom-client';
import type { OldestPending } from './admin.js';

export interface DeadLetterAgeOptions {
  read: () => Promise<OldestPending>;
  gauge: Gauge;
  intervalMs: number;
  now?: () => number;
}

export class DeadLetterAge {
  private timer: NodeJS.Timeout | undefined;
  private reading: Promise<void> | undefined;

  constructor(private readonly opts: DeadLetterAgeOptions) {}

  start(): void {
    if (this.timer) return;
    this.timer = setInterval(() => void this.tick(), this.opts.intervalMs);
    this.timer.unref();
    void this.tick();
  }

  /**
   * Stops the interval. A reading in progress is not awaited (shutdown must not wait on a scan
   * before the drain); it ends by its own bounds or fails on the closed clients, caught.
   */
  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
  }

  /** One reading; concurrent calls share the one in progress. */
  tick(): Promise<void> {
    this.reading ??= this.run().finally(() => {
      this.reading = undefined;
    });
    return this.reading;
  }

  private async run(): Promise<void> {
    const { gauge } = this.opts;
    const oldest = await this.opts.read().catch(() => undefined);
    gauge.reset();
    if (!oldest) return;
    const now = (this.opts.now ?? Date.now)();
    for (const [partition, since] of oldest) {
      const seconds = since ? Math.max(0, (now - since.getTime()) / 1000) : 0;
      gauge.set({ partition: String(partition) }, seconds);
    }
  }
}
