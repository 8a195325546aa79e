/**
 * The one sender: takes batches from the queue in order, lingers for more records, connects a
 * fenceable producer (bounded by `BROKER_MAX_BLOCK`), and waits for each send at most until the
 * batch's delivery deadline. A batch that misses its deadline, or fails with a broker error,
 * retires its producer (fenced) so nothing of it reaches the broker later; the next batch connects
 * a new one.
 */

import { setTimeout as sleep } from 'node:timers/promises';
import type { Logger } from '@event-observatory/service-kit/logger';
import { settleWithin, TIMED_OUT } from '@event-observatory/service-kit/resilience';
import { brokerFailureReason } from '../clients/failure.js';
import type { ProducerConfig } from '../config/producer.js';
import { FenceableProducer, type OutboundMessage } from './fenceable-client.js';
import type { PartitionCache } from './partitions.js';
import type { Pending, SendQueue } from './queue.js';

export interface SenderOptions {
  config: ProducerConfig;
  queue: SendQueue;
  partitions: PartitionCache;
  logger?: Logger | undefined;
  /** Evidence about broker reachability from each send; when unreachable, why. */
  onOutcome: (reachable: boolean, reason?: string) => void;
}

export class Sender {
  private producer: FenceableProducer | undefined;
  /** The producer being connected, shared by the batches that wait for it (see `connect`). */
  private connecting: { producer: FenceableProducer; done: Promise<void>; startedAt: number } | undefined;
  private stopped = false;
  /** Aborted by `abortInFlight`: ends the wait for the batch in flight (shutdown). */
  private readonly cut = new AbortController();
  private readonly done: Promise<void>;

  constructor(private readonly opts: SenderOptions) {
    this.done = this.run();
  }

  /** Gives up the batch in flight now: it fails as timed out and its producer is fenced. */
  abortInFlight(): void {
    this.cut.abort();
  }

  /** Sends what is still queued, then disconnects (at most a request timeout) and fences. */
  async stop(): Promise<void> {
    this.stopped = true;
    this.opts.queue.interrupt();
    await this.done;
    await this.producer?.close(this.opts.config.requestTimeoutMs);
    this.producer = undefined;
  }

  private report(reachable: boolean, reason?: string): void {
    if (!this.stopped) this.opts.onOutcome(reachable, reason);
  }

  private async run(): Promise<void> {
    const { queue, config } = this.opts;
    for (;;) {
      if (queue.isEmpty) {
        if (this.stopped) return;
        await queue.nextPush();
        continue;
      }
      // Linger lets more records join a send (fewer, larger produce requests: far less CPU per
      // record in the client and in the broker). As Kafka's linger.ms, it counts from the oldest
      // waiting record's hand-over, so records that queued during the previous send go at once;
      // pointless once a full batch is already waiting.
      if (config.lingerMs > 0 && !queue.hasFullBatch) {
        const wait = queue.oldestStartedAt + config.lingerMs - performance.now();
        // Whole milliseconds: Node keeps one timer list per distinct duration.
        if (wait >= 1) await sleep(Math.ceil(wait));
      }
      await this.send(queue.take());
    }
  }

