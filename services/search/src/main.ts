/**
 * Wiring only: configuration (and the login mode) -> telemetry -> service -> listener and metrics
 * listener -> shutdown (live tails, then listener, then pool, then the metrics listener, then
 * telemetry).
 */
import { readListenerTimeouts, runMain } from '@event-observatory/service-kit/config';
import { createLogger } from '@event-observatory/service-kit/logger';
import { createMetrics } from '@event-observatory/service-kit/metrics';
import { installShutdown, serveApp, serveMetrics } from '@event-observatory/service-kit/server';
import { startTracing } from '@event-observatory/service-kit/tracing';
import { databaseUrlFromEnv } from '@event-observatory/store';
import { authenticatorFor } from './auth/index.js';
import { readAuthConfig, readSearchConfig } from './config.js';
import { createSearchService } from './service.js';

runMain(async () => {
  const config = readSearchConfig(process.env);
  const auth = readAuthConfig(process.env);
  const timeouts = readListenerTimeouts(process.env);
  const databaseUrl = databaseUrlFromEnv(process.env);
  const tracing = startTracing({ service: 'search', version: config.version, env: process.env });
  const logger = createLogger({ service: 'search', version: config.version, level: config.logLevel });
  const { registry } = createMetrics({ service: 'search', version: config.version });
  const service = createSearchService({
    config,
    databaseUrl,
    registry,
    logger,
    authenticate: authenticatorFor(auth, {
      logger,
      ...(config.publicUrl ? { publicUrl: config.publicUrl } : {}),
    }),
  });
  // The default drain (10 s) outlasts the keep-alive timeout plus Node's extra second, so idle
  // connections expire as announced before any is cut; a page takes at most its 2 s statements.
  const server = await serveApp(service.app, { host: config.host, port: config.port, timeouts });
  // No Host check there: Prometheus scrapes the pod's address.
  const metrics = await serveMetrics(registry, { host: config.host, port: config.metricsPort, timeouts });
  logger.info({ url: server.url, metricsUrl: metrics.url, allowedHosts: config.allowedHosts }, 'listening');
  installShutdown({
    steps: [
      {
        name: 'listener',
        run: () => {
          service.endTails();
          return server.close();
        },
      },
      { name: 'read pool', run: () => service.close() },
      { name: 'metrics listener', run: () => metrics.close() },
      { name: 'telemetry', run: () => tracing.shutdown() },
    ],
    timeoutMs: 15_000,
    logger,
  });
});
