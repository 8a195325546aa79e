/**
 * The HTTP listener's timeouts, read in one place for every service (each `main.ts` reads them
 * and hands them to `serveApp`). Node's own defaults are not deliberate bounds: a stalled body is
 * answered only after `requestTimeout` (300 s) and a stalled header block after ~65 s.
 */
import { ConfigError, duration, type Env, readConfig } from './schema.js';

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
