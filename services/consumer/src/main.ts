/**
 * Entry point: configuration -> telemetry -> service -> listeners (probes on HTTP_PORT, the admin
 * API on ADMIN_PORT, the meters on METRICS_PORT) -> shutdown. Wiring only.
 */
import {
  authConfigFromEnv,
  createLogger,
  createMetrics,
  installShutdown,
  readListenerTimeouts,
  runMain,
  serveApp,
  serveMetrics,
  startTracing,
} from '@event-observatory/service-kit';
import { databaseUrlFromEnv } from '@event-observatory/store';
import { ADMIN_SCOPE, readConsumerConfig } from './config.js';
import { createConsumerService } from './service.js';
import { consumerShutdown } from './shutdown.js';

await runMain(async () => {
  const config = readConsumerConfig(process.env);
  const timeouts = readListenerTimeouts(process.env);
  const auth = authConfigFromEnv(process.env, { defaultScope: ADMIN_SCOPE, prefix: 'ADMIN_AUTH' });
  const databaseUrl = databaseUrlFromEnv(process.env);
  const tracing = startTracing({ service: 'consumer', version: config.serviceVersion, env: process.env });
  const logger = createLogger({ service: 'consumer', level: config.logLevel });
  // The admin audit trail is written whatever LOG_LEVEL says.
  const audit = createLogger({ service: 'consumer', level: 'info' });
  const { registry } = createMetrics({ service: 'consumer', version: config.serviceVersion });
  const service = await createConsumerService({ config, databaseUrl, auth, registry, logger, audit });
  const host = config.httpHost;
  const server = await serveApp(service.app, { host, port: config.httpPort, timeouts });
  const admin = await serveApp(service.adminApp, { host, port: config.adminPort, timeouts });
  const metrics = await serveMetrics(registry, { host, port: config.metricsPort, timeouts });
  logger.info({ url: server.url, adminUrl: admin.url, metricsUrl: metrics.url }, 'admin listener up');
  await service.start();
  installShutdown({
    ...consumerShutdown(
      {
        listener: () => Promise.all([admin.close(), server.close()]),
        ...service.closers,
        metricsListener: () => metrics.close(),
        telemetry: () => tracing.shutdown(),
      },
      { drainTimeoutMs: config.drainTimeoutMs, log: logger },
    ),
    logger,
  });
});
