/**
 * Wiring only: configuration -> telemetry -> producer (boot probe) -> app -> listener -> shutdown
 * (listener, then producer drain within BROKER_CLOSE_TIMEOUT, then telemetry).
 */
import { EventProducer, readProducerConfig } from '@event-observatory/broker';
import { authConfigFromEnv, createVerifier } from '@event-observatory/service-kit/auth';
import { runMain } from '@event-observatory/service-kit/config';
import { createLogger } from '@event-observatory/service-kit/logger';
import { createMetrics } from '@event-observatory/service-kit/metrics';
import { installShutdown, serveApp } from '@event-observatory/service-kit/server';
import { startTracing } from '@event-observatory/service-kit/tracing';
import { buildApp } from './app.js';
import { readIngestConfig } from './config.js';
import { KnownTypes } from './known-types.js';
import { BrokerBelief } from './readiness.js';

runMain(async () => {
  const cfg = readIngestConfig(process.env);
  const broker = readProducerConfig(process.env);
  const authConfig = authConfigFromEnv(process.env, { defaultScope: 'events:write' });
  const logger = createLogger({ service: 'ingest', version: cfg.version, level: cfg.logLevel });
  const tracing = startTracing({ service: 'ingest', version: cfg.version });
  const { registry } = createMetrics({ service: 'ingest', version: cfg.version });
  const verifier = createVerifier(authConfig, { registry });
  const belief = new BrokerBelief();
  const producer = new EventProducer({
    config: broker,
    registry,
    logger,
    onOutcome: (ok) => belief.observe(ok),
  });
  const reachable = await producer.probe();
  logger.info({ broker: reachable ? 'reachable' : 'unreachable', topic: broker.topic }, 'boot probe');
  producer.startProbing();
  const app = buildApp({
    producer,
    belief,
    verifier,
    registry,
    limits: cfg,
    knownTypes: new KnownTypes(cfg.knownTypes),
    version: cfg.version,
    logger,
  });
  // In-flight requests wait at most for their own delivery deadline, so that bounds the drain.
  const drainMs = broker.deliveryTimeoutMs;
  const server = await serveApp(app, { host: cfg.host, port: cfg.port, drainMs });
  logger.info({ url: server.url, auth: authConfig.enabled }, 'listening');
  installShutdown({
    steps: [
      { name: 'listener', run: () => server.close() },
      { name: 'producer', run: () => producer.close(broker.closeTimeoutMs) },
      { name: 'telemetry', run: () => tracing.shutdown() },
    ],
    // Listener drain, then the producer's close window plus one last request, then telemetry.
    timeoutMs: drainMs + broker.closeTimeoutMs + broker.requestTimeoutMs + 5_000,
    logger,
  });
});
