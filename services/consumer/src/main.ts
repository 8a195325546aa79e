/**
 * Entry point: configuration -> telemetry -> service -> listener -> shutdown. Wiring only.
 */
import {
  authConfigFromEnv,
  createLogger,
  createMetrics,
  installShutdown,
  readListenerTimeouts,
  runMain,
  serveApp,
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
  const server = await serveApp(service.app, { host: config.httpHost, port: config.httpPort, timeouts });
  logger.info({ url: server.url }, 'admin listener up');
  await service.start();
  installShutdown({
    ...consumerShutdown(
      {
        listener: () => server.close(),
        ...service.closers,
        telemetry: () => tracing.shutdown(),
      },
      { drainTimeoutMs: config.drainTimeoutMs, log: logger },
    ),
    logger,
  });
});
