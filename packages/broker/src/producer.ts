/**
 * The event producer: a bounded hand-over queue, one sender, and a hard delivery deadline.
 *
 * Guarantees (what a caller may rely on):
 *
 * - **Durability**: records are sent with acknowledgement from all in-sync replicas (`acks=-1`)
 *   by an idempotent kafkajs producer with one request in flight; a publish resolves only after
 *   the broker acknowledged it, with the partition and offset it got. Overrides cannot change
 *   this (see `config.ts`).
 * - **Order**: one sender takes records from one FIFO queue and sends them one batch at a time,
 *   so acknowledged records with the same key are in the log in the order `publish` was called.
 * - **Backpressure**: at most `BROKER_QUEUE_CAPACITY` records, and at most `BROKER_QUEUE_BYTES`
 *   of record bytes, are queued or in flight; beyond either `publish` rejects at once with
 *   `queue-full` and the record is never sent.
 * - **Deadline**: every publish settles within `BROKER_DELIVERY_TIMEOUT` of the call (plus timer
 *   jitter). A record whose deadline passes while it is still queued is failed without being
 *   sent. Connecting and fetching metadata are bounded by `BROKER_MAX_BLOCK`.
 * - **No silent late success**: kafkajs retries an idempotent send almost forever and
 *   reconnects by itself. When a batch reaches its deadline, the producer *generation* that
 *   carried it (kafkajs client, producer, admin and every socket they opened) is fenced: its
 *   sockets are destroyed at once, and its socket factory refuses to open new ones, so no retry
 *   of that batch can reach the broker after the deadline; the next batch uses a new generation
 *   (new producer id). A batch that fails with a broker error retires its generation too:
 *   kafkajs rolls back the sequence numbers of the whole request, and reusing that producer id
 *   could make the broker take the next batch for a duplicate of the failed one. What remains possible, and is inherent to any network client: a produce
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
import net from 'node:net';
import { performance } from 'node:perf_hooks';
import { createTimer, ladders, type Timer } from '@event-observatory/service-kit/metrics';
import { trace } from '@opentelemetry/api';
import {
  type Admin,
  CompressionTypes,
  type ISocketFactory,
  Kafka,
  type LogEntry,
  logLevel,
  Partitioners,
  type Producer,
  type RecordMetadata,
} from 'kafkajs';
import type { Registry } from 'prom-client';
import { FIXED_PRODUCER_PROPERTIES, type ProducerConfig } from './config/producer.js';

/** One record to publish (as `@event-observatory/events` `toKafkaRecord` makes it). */
export interface OutboundRecord {
  key: string;
  value: Buffer | null;
  headers: Record<string, string>;
}

/** Where an acknowledged record landed. `offset` is an int64 in decimal. */
export interface PublishReceipt {
  topic: string;
  partition: number;
  offset: string;
  key: string;
}

/**
 * Why a publish failed. All of them mean "not known to be durable; retry later" (HTTP 503):
 * `queue-full` (refused, never sent), `timeout` (deadline passed), `unavailable` (broker error or
 * unreachable), `closed` (producer shutting down).
 */
export type PublishFailure = 'queue-full' | 'timeout' | 'unavailable' | 'closed';

export class PublishError extends Error {
  override readonly name = 'PublishError';
  constructor(
    readonly kind: PublishFailure,
    message: string,
    /** True when the record was certainly not written (refused or expired before sending). */
    readonly notSent: boolean,
  ) {
    super(message);
  }
}

/** Minimal logger (pino-compatible). */
export interface ProducerLogger {
  warn(obj: object, msg: string): void;
  info(obj: object, msg: string): void;
}

export interface EventProducerOptions {
  config: ProducerConfig;
  /** Registry for `broker_produce_latency_seconds`; without one nothing is recorded. */
  registry?: Registry;
  logger?: ProducerLogger;
  /** Called with every piece of evidence about broker reachability (sends and probes). */
  onOutcome?: (reachable: boolean) => void;
}

interface Pending {
  record: OutboundRecord;
  headers: Record<string, string>;
  size: number;
  startedAt: number;
  deadline: number;
  resolve: (r: PublishReceipt) => void;
  reject: (e: PublishError) => void;
}

/** A kafkajs client and the sockets it opened; fencing makes it unable to send anything more. */
class Generation {
  fenced = false;
  connected = false;
  readonly kafka: Kafka;
  readonly producer: Producer;
  readonly admin: Admin;
  private readonly sockets = new Set<net.Socket>();

