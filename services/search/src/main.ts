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
import { databaseUrlFromEnv, primaryDatabaseUrlFromEnv } from '@event-observatory/store';
import { bearerSettingsFromEnv, createBearerTokens } from './auth/bearer.js';
import { storedAuthenticatorFor } from './auth/index.js';
import { trustedProxiesFromEnv } from './auth/proxy.js';
import { readAuthConfig, readSearchConfig } from './config.js';
import { rowSecurityGate } from './row-security.js';
import { createSearchService } from './service.js';
import { loadVisibility } from './visibility.js';

runMain(async () => {
  const config = readSearchConfig(process.env);
  const auth = readAuthConfig(process.env);
  const timeouts = readListenerTimeouts(process.env);
  const databaseUrl = databaseUrlFromEnv(process.env);
  const primaryUrl = primaryDatabaseUrlFromEnv(process.env);
  const visibility = loadVisibility(process.env.SEARCH_VISIBILITY_FILE);
  const tracing = startTracing({ service: 'search', version: config.version, env: process.env });
  const logger = createLogger({ service: 'search', version: config.version, level: config.logLevel });
  const { registry } = createMetrics({ service: 'search', version: config.version });
  // Bearer tokens in every mode but off; their key sets are fetched before the listener opens.
  const bearer =
    auth.mode === 'off'
      ? undefined
      : createBearerTokens(bearerSettingsFromEnv(process.env), { registry, logger });
  await bearer?.start();
  // Scopes PostgreSQL would not enforce are worse than none: with rules, or with a login whose
  // viewers see only what rules give them, search reads nothing for a viewer until its role is
  // found subject to them, and stops if it escapes them (packages/store README).
  const stopping = new AbortController();
  const gate =
    visibility.rules.length > 0 || auth.mode === 'oidc' || auth.mode === 'proxy'
      ? rowSecurityGate(logger, stopping.signal)
      : undefined;
  const service = createSearchService({
    config,
    databaseUrl,
    ...(primaryUrl ? { primaryUrl } : {}),
    registry,
    logger,
    visibility,
    // Readiness shows each key set's freshness (up either way: its cached keys go on verifying).
    checks: { ...bearer?.checks, ...(gate ? { rowSecurity: gate.check } : {}) },
    ...(gate ? { serving: gate.serving } : {}),
    authenticate: storedAuthenticatorFor(auth, {
      logger,
      ...(config.publicUrl ? { publicUrl: config.publicUrl } : {}),
      ...(auth.mode === 'proxy' ? { trustedProxies: trustedProxiesFromEnv(process.env) } : {}),
      ...(bearer ? { bearer } : {}),
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
          stopping.abort();
          service.endTails();
          return server.close();
        },
      },
      { name: 'read pool', run: () => service.close() },
      { name: 'key sets', run: async () => bearer?.close() },
      { name: 'metrics listener', run: () => metrics.close() },
      { name: 'telemetry', run: () => tracing.shutdown() },
    ],
    timeoutMs: 15_000,
    logger,
  });
  // Listening, reads refused until then: a role that escapes row-level security stops the
  // service (exit 1).
  await gate?.verify(service.pool).catch((err: unknown) => {
    if (!stopping.signal.aborted) throw err;
  });
});
