/**
 * The metrics listener: a service's meters on a port of their own (`METRICS_PORT`), so a
 * NetworkPolicy can admit a scraper to them without admitting it to the service's API or UI.
 */
import type { Registry } from 'prom-client';
import { metricsApp } from '../metrics/registry.js';
import { type RunningServer, type ServeOptions, serveApp } from './serve.js';

/**
 * A scrape is one short request: on `close()` a connection still open after this long (a
 * scraper's idle keep-alive) is cut, so the metrics listener never holds a shutdown up.
 */
const METRICS_DRAIN_MS = 1_000;

/**
 * Serves `GET /metrics` of `registry`, and nothing else, on its own listener; resolves once the
 * port is bound. `port` is the service's `metricsPort()` field (`METRICS_PORT`, default 9464).
 *
 * @example
 * ```ts
 * const metrics = await serveMetrics(registry, { host: cfg.host, port: cfg.metricsPort, timeouts });
 * installShutdown({ steps: [..., { name: 'metrics listener', run: metrics.close }, ...], logger });
 * ```
 */
export function serveMetrics(registry: Registry, opts: ServeOptions): Promise<RunningServer> {
  return serveApp(metricsApp(registry), { drainMs: METRICS_DRAIN_MS, ...opts });
}