  constructor(
    config: ProducerConfig,
    retries: number,
    logger: ProducerLogger | undefined,
    withProducer: boolean,
  ) {
    const socketFactory: ISocketFactory = ({ host, port, onConnect }) => {
      if (this.fenced) {
        const refused = new net.Socket();
        process.nextTick(() =>
          refused.destroy(new Error('producer generation fenced after a delivery timeout')),
        );
        return refused;
      }
      const socket = net.connect({ host, port }, onConnect);
      socket.setKeepAlive(true, 60_000);
      socket.setNoDelay(true);
      this.sockets.add(socket);
      socket.once('close', () => this.sockets.delete(socket));
      return socket;
    };
    const p = config.producer;
    const retry = { retries, initialRetryTime: p.initialRetryTime, maxRetryTime: p.maxRetryTime };
    this.kafka = new Kafka({
      clientId: p.clientId,
      brokers: config.bootstrapServers,
      connectionTimeout: Math.min(p.connectionTimeout, config.maxBlockMs),
      requestTimeout: config.requestTimeoutMs,
      enforceRequestTimeout: true,
      retry,
      socketFactory,
      logLevel: logLevel.ERROR,
      logCreator: () => (entry: LogEntry) => {
        if (this.fenced || !logger) return;
        logger.warn({ kafkajs: entry.namespace, error: entry.log.error }, entry.log.message);
      },
    });
    this.producer = withProducer
      ? this.kafka.producer({
          idempotent: FIXED_PRODUCER_PROPERTIES.idempotent,
          maxInFlightRequests: FIXED_PRODUCER_PROPERTIES.maxInFlightRequests,
          allowAutoTopicCreation: FIXED_PRODUCER_PROPERTIES.allowAutoTopicCreation,
          metadataMaxAge: p.metadataMaxAge,
          createPartitioner: Partitioners.DefaultPartitioner,
          retry,
        })
      : (undefined as unknown as Producer);
    this.admin = this.kafka.admin({ retry: { retries: 0 } });
  }

  fence(): void {
    this.fenced = true;
    for (const s of this.sockets) s.destroy();
    this.sockets.clear();
    this.producer?.disconnect().catch(() => {});
    this.admin.disconnect().catch(() => {});
  }
}

type Race<T> = { kind: 'value'; value: T } | { kind: 'error'; error: unknown } | { kind: 'timeout' };

/** Waits for `promise` at most `ms`; `abort()` ends the wait as a timeout. */
function raceDeadline<T>(promise: Promise<T>, ms: number): { result: Promise<Race<T>>; abort: () => void } {
  let abort = () => {};
  const result = new Promise<Race<T>>((resolve) => {
    const timer = setTimeout(() => resolve({ kind: 'timeout' }), Math.max(0, ms));
    abort = () => {
      clearTimeout(timer);
      resolve({ kind: 'timeout' });
    };
    promise.then(
      (value) => {
        clearTimeout(timer);
        resolve({ kind: 'value', value });
      },
      (error: unknown) => {
        clearTimeout(timer);
        resolve({ kind: 'error', error });
      },
    );
  });
  return { result, abort };
}

/** The W3C `traceparent` of the active span, captured where `publish` is called. */
export function activeTraceparent(): string | undefined {
  const span = trace.getActiveSpan();
  if (!span) return undefined;
  const ctx = span.spanContext();
  if (!trace.isSpanContextValid(ctx)) return undefined;
  return `00-${ctx.traceId}-${ctx.spanId}-${(ctx.traceFlags & 0xff).toString(16).padStart(2, '0')}`;
}

/**
 * kafkajs retries for an idempotent send: as many attempts (each bounded by the request timeout,
 * separated by at most `maxRetryTime`) as fit in the delivery timeout, at least 1 (kafkajs
 * refuses 0 for an idempotent producer).
 */
export function kafkajsRetries(config: ProducerConfig): number {
  const per = config.requestTimeoutMs + config.producer.maxRetryTime;
  return Math.max(1, Math.floor((config.deliveryTimeoutMs - config.requestTimeoutMs) / per));
}

/**
 * Publishes records to `config.topic` (see the module comment for the guarantees).
 *
 * @example
 * ```ts
 * const producer = new EventProducer({ config: brokerConfigFromEnv(process.env), registry });
 * await producer.probe();           // boot probe
 * producer.startProbing();          // periodic probe
 * const receipt = await producer.publish(toKafkaRecord(event));
 * await producer.close();           // drain within BROKER_CLOSE_TIMEOUT
 * ```
 */
