/**
 * `dlq_oldest_age_seconds{partition}`: how long the oldest dead letter not yet replayed has waited
 * in each dead-letter partition, read every `DLQ_AGE_INTERVAL` (off the consuming path) by
 * `DlqAdmin.oldestPending`. 0 for a partition with no letter waiting; a failed reading removes
 * every series (unknown, not a stale age), a partition the bounded reading did not settle has none.
 */
import { Periodic } from '@event-observatory/service-kit/resilience';
import type { Gauge } from 'prom-client';
import type { OldestPending } from './admin.js';

export interface DeadLetterAgeOptions {
  read: () => Promise<OldestPending>;
  gauge: Gauge;
  intervalMs: number;
  now?: () => number;
}

export class DeadLetterAge {
  private readonly periodic: Periodic;

  constructor(private readonly opts: DeadLetterAgeOptions) {
    this.periodic = new Periodic(opts.intervalMs, () => this.run());
  }

  start(): void {
    this.periodic.start();
  }

  /** Stops the interval; a reading in progress fails on the closed clients, caught. */
  stop(): void {
    this.periodic.stop();
  }

  /** One reading; concurrent calls share the one in progress. */
  tick(): Promise<void> {
    return this.periodic.tick();
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
