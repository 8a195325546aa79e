/**
 * The periodic probe (every `LAG_REFRESH_INTERVAL`): group lag per partition from an admin
 * client, dead-letter depth, checkpoint divergence, rows in the default partition, and the
 * `consume_running` report. Each request is bounded by `LAG_REQUEST_TIMEOUT`; a failed reading
 * publishes NaN (lag series are dropped) rather than a stale value.
 *
 * - consume_group_lag{group,topic,partition}: log end offset - committed offset, for partitions
 *   with a committed offset only.
 * - consume_checkpoint_divergence: sum over partitions of max(0, broker committed offset -
 *   stored checkpoint): offsets committed without a durable checkpoint. 0 is the only healthy value.
 * - consume_running: 1 consuming (or failed for good: only lag shows that), 0 paused/stopped;
 *   NaN before the first tick and when the last report is older than three intervals. A tick reports only when its group reading (the
 *   committed offsets, a broker request) succeeds: the stream's state is local and always known,
 *   so counting every tick would make "three missed ones" unreachable while the broker is gone.
 */
import { type GroupAdmin, groupLag, topicDepth } from '@event-observatory/broker';
import { Periodic, withTimeout } from '@event-observatory/service-kit/resilience';
import { countDefaultRows, type Queryable, readCheckpoints } from '@event-observatory/store';
import { Gauge, type Registry } from 'prom-client';
import type { ConsumerMetrics } from '../metrics.js';

export interface ProbeOptions {
  admin: GroupAdmin;
  pool: Queryable;
  metrics: ConsumerMetrics;
  registry: Registry;
  groupId: string;
  topic: string;
  dlqTopic: string;
  intervalMs: number;
  requestTimeoutMs: number;
  consuming: () => boolean;
  now?: () => number;
}

export class Probe {
  private readonly periodic: Periodic;
  private lastReport: { at: number; running: boolean } | undefined;
  private readonly now: () => number;

  constructor(private readonly opts: ProbeOptions) {
    this.now = opts.now ?? Date.now;
    this.periodic = new Periodic(opts.intervalMs, () => this.run());
    const probe = this;
    new Gauge({
      name: 'consume_running',
      help: '1 while consuming, 0 while paused or stopped, NaN when the probe has not reported',
      registers: [opts.registry],
      collect() {
        this.set(probe.runningValue());
      },
    });
  }

  runningValue(): number {
    const r = this.lastReport;
    if (!r || this.now() - r.at > 3 * this.opts.intervalMs) return Number.NaN;
    return r.running ? 1 : 0;
  }

  start(): void {
    this.periodic.start();
  }

  stop(): void {
    this.periodic.stop();
  }

  /** A tick's group reading succeeded: `consume_running` reports the stream's state as of now. */
  reported(): void {
    this.lastReport = { at: this.now(), running: this.opts.consuming() };
  }

  /**
   * Publishes the stream's current state now (after a lifecycle command) without waiting for the
   * tick. It does not refresh the report's age: only a tick whose group reading succeeded does, so
   * this never turns NaN into a value.
   */
  reportRunning(): void {
    if (this.lastReport) this.lastReport = { at: this.lastReport.at, running: this.opts.consuming() };
  }

  /** One probe run; concurrent calls share the run in progress. */
  tick(): Promise<void> {
    return this.periodic.tick();
  }

  private async run(): Promise<void> {
    const { metrics } = this.opts;
    const committedOffsets = this.bounded(
      this.opts.admin.committedOffsets(this.opts.groupId, this.opts.topic),
    );
    // Checkpoints are read only after the committed offsets: the consumer commits an offset after
    // the transaction holding its checkpoint, so every offset read first already has its
    // checkpoint and a divergence is real. Read at once, a commit landing between the two reads
    // showed as a transient divergence.
    const storedCheckpoints = committedOffsets
      .catch(() => undefined)
      .then(() => this.bounded(readCheckpoints(this.opts.pool, this.opts.groupId, this.opts.topic)));
    const [committed, ends, dlq, checkpoints, defaults] = await Promise.allSettled([
      committedOffsets,
      this.bounded(this.opts.admin.partitionRanges(this.opts.topic)),
      this.bounded(this.opts.admin.partitionRanges(this.opts.dlqTopic)),
      storedCheckpoints,
      this.bounded(countDefaultRows(this.opts.pool)),
    ]);

    if (committed.status === 'fulfilled') this.reported();
    metrics.groupLag.reset();
    const commits = committed.status === 'fulfilled' ? committed.value : new Map<number, bigint>();
    if (committed.status === 'fulfilled' && ends.status === 'fulfilled') {
      for (const [partition, lag] of groupLag(commits, ends.value)) {
        metrics.groupLag.set(
          { group: this.opts.groupId, topic: this.opts.topic, partition: String(partition) },
          Number(lag),
        );
      }
    }
    metrics.dlqDepth.set(dlq.status === 'fulfilled' ? topicDepth(dlq.value).depth : Number.NaN);
    if (committed.status === 'fulfilled' && checkpoints.status === 'fulfilled') {
      let divergence = 0n;
      for (const [partition, off] of commits) {
        const cp = checkpoints.value.get(partition) ?? 0n;
        if (off > cp) divergence += off - cp;
      }
      metrics.checkpointDivergence.set(Number(divergence));
    } else {
      metrics.checkpointDivergence.set(Number.NaN);
    }
    metrics.defaultRows.set(defaults.status === 'fulfilled' ? defaults.value : Number.NaN);
  }

  private bounded<T>(p: Promise<T>): Promise<T> {
    return withTimeout(p, this.opts.requestTimeoutMs, 'probe request');
  }
}