export class EventProducer {
  readonly topic: string;
  private readonly config: ProducerConfig;
  private readonly retries: number;
  private readonly latency: Timer<'topic' | 'outcome'> | undefined;
  private readonly logger: ProducerLogger | undefined;
  private readonly onOutcome: (reachable: boolean) => void;
  private readonly partitioner = Partitioners.DefaultPartitioner();
  private readonly partitionCache = new Map<string, number>();
  private partitionCacheCount = 0;
  private readonly queue: Pending[] = [];
  /** Sum of `size` over `queue` (records waiting, not yet taken by the sender). */
  private queuedBytes = 0;
  private outstanding = 0;
  private outstandingBytes = 0;
  private partitionCount = 0;
  private gen: Generation | undefined;
  private probeGen: Generation | undefined;
  private probing: Promise<boolean> | undefined;
  private probeTimer: NodeJS.Timeout | undefined;
  private wake: (() => void) | undefined;
  private idleWaiters: (() => void)[] = [];
  private abortInflight: (() => void) | undefined;
  private closing = false;
  private stopped = false;
  private readonly loop: Promise<void>;

  constructor(opts: EventProducerOptions) {
    this.config = opts.config;
    this.topic = opts.config.topic;
    this.retries = kafkajsRetries(opts.config);
    this.logger = opts.logger;
    this.onOutcome = opts.onOutcome ?? (() => {});
    this.latency = opts.registry
      ? createTimer(opts.registry, {
          name: 'broker_produce_latency_seconds',
          help: 'Time from hand-over to broker acknowledgement (outcome failure counts produce errors)',
          labelNames: ['topic', 'outcome'],
          buckets: ladders.brokerProduce,
        })
      : undefined;
    this.latency?.zero({ topic: this.topic, outcome: 'success' });
    this.latency?.zero({ topic: this.topic, outcome: 'failure' });
    if (opts.config.ignoredOverrides.length > 0) {
      this.logger?.warn(
        { ignored: opts.config.ignoredOverrides },
        'BROKER_PRODUCER_OVERRIDES named fixed durability properties; they were ignored',
      );
    }
    this.loop = this.run();
  }

  /** Records queued or in flight. */
  get pending(): number {
    return this.outstanding;
  }