  private async send(batch: Pending[]): Promise<void> {
    const { queue, config, partitions } = this.opts;
    const now = performance.now();
    const live: Pending[] = [];
    for (const p of batch) {
      if (p.deadline <= now)
        queue.fail(p, 'timeout', 'delivery timeout elapsed before the record was sent', true);
      else live.push(p);
    }
    if (live.length === 0) return;
    const deadline = live[0]!.deadline; // FIFO: the first record has the earliest deadline
    let producer: FenceableProducer;
    try {
      producer = await this.connect(deadline);
    } catch (err) {
      const reason = brokerFailureReason(err, config.security);
      for (const p of live) queue.fail(p, 'unavailable', `broker unreachable: ${reason}`, true);
      this.report(false, reason);
      return;
    }
    const messages: OutboundMessage[] = live.map((p) => ({
      key: p.record.key,
      value: p.record.value,
      headers: p.headers,
      partition: partitions.partitionOf(p.record.key),
    }));
    const sent = producer.send(messages);
    let outcome: Map<number, bigint> | typeof TIMED_OUT;
    try {
      outcome = await settleWithin(sent, deadline - performance.now(), { signal: this.cut.signal });
    } catch (err) {
      // kafkajs rolls back the sequence numbers of every partition of a failed request, even of
      // partitions the broker may already have written. Reusing this producer id could then make
      // the broker take the next batch for a duplicate of the old one (a 200 with another event's
      // offset) or refuse it as out of order forever, so the producer is retired like on timeout.
      this.retire(producer);
      const reason = brokerFailureReason(err, config.security);
      for (const p of live) queue.fail(p, 'unavailable', `broker error: ${reason}`, false);
      this.report(false, reason);
      return;
    }
    if (outcome === TIMED_OUT) {
      this.retire(producer);
      sent.then(
        () =>
          this.opts.logger?.warn(
            { topic: config.topic, records: live.length },
            'broker acknowledged records after they were answered as failed (delivery timeout)',
          ),
        () => {},
      );
      const reason = 'no acknowledgement within BROKER_DELIVERY_TIMEOUT';
      for (const p of live) queue.fail(p, 'timeout', reason, false);
      this.report(false, reason);
      return;
    }
    // kafkajs 2.2.4 can resolve a send without having sent some of its partitions: when a retry
    // finds a partition's leader moved to a broker that answered an earlier attempt, that broker is
    // not asked again and the partition gets no offset (seen in e2e/reliability's three-broker
    // faults as 200s with offset -1, never stored). Those records are not known to be durable, and
    // the producer's sequence numbers for them are no longer trustworthy: retire it.
    const skipped = new Set(
      messages.map((m) => m.partition).filter((part) => (outcome.get(part) ?? -1n) < 0n),
    );
    if (skipped.size > 0) {
      this.retire(producer);
      const reason = `broker error: no acknowledgement for partitions ${[...skipped].join(', ')} (the client's retry skipped them)`;
      this.resolve(
        live.filter((_, i) => !skipped.has(messages[i]!.partition)),
        messages.filter((m) => !skipped.has(m.partition)),
        outcome,
      );
      for (const [i, p] of live.entries())
        if (skipped.has(messages[i]!.partition)) queue.fail(p, 'unavailable', reason, false);
      this.report(false, reason);
      return;
    }
    this.resolve(live, messages, outcome);
    this.report(true);
  }

  /**
   * The connected producer, waiting at most `BROKER_MAX_BLOCK` and the deadline for it. A connect
   * that misses this batch's bound goes on for the next batches: a producer that sent nothing has
   * nothing to deliver late, so it is fenced only when connecting fails (or has taken longer than a
   * delivery timeout). Replacing it at every bound would start the handshake over each time, and a
   * path slower than the bound (a loaded machine, a path that just healed) would never connect.
   */
  private async connect(deadline: number): Promise<FenceableProducer> {
    const { config, partitions, logger } = this.opts;
    if (this.producer?.connected && !this.producer.fenced) return this.producer;
    if (this.connecting && performance.now() - this.connecting.startedAt > config.deliveryTimeoutMs)
      this.retire(this.connecting.producer);
    if (!this.connecting) {
      const producer = new FenceableProducer(config, logger);
      const done = (async () => {
        await producer.connect();
        if (partitions.count === 0)
          partitions.observe((await producer.partitionLeaders(config.topic)).length);
        if (partitions.count === 0) throw new Error(`topic ${config.topic} has no partitions`);
        producer.connected = true;
      })();
      // A failure is told to the batch waiting then, if any; the producer is retired either way.
      done.then(
        () => {
          if (this.connecting?.producer === producer) this.connecting = undefined;
        },
        () => this.retire(producer),
      );
      this.producer = producer;
      this.connecting = { producer, done, startedAt: performance.now() };
    }
    const { producer, done } = this.connecting;
    const outcome = await settleWithin(done, Math.min(config.maxBlockMs, deadline - performance.now()));
    if (outcome === TIMED_OUT) throw new Error('connecting took longer than BROKER_MAX_BLOCK');
    return producer;
  }

  private retire(producer: FenceableProducer): void {
    producer.fence();
    if (this.producer === producer) this.producer = undefined;
    if (this.connecting?.producer === producer) this.connecting = undefined;
  }

  /** Each record's offset: its partition's base offset plus its place among that partition's records. */
  private resolve(live: Pending[], messages: OutboundMessage[], base: Map<number, bigint>): void {
    const { queue, config } = this.opts;
    const next = new Map<number, bigint>();
    live.forEach((p, i) => {
      const partition = messages[i]!.partition;
      const index = next.get(partition) ?? 0n;
      next.set(partition, index + 1n);
      const offset = (base.get(partition) ?? -1n) + index;
      queue.resolve(p, { topic: config.topic, partition, offset: offset.toString(), key: p.record.key });
    });
  }
}
