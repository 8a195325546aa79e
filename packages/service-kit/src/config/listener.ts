/**
 * The HTTP listener's timeouts, read in one place for every service (each `main.ts` reads them
 * and hands them to `serveApp`). Node's own defaults are not deliberate bounds: a stalled body is
 * answered only after `requestTimeout` (300 s) and a stalled header block after ~65 s.
 */
import { ConfigError, duration, type Env, type Field, int, readConfig } from './schema.js';

export interface ListenerTimeouts {
  /** Whole request (headers and body) must arrive within this; else 408 and close. */
  requestTimeoutMs: number;
  /** The header block must arrive within this; else 408 and close. At most `requestTimeoutMs`. */
  headersTimeoutMs: number;
  /** An idle keep-alive connection is closed after this. */
  keepAliveTimeoutMs: number;
}

const schema = {
  requestTimeoutMs: duration('HTTP_REQUEST_TIMEOUT', { min: 1 }).default('30s'),
  headersTimeoutMs: duration('HTTP_HEADERS_TIMEOUT', { min: 1 }).default('10s'),
  keepAliveTimeoutMs: duration('HTTP_KEEP_ALIVE_TIMEOUT', { min: 1 }).default('5s'),
};

/** Throws a `ConfigError` naming `HTTP_HEADERS_TIMEOUT` when it exceeds the request timeout (Node refuses it). */
export function checkListenerTimeouts(t: ListenerTimeouts): ListenerTimeouts {
  if (t.headersTimeoutMs > t.requestTimeoutMs) {
    throw new ConfigError(
      'HTTP_HEADERS_TIMEOUT',
      `${t.headersTimeoutMs}ms exceeds HTTP_REQUEST_TIMEOUT (${t.requestTimeoutMs}ms); it must not`,
    );
  }
  return t;
}

/**
 * Reads `HTTP_REQUEST_TIMEOUT` (30s), `HTTP_HEADERS_TIMEOUT` (10s), `HTTP_KEEP_ALIVE_TIMEOUT` (5s).
 *
 * @example
 * ```ts
 * readListenerTimeouts({ HTTP_REQUEST_TIMEOUT: '1m' });
 * // { requestTimeoutMs: 60000, headersTimeoutMs: 10000, keepAliveTimeoutMs: 5000 }
 * ```
 */
export function readListenerTimeouts(env: Env): ListenerTimeouts {
  return checkListenerTimeouts(readConfig(env, schema));
}

/** The metrics listener's port when `METRICS_PORT` is unset: the OpenTelemetry Prometheus exporter's. */
export const DEFAULT_METRICS_PORT = 9464;

/**
 * The `METRICS_PORT` field of a service's schema: the port of its metrics listener (`serveMetrics`),
 * apart from the main one so that a scraper can be admitted to the metrics alone.
 *
 * @example
 * ```ts
 * readConfig(env, { port: int('HTTP_PORT').default(8080), metricsPort: metricsPort() });
 * ```
 */
export function metricsPort(): Field<number> {
  return int('METRICS_PORT', { min: 0, max: 65535 }).default(DEFAULT_METRICS_PORT);
}
