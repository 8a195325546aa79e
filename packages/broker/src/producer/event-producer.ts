/**
 * The event producer: a bounded hand-over queue (`queue.ts`), one sender (`sender.ts`), and a hard
 * delivery deadline enforced by fencing the kafkajs producer that missed it (`fenceable-client.ts`);
 * the readiness probe in `prober.ts`, the partition of a key in `partitions.ts`. Why it is built
 * this way: packages/broker/DESIGN.md.
 *
 * Guarantees (what a caller may rely on):
 *
 * - **Durability**: records are sent with acknowledgement from all in-sync replicas (`acks=-1`)
 *   by an idempotent kafkajs producer with one request in flight; a publish resolves only after
 *   the broker acknowledged it, with the partition and offset it got. Overrides cannot change
 *   this (see `config/producer.ts`).
 * - **Order**: one sender takes records from one FIFO queue and sends them one batch at a time,
 *   so acknowledged records with the same key are in the log in the order `publish` was called.
 * - **Backpressure**: at most `BROKER_QUEUE_CAPACITY` records, and at most `BROKER_QUEUE_BYTES`
 *   of record bytes, are queued or in flight; beyond either `publish` rejects at once with
 *   `queue-full` and the record is never sent.
 * - **Deadline**: every publish settles within `BROKER_DELIVERY_TIMEOUT` of the call (plus timer
 *   jitter). A record whose deadline passes while it is still queued is failed without being
 *   sent. Connecting and fetching metadata are bounded by `BROKER_MAX_BLOCK`.
 * - **No silent late success**: kafkajs retries an idempotent send almost forever and
 *   reconnects by itself. When a batch reaches its deadline, the `FenceableProducer` that
 *   carried it (kafkajs client, producer, admin and every socket they opened) is fenced: its
 *   sockets are destroyed at once, and its socket factory refuses to open new ones, so no retry
 *   of that batch can reach the broker after the deadline; the next batch uses a new producer
 *   (new producer id). A batch that fails with a broker error retires its producer too:
 *   kafkajs rolls back the sequence numbers of the whole request, and reusing that producer id
 *   could make the broker take the next batch for a duplicate of the failed one. What remains
 *   possible, and is inherent to any network client: a produce
 *   request already written to the socket *before* the deadline may have been appended by the
 *   broker although no acknowledgement arrived in time. Such a record was answered 503, the
 *   client retries it, and the consumer's dedup on (time, source, id) makes the duplicate
 *   harmless. If the abandoned send's acknowledgement does arrive (a race of microseconds), it
 *   is logged as a warning with the record count, never silently reported as success. kafkajs'
 *   own retry budget is also bounded (`retries` derived from the timeouts) so its promise ends.
 *
 * Metric: `broker_produce_latency_seconds{topic,outcome}` (1 ms to 2.5 s ladder), one sample per
 * record from hand-over to settlement; outcome `success` or `failure` (timeout, broker error,
 * expired in queue, closed). A `queue-full` refusal never reached the producer and is not a sample.
 */
import type { Logger } from '@event-observatory/service-kit/logger';
import { createTimer, ladders, type Timer } from '@event-observatory/service-kit/metrics';
import { settleWithin, TIMED_OUT } from '@event-observatory/service-kit/resilience';
import { injectTraceContext, inSpan } from '@event-observatory/service-kit/tracing';
import { SpanKind } from '@opentelemetry/api';
import type { Registry } from 'prom-client';
import type { ProducerConfig } from '../config/producer.js';
import { recordFramingBytes } from '../message-limit.js';
import { PartitionCache } from './partitions.js';
import { Prober } from './prober.js';
import { SendQueue } from './queue.js';
import { type OutboundRecord, PublishError, type PublishReceipt } from './record.js';
import { Sender } from './sender.js';

export interface EventProducerOptions {
  config: ProducerConfig;
  /** Registry for `broker_produce_latency_seconds`; without one nothing is recorded. */
  registry?: Registry;
  logger?: Logger;
  /**
   * Called with every piece of evidence about broker reachability (sends and probes); a failure
   * comes with its reason (one line, no secrets).
   */
  onOutcome?: (reachable: boolean, reason?: string) => void;
}

/**
 * Publishes records to `config.topic` (see the module comment for the guarantees).
 *
 * @example
 * ```ts
 * const producer = new EventProducer({ config: readProducerConfig(process.env), registry });
 * await producer.probe();           // boot probe
 * producer.startProbing();          // periodic probe
 * const receipt = await producer.publish(toKafkaRecord(event));
 * await producer.close();           // drain within BROKER_CLOSE_TIMEOUT
 * ```
 */
export class EventProducer {
  readonly topic: string;
  private readonly config: ProducerConfig;
  private readonly queue: SendQueue;
  private readonly sender: Sender;
  private readonly prober: Prober;
  private closing = false;

