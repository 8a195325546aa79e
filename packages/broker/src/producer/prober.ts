/**
 * The readiness probe: the broker answers and the topic has partitions with leaders, within the
 * request timeout, on a fenceable client of its own (fenced and replaced after a failed probe).
 */
import { settleWithin, TIMED_OUT } from '@event-observatory/service-kit/resilience';
import { brokerFailureReason } from '../clients/failure.js';
import type { ProducerConfig } from '../config/producer.js';
import { FenceableClient } from './fenceable-client.js';
import type { PartitionCache } from './partitions.js';

export class Prober {
  private client: FenceableClient | undefined;
  private running: Promise<boolean> | undefined;
  private timer: NodeJS.Timeout | undefined;
  private stopped = false;

  constructor(
    private readonly config: ProducerConfig,
    private readonly partitions: PartitionCache,
    /** Each probe's outcome; when unreachable, why (`brokerFailureReason`). */
    private readonly onOutcome: (reachable: boolean, reason?: string) => void,
  ) {}

  /** Concurrent calls share one probe. */
  probe(): Promise<boolean> {
    this.running ??= this.run().finally(() => {
      this.running = undefined;
    });
    return this.running;
  }

  /** Probes every `BROKER_PROBE_INTERVAL` until `stopTimer`. */
  startTimer(): void {
    if (this.timer) return;
    this.timer = setInterval(() => void this.probe(), this.config.probeIntervalMs);
    this.timer.unref();
  }

  stopTimer(): void {
    clearInterval(this.timer);
    this.timer = undefined;
  }

  /** No more probes or outcomes; disconnects (at most a request timeout) and fences. */
  async stop(): Promise<void> {
    this.stopTimer();
    this.stopped = true;
    await this.client?.close(this.config.requestTimeoutMs);
    this.client = undefined;
  }

  private async run(): Promise<boolean> {
    if (this.stopped) return false;
    if (!this.client || this.client.fenced) this.client = new FenceableClient(this.config);
    const client = this.client;
    const attempt = client.partitionLeaders(this.config.topic);
    const reason = await this.check(attempt);
    if (reason === undefined) {
      this.partitions.observe((await attempt).length);
    } else {
      attempt.catch(() => {});
      client.fence();
      if (this.client === client) this.client = undefined;
    }
    if (!this.stopped) this.onOutcome(reason === undefined, reason);
    return reason === undefined;
  }

  /** Why the probe failed, or undefined: every partition of the topic has a leader, in time. */
  private async check(attempt: Promise<number[]>): Promise<string | undefined> {
    const { config } = this;
    try {
      const leaders = await settleWithin(attempt, config.requestTimeoutMs);
      if (leaders === TIMED_OUT)
        return `no answer within BROKER_REQUEST_TIMEOUT (${config.requestTimeoutMs}ms)`;
      if (leaders.length === 0) return `topic ${config.topic} has no partitions`;
      if (leaders.some((leader) => leader < 0)) return `a partition of topic ${config.topic} has no leader`;
      return undefined;
    } catch (err) {
      return brokerFailureReason(err, config.security);
    }
  }
}
