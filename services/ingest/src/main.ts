/**
 * Wiring only: configuration -> telemetry -> service (boot probe, INGEST_MAX_EVENT_BYTES check)
 * -> listener and metrics listener -> shutdown (listener, then producer drain within
 * BROKER_CLOSE_TIMEOUT, then the metrics listener, then telemetry).
 */
import { readProducerConfig } from '@event-observatory/broker';
import { authConfigFromEnv } from '@event-observatory/service-kit/auth';
import { readListenerTimeouts, runMain } from '@event-observatory/service-kit/config';
import { createLogger } from '@event-observatory/service-kit/logger';
import { createMetrics } from '@event-observatory/service-kit/metrics';
import { installShutdown, serveApp, serveMetrics } from '@event-observatory/service-kit/server';
import { startTracing } from '@event-observatory/service-kit/tracing';
import { readIngestConfig } from './config.js';
import { createIngestService } from './service.js';

runMain(async () => {
  const config = readIngestConfig(process.env);
  const timeouts = readListenerTimeouts(process.env);
  const broker = readProducerConfig(process.env);
  const auth = authConfigFromEnv(process.env, { defaultScope: 'events:write' });
  const logger = createLogger({ service: 'ingest', version: config.version, level: config.logLevel });
  const tracing = startTracing({ service: 'ingest', version: config.version, env: process.env });
  const { registry } = createMetrics({ service: 'ingest', version: config.version });
  const service = await createIngestService({ config, broker, auth, registry, logger });
  // In-flight requests wait at most for their own delivery deadline, so that bounds the drain.
  const drainMs = broker.deliveryTimeoutMs;
  const server = await serveApp(service.app, {
    host: config.host,
    port: config.port,
    timeouts,
    drainMs,
    preempt: service.preempt,
  });
  const metrics = await serveMetrics(registry, { host: config.host, port: config.metricsPort, timeouts });
  logger.info({ url: server.url, metricsUrl: metrics.url, auth: auth.enabled }, 'listening');
  installShutdown({
    steps: [
      { name: 'listener', run: () => server.close() },
      ...service.shutdownSteps(),
      { name: 'metrics listener', run: () => metrics.close() },
      { name: 'telemetry', run: () => tracing.shutdown() },
    ],
    // Listener drain, then the producer's close window plus one last request, then the metrics
    // listener (1 s at most) and telemetry.
    timeoutMs: drainMs + broker.closeTimeoutMs + broker.requestTimeoutMs + 5_000,
    logger,
  });
});
