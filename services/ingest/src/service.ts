/**
 * Builds the ingestion service from configuration: producer (boot probe, then periodic probes),
 * broker reachability, the `INGEST_MAX_EVENT_BYTES` check, verifier, meters, rules and the app.
 * `main.ts` adds the listener, telemetry and signal handling; the tests, e2e and the benchmarks call this too.
 */
import {
  EventProducer,
  type MessageLimitReader,
  messageLimitReader,
  type ProducerConfig,
} from '@event-observatory/broker';
import { type AuthConfig, createVerifier } from '@event-observatory/service-kit/auth';
import { down, up } from '@event-observatory/service-kit/health';
import type { Logger } from '@event-observatory/service-kit/logger';
import type { Registry } from 'prom-client';
import { InFlightBudget } from './admission.js';
import { buildApp } from './app.js';
import { createBatchIngestor } from './batch.js';
import { BrokerReachability } from './broker-reachability.js';
import { GradientLimit } from './concurrency-limit.js';
import type { IngestConfig } from './config.js';
import { earlyRefusal } from './early-refusal.js';
import { EventAdmission } from './event-admission.js';
import { createIngestor } from './ingest.js';
import { KnownTypes } from './known-types.js';
import { OwnQueueing } from './loop-delay.js';
import { MaxEventBytesCheck } from './max-event-bytes-check.js';
import { createIngestMeters, registerEventLimitGauges } from './metrics.js';

/** What the service needs of its producer (`EventProducer` unless replaced). */
export type IngestProducer = Pick<EventProducer, 'publish' | 'probe' | 'startProbing' | 'close'>;

/**
 * The service's two Kafka clients: the producer and the reader of the topic's `max.message.bytes`.
 * Replaced to measure the HTTP path without a broker (bench/ingest/cost.ts).
 */
export interface BrokerClients {
  /**
   * Builds the producer; it reports every reachability outcome (sends and probes) to `onOutcome`,
   * a failure with its reason.
   */
  producer(onOutcome: (reachable: boolean, reason?: string) => void): IngestProducer;
  messageLimit: MessageLimitReader;
}

export interface IngestServiceOptions {
  config: IngestConfig;
  broker: ProducerConfig;
  auth: AuthConfig;
  registry: Registry;
  logger: Logger;
  /** Service clock in epoch ms (tests move it); default `Date.now`. */
  now?: () => number;
  /** Default: an `EventProducer` and a `messageLimitReader` on `broker`. */
  brokerClients?: BrokerClients;
}

export type IngestService = Awaited<ReturnType<typeof createIngestService>>;

/**
 * Composes the service and runs its start checks: the verifier's key set fetched (a key set that
 * cannot be fetched throws `KeySetError`), one broker probe (its outcome only sets readiness) and one read of the topic's `max.message.bytes`, which throws a `ConfigError` naming
 * both numbers when `INGEST_MAX_EVENT_BYTES` does not fit it.
 *
 * @example
 * const service = await createIngestService({ config, broker, auth, registry, logger });
 * const server = await serveApp(service.app, { host: config.host, port: config.port, preempt: service.preempt });
 * installShutdown({ steps: [{ name: 'listener', run: () => server.close() }, ...service.shutdownSteps()], ... });
 */
export async function createIngestService(opts: IngestServiceOptions) {
  const { config, broker, logger, registry } = opts;
  // First: a key set that cannot be fetched refuses the start before any client is made.
  const verifier = createVerifier(opts.auth, { registry, logger });
  await verifier.start();
  const reachability = new BrokerReachability(logger);
  const onOutcome = (ok: boolean, reason?: string) => reachability.observe(ok, reason);
  const producer =
    opts.brokerClients?.producer(onOutcome) ??
    new EventProducer({ config: broker, registry, logger, onOutcome });
  const maxEventBytes = new MaxEventBytesCheck({
    maxEventBytes: config.maxEventBytes,
    topic: broker.topic,
    limit: opts.brokerClients?.messageLimit ?? messageLimitReader(broker),
    intervalMs: broker.probeIntervalMs,
  });
  const meters = createIngestMeters(registry);
  const ingestor = createIngestor({
    producer,
    limits: config,
    meters,
    knownTypes: new KnownTypes(config.knownTypes),
    ...(opts.now ? { now: opts.now } : {}),
  });
  // Never above the producer's queue: an admitted event is then not refused for `queue-full`.
  const eventLimit = new GradientLimit({
    min: Math.min(config.minInflightEvents, broker.queueCapacity),
    max: broker.queueCapacity,
    tolerance: config.latencyTolerance,
    queueDelayTarget: config.queueDelayTargetMs,
  });
  registerEventLimitGauges(registry, eventLimit);
  // Sampled only while events are in flight: an idle service spends no CPU on it.
  const queueing = new OwnQueueing(
    () => eventLimit.inFlight > 0,
    (delayMs) => eventLimit.queueDelay(delayMs),
  );
  const events = new EventAdmission(eventLimit, config.maxBatchEvents, { onAdmit: () => queueing.wake() });
  const app = buildApp({
    ingestor,
    batch: createBatchIngestor({ ingestor, meters, limits: config }),
    verifier,
    registry,
    limits: config,
    budget: new InFlightBudget(config.maxInflightBytes),
    events,
    checks: {
      broker: () => (reachability.isReachable ? up('reachable') : down('unreachable', reachability.reason)),
      eventCeiling: () => maxEventBytes.readiness(),
      ...verifier.checks,
    },
    version: config.version,
    logger,
  });

  const steps = [
    { name: 'producer', run: () => producer.close(broker.closeTimeoutMs) },
    { name: 'topic limit reader', run: () => maxEventBytes.close() },
    { name: 'key set refresh', run: async () => verifier.close() },
    { name: 'event loop sampling', run: async () => queueing.stop() },
  ];
  const [reachable, misfit] = await Promise.all([producer.probe(), maxEventBytes.check()]);
  if (misfit) {
    for (const step of steps) await step.run();
    throw misfit;
  }
  logger.info(
    {
      broker: reachable ? 'reachable' : 'unreachable',
      topic: broker.topic,
      eventCeiling: maxEventBytes.readiness().value,
    },
    'boot probe',
  );
  producer.startProbing();
  maxEventBytes.start();

  return {
    app,
    /** `serveApp`'s `preempt`: events and batches refused before the app when the event limit is full. */
    preempt: earlyRefusal({
      events,
      maxEventBytes: config.maxEventBytes,
      maxBatchBytes: config.maxBatchBytes,
      rejected: (err) => ingestor.rejected(err),
    }),
    producer,
    reachability,
    /** Shutdown steps after the listener: drain the producer (spec order), stop the limit reads. */
    shutdownSteps: () => steps,
    async close() {
      for (const step of steps) await step.run();
    },
  };
}