  /**
   * Hands a record to the sender. Resolves after acknowledgement; rejects with `PublishError`.
   * The `traceparent` of the active span is added to the record headers here, on the caller's
   * context.
   */
  publish(record: OutboundRecord): Promise<PublishReceipt> {
    if (this.closing) {
      return Promise.reject(new PublishError('closed', 'the producer is shutting down', true));
    }
    if (this.outstanding >= this.config.queueCapacity) {
      return Promise.reject(
        new PublishError('queue-full', `the send queue is full (${this.config.queueCapacity} records)`, true),
      );
    }
    const traceparent = activeTraceparent();
    const headers = traceparent === undefined ? record.headers : { ...record.headers, traceparent };
    let size = record.key.length + (record.value?.byteLength ?? 0);
    for (const k in headers) size += k.length + headers[k]!.length;
    if (this.outstandingBytes + size > this.config.queueBytes && this.outstanding > 0) {
      return Promise.reject(
        new PublishError('queue-full', `the send queue is full (${this.config.queueBytes} bytes)`, true),
      );
    }
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
      this.outstanding++;
      this.outstandingBytes += size;
      this.queuedBytes += size;
      const wake = this.wake;
      this.wake = undefined;
      wake?.();
    });
  }

  /**
   * Checks the broker answers and the topic has partitions with leaders, within the request
   * timeout. Reports the outcome to `onOutcome`. Concurrent calls share one probe.
   */
  probe(): Promise<boolean> {
    this.probing ??= this.runProbe().finally(() => {
      this.probing = undefined;
    });
    return this.probing;
  }

  /** Probes every `BROKER_PROBE_INTERVAL` until `close`. */
  startProbing(): void {
    if (this.probeTimer || this.closing) return;
    this.probeTimer = setInterval(() => void this.probe(), this.config.probeIntervalMs);
    this.probeTimer.unref();
  }

  /**
   * Stops accepting records, waits up to `timeoutMs` (default `BROKER_CLOSE_TIMEOUT`) for the
   * queue and the in-flight batch to settle, fails whatever is left with `closed`, then
   * disconnects.
   */
  async close(timeoutMs = this.config.closeTimeoutMs): Promise<void> {
    this.closing = true;
    if (this.probeTimer) clearInterval(this.probeTimer);
    this.probeTimer = undefined;
    if (this.outstanding > 0) {
      const drained = new Promise<void>((resolve) => this.idleWaiters.push(resolve));
      const { result } = raceDeadline(drained, timeoutMs);
      if ((await result).kind === 'timeout') {
        this.queuedBytes = 0;
        for (const p of this.queue.splice(0)) this.fail(p, 'closed', 'shutdown drain window elapsed', true);
        this.abortInflight?.();
      }
    }
    this.stopped = true;
    this.wake?.();
    await this.loop;
    const gens = [this.gen, this.probeGen].filter((g): g is Generation => g !== undefined);
    this.gen = undefined;
    this.probeGen = undefined;
    await Promise.all(
      gens.map(async (g) => {
        const { result } = raceDeadline(
          Promise.all([g.producer?.disconnect(), g.admin.disconnect()]),
          this.config.requestTimeoutMs,
        );
        await result;
        g.fence();
      }),
    );
  }

  private async runProbe(): Promise<boolean> {
    if (this.stopped) return false;
    if (!this.probeGen || this.probeGen.fenced) {
      this.probeGen = new Generation(this.config, this.retries, undefined, false);
    }
    const gen = this.probeGen;
    const attempt = (async () => {
      await gen.admin.connect();
      return gen.admin.fetchTopicMetadata({ topics: [this.topic] });
    })();
    const { result } = raceDeadline(attempt, this.config.requestTimeoutMs);
    const r = await result;
    const partitions = r.kind === 'value' ? (r.value.topics[0]?.partitions ?? []) : [];
    const ok = partitions.length > 0 && partitions.every((p) => p.leader >= 0);
    if (ok) {
      this.partitionCount = Math.max(this.partitionCount, partitions.length);
    } else {
      gen.fence();
      if (this.probeGen === gen) this.probeGen = undefined;
      attempt.catch(() => {});
    }
    if (!this.stopped) this.onOutcome(ok);
    return ok;
  }

  private async run(): Promise<void> {
    for (;;) {
      if (this.queue.length === 0) {
        if (this.stopped) return;
        await new Promise<void>((resolve) => {
          this.wake = resolve;
        });
        continue;
      }
      // Linger lets more records join a send (fewer, larger produce requests: far less CPU per
      // record in kafkajs and in the broker). As Kafka's linger.ms, it counts from the oldest
      // waiting record's hand-over, so records that queued during the previous send go at once;
      // pointless once a full batch is already waiting.
      if (this.config.lingerMs > 0 && this.queuedBytes < this.config.producer.maxBatchBytes) {
        const wait = this.queue[0]!.startedAt + this.config.lingerMs - performance.now();
        // Whole milliseconds: Node keeps one timer list per distinct duration.
        if (wait >= 1) await new Promise((r) => setTimeout(r, Math.ceil(wait)));
      }
      const batch = this.takeBatch();
      await this.sendBatch(batch);
    }
  }

  private takeBatch(): Pending[] {
    let bytes = 0;
    let n = 0;
    while (n < this.queue.length) {
      bytes += this.queue[n]!.size;
      if (n > 0 && bytes > this.config.producer.maxBatchBytes) break;
      n++;
    }
    const batch = this.queue.splice(0, n);
    for (const p of batch) this.queuedBytes -= p.size;
    return batch;
  }

  private settle(p: Pending, outcome: 'success' | 'failure'): void {
    this.latency?.observe({ topic: this.topic, outcome }, (performance.now() - p.startedAt) / 1000);
    this.outstanding--;
    this.outstandingBytes -= p.size;
    if (this.outstanding === 0) for (const w of this.idleWaiters.splice(0)) w();
  }

  private fail(p: Pending, kind: PublishFailure, message: string, notSent: boolean): void {
    this.settle(p, 'failure');
    p.reject(new PublishError(kind, message, notSent));
  }

  private async connectGeneration(deadline: number): Promise<Generation> {
    if (this.gen && !this.gen.fenced && this.gen.connected) return this.gen;
    const gen =
      this.gen && !this.gen.fenced ? this.gen : new Generation(this.config, this.retries, this.logger, true);
    this.gen = gen;
    const connect = (async () => {
      await gen.producer.connect();
      if (this.partitionCount === 0) {
        await gen.admin.connect();
        const meta = await gen.admin.fetchTopicMetadata({ topics: [this.topic] });
        this.partitionCount = meta.topics[0]?.partitions.length ?? 0;
      }
      if (this.partitionCount === 0) throw new Error(`topic ${this.topic} has no partitions`);
    })();
    const { result } = raceDeadline(connect, Math.min(this.config.maxBlockMs, deadline - performance.now()));
    const r = await result;
    if (r.kind !== 'value') {
      connect.catch(() => {});
      gen.fence();
      this.gen = undefined;
      throw r.kind === 'error' ? r.error : new Error(`connecting took longer than BROKER_MAX_BLOCK`);
    }
    gen.connected = true;
    return gen;
  }

  /**
   * kafkajs' default partitioner (murmur2 of the key, as the Java client), remembered per key:
   * events of one source (and subject) repeat their key, and hashing it again for every record
   * showed in profiles. Forgotten wholesale when the partition count changes or the map is full.
   */
  private partitionFor(key: string): number {
    if (
      this.partitionCacheCount !== this.partitionCount ||
      this.partitionCache.size >= PARTITION_CACHE_SIZE
    ) {
      this.partitionCache.clear();
      this.partitionCacheCount = this.partitionCount;
    }
    let partition = this.partitionCache.get(key);
    if (partition === undefined) {
      const partitionMetadata = partitionMetadataOf(this.partitionCount);
      partition = this.partitioner({ topic: this.topic, partitionMetadata, message: { key, value: null } });
      this.partitionCache.set(key, partition);
    }
    return partition;
  }

  private async sendBatch(batch: Pending[]): Promise<void> {
    const now = performance.now();
    const live: Pending[] = [];
    for (const p of batch) {
      if (p.deadline <= now)
        this.fail(p, 'timeout', 'delivery timeout elapsed before the record was sent', true);
      else live.push(p);
    }
    if (live.length === 0) return;
    const deadline = live[0]!.deadline; // FIFO: the first record has the earliest deadline
    let gen: Generation;
    try {
      gen = await this.connectGeneration(deadline);
    } catch (err) {
      for (const p of live)
        this.fail(p, 'unavailable', `broker unreachable: ${(err as Error).message}`, true);
      if (!this.stopped) this.onOutcome(false);
      return;
    }
    const messages = live.map((p) => ({
      key: p.record.key,
      value: p.record.value,
      headers: p.headers,
      partition: this.partitionFor(p.record.key),
    }));
    const send = gen.producer.send({
      topic: this.topic,
      acks: FIXED_PRODUCER_PROPERTIES.acks,
      timeout: this.config.requestTimeoutMs,
      compression:
        this.config.producer.compression === 'gzip' ? CompressionTypes.GZIP : CompressionTypes.None,
      messages,
    });
    const { result, abort } = raceDeadline(send, deadline - performance.now());
    this.abortInflight = abort;
    const r = await result;
    this.abortInflight = undefined;
    if (r.kind === 'timeout') {
      gen.fence();
      if (this.gen === gen) this.gen = undefined;
      send.then(
        () =>
          this.logger?.warn(
            { topic: this.topic, records: live.length },
            'broker acknowledged records after they were answered as failed (delivery timeout)',
          ),
        () => {},
      );
      for (const p of live)
        this.fail(p, 'timeout', 'no acknowledgement within BROKER_DELIVERY_TIMEOUT', false);
      if (!this.stopped) this.onOutcome(false);
      return;
    }
    if (r.kind === 'error') {
      // kafkajs rolls back the sequence numbers of every partition of a failed request, even of
      // partitions the broker may already have written. Reusing this producer id could then make
      // the broker take the next batch for a duplicate of the old one (a 200 with another event's
      // offset) or refuse it as out of order forever, so the generation is retired like on timeout.
      gen.fence();
      if (this.gen === gen) this.gen = undefined;
      for (const p of live) this.fail(p, 'unavailable', `broker error: ${(r.error as Error).message}`, false);
      if (!this.stopped) this.onOutcome(false);
      return;
    }
    this.resolveBatch(live, messages, r.value);
    if (!this.stopped) this.onOutcome(true);
  }

  private resolveBatch(live: Pending[], messages: { partition: number }[], meta: RecordMetadata[]): void {
    const base = new Map<number, bigint>();
    for (const m of meta) base.set(m.partition, BigInt(m.baseOffset ?? '-1'));
    const next = new Map<number, bigint>();
    live.forEach((p, i) => {
      const partition = messages[i]!.partition;
      const index = next.get(partition) ?? 0n;
      next.set(partition, index + 1n);
      const offset = (base.get(partition) ?? -1n) + index;
      this.settle(p, 'success');
      p.resolve({ topic: this.topic, partition, offset: offset.toString(), key: p.record.key });
    });
  }
}

/** Keys whose partition `EventProducer` remembers at most. */
const PARTITION_CACHE_SIZE = 10_000;

const metadataCache = new Map<number, { partitionId: number; leader: number }[]>();

function partitionMetadataOf(count: number) {
  let m = metadataCache.get(count);
  if (!m) {
    m = Array.from({ length: count }, (_, i) => ({ partitionId: i, leader: 0 }));
    metadataCache.set(count, m);
  }
  return m as unknown as Parameters<
    ReturnType<typeof Partitioners.DefaultPartitioner>
  >[0]['partitionMetadata'];
}
