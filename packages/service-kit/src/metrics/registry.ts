import { type Handler, Hono } from 'hono';
import { collectDefaultMetrics, Registry } from 'prom-client';
import { errorHandler, notFoundHandler } from '../errors/index.js';

/** The exposition content type the spec requires, exactly. */
export const METRICS_CONTENT_TYPE = 'text/plain; version=0.0.4; charset=utf-8';

/** `SERVICE_VERSION` when none is set. */
export const UNKNOWN_VERSION = '0.0.0-unknown';

export interface MetricsOptions {
  /** The `service` tag on every meter, e.g. `ingest`. */
  service: string;
  /** The `version` tag on every meter; default `0.0.0-unknown` (read `SERVICE_VERSION` for it). */
  version?: string;
  /** Process and Node.js runtime meters (`process_*`, `nodejs_*`); default true. */
  defaultMetrics?: boolean;
}

export interface Metrics {
  registry: Registry;
  service: string;
  version: string;
}

/**
 * A fresh prom-client registry (never the global one) whose meters all carry the common tags
 * `service` and `version`, with the process and runtime meters registered.
 *
 * @example
 * ```ts
 * const { registry } = createMetrics({ service: 'ingest', version: process.env.SERVICE_VERSION });
 * app.get('/metrics', metricsHandler(registry));
 * ```
 */
export function createMetrics(opts: MetricsOptions): Metrics {
  if (!opts.service) throw new Error('createMetrics: service must be a non-empty string');
  const version = opts.version?.trim() || UNKNOWN_VERSION;
  const registry = new Registry();
  registry.setDefaultLabels({ service: opts.service, version });
  if (opts.defaultMetrics ?? true) collectDefaultMetrics({ register: registry });
  return { registry, service: opts.service, version };
}

/**
 * Hono handler for `GET /metrics`: the registry in the text exposition format, content type
 * `text/plain; version=0.0.4; charset=utf-8`.
 *
 * @example
 * ```ts
 * app.get('/metrics', metricsHandler(registry));
 * ```
 */
export function metricsHandler(registry: Registry): Handler {
  return async () =>
    new Response(await registry.metrics(), {
      status: 200,
      headers: { 'content-type': METRICS_CONTENT_TYPE },
    });
}

/**
 * The app of a metrics listener: `GET /metrics` (and `HEAD`) and nothing else; any other path is
 * 404 and another method 405, with the error body. `serveMetrics` serves it on its own port.
 *
 * @example
 * ```ts
 * const text = await (await metricsApp(registry).request('/metrics')).text();
 * ```
 */
export function metricsApp(registry: Registry): Hono {
  const app = new Hono();
  app.onError(errorHandler());
  app.notFound(notFoundHandler(app));
  app.get('/metrics', metricsHandler(registry));
  return app;
}