  constructor(opts: EventProducerOptions) {
    const { config, logger } = opts;
    this.config = config;
    this.topic = config.topic;
    const onOutcome = opts.onOutcome ?? (() => {});
    const latency = opts.registry ? latencyTimer(opts.registry, this.topic) : undefined;
    this.queue = new SendQueue(
      {
        capacity: config.queueCapacity,
        bytes: config.queueBytes,
        maxBatchBytes: config.producer.maxBatchBytes,
      },
      (p, outcome) =>
        latency?.observe({ topic: this.topic, outcome }, (performance.now() - p.startedAt) / 1000),
    );
    const partitions = new PartitionCache(this.topic);
    this.sender = new Sender({ config, queue: this.queue, partitions, logger, onOutcome });
    this.prober = new Prober(config, partitions, onOutcome);
    if (config.ignoredOverrides.length > 0) {
      logger?.warn(
        { ignored: config.ignoredOverrides },
        'BROKER_PRODUCER_OVERRIDES named fixed durability properties; they were ignored',
      );
    }
  }

  /**
   * Hands a record to the sender. Resolves after acknowledgement; rejects with `PublishError`.
   * A PRODUCER span `<topic> publish`, child of the active span, covers hand-over to settlement;
   * its context (`traceparent`, `tracestate`) goes into the record headers, so the consumer's
   * span is its child.
   */
  publish(record: OutboundRecord): Promise<PublishReceipt> {
    return inSpan(
      `${this.topic} publish`,
      {
        kind: SpanKind.PRODUCER,
        attributes: {
          'messaging.system': 'kafka',
          'messaging.operation.type': 'send',
          'messaging.destination.name': this.topic,
        },
      },
      () => this.enqueue(record),
    );
  }

  /** Queues a record under the active (producer) span's trace context. */
  private enqueue(record: OutboundRecord): Promise<PublishReceipt> {
    if (this.closing) {
      return Promise.reject(new PublishError('closed', 'the producer is shutting down', true));
    }
    const full = this.queue.refusal();
    if (full) return Promise.reject(full);
    const headers = injectTraceContext({ ...record.headers });
    // With each record's framing: a produce request of `maxBatchBytes` is then within the topic's
    // `max.message.bytes` whatever the number of records (counted in UTF-16 units: exact for ASCII).
    let size = record.key.length + (record.value?.byteLength ?? 0);
    let count = 0;
    for (const k in headers) {
      size += k.length + headers[k]!.length;
      count++;
    }
    size += recordFramingBytes(count);
    const tooBig = this.queue.refusal(size);
    if (tooBig) return Promise.reject(tooBig);
    const startedAt = performance.now();
    return new Promise<PublishReceipt>((resolve, reject) => {
      this.queue.push({
        record,
        headers,
        size,
        startedAt,
        deadline: startedAt + this.config.deliveryTimeoutMs,
        resolve,
        reject,
      });
    });
  }

  /**
   * Checks the broker answers and the topic has partitions with leaders, within the request
   * timeout. Reports the outcome to `onOutcome`. Concurrent calls share one probe.
   */
  probe(): Promise<boolean> {
    return this.prober.probe();
  }

  /** Probes every `BROKER_PROBE_INTERVAL` until `close`. */
  startProbing(): void {
    if (!this.closing) this.prober.startTimer();
  }

  /**
   * Stops accepting records, waits up to `timeoutMs` (default `BROKER_CLOSE_TIMEOUT`) for the
   * queue and the in-flight batch to settle, fails whatever is left (`closed` if still queued,
   * `timeout` if in flight), then disconnects.
   */
  async close(timeoutMs = this.config.closeTimeoutMs): Promise<void> {
    this.closing = true;
    this.prober.stopTimer();
    if ((await settleWithin(this.queue.idle(), timeoutMs, { ref: true })) === TIMED_OUT) {
      for (const p of this.queue.takeAll())
        this.queue.fail(p, 'closed', 'shutdown drain window elapsed', true);
      this.sender.abortInFlight();
    }
    await Promise.all([this.sender.stop(), this.prober.stop()]);
  }
}

/** `broker_produce_latency_seconds{topic,outcome}`, both outcomes present from the start. */
function latencyTimer(registry: Registry, topic: string): Timer<'topic' | 'outcome'> {
  const timer = createTimer(registry, {
    name: 'broker_produce_latency_seconds',
    help: 'Time from hand-over to broker acknowledgement (outcome failure counts produce errors)',
    labelNames: ['topic', 'outcome'],
    buckets: ladders.brokerProduce,
  });
  timer.zero({ topic, outcome: 'success' });
  timer.zero({ topic, outcome: 'failure' });
  return timer;
}
