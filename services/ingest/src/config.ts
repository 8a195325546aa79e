/**
 * Ingest settings from the environment (the `BROKER_*` ones live in `@event-observatory/broker`,
 * the `AUTH_*` ones in service-kit's `authConfigFromEnv`).
 */
import { EVENT_MAX_MESSAGE_BYTES, RECORD_OVERHEAD_BYTES } from '@event-observatory/broker';
import {
  ConfigError,
  duration,
  type Env,
  int,
  list,
  metricsPort,
  num,
  readConfig,
  str,
} from '@event-observatory/service-kit/config';
import { logLevel } from '@event-observatory/service-kit/logger';
import { REQUEST_OVERHEAD_BYTES } from './admission.js';

const schema = {
  host: str('HTTP_HOST').default('0.0.0.0'),
  port: int('HTTP_PORT', { min: 0, max: 65535 }).default(8080),
  metricsPort: metricsPort(),
  version: str('SERVICE_VERSION').default('0.0.0-unknown'),
  logLevel: logLevel(),
  // At most what the event topic as broker creates it holds; a topic someone else created is checked
  // at start and by readiness (max-event-bytes-check.ts).
  maxEventBytes: int('INGEST_MAX_EVENT_BYTES', {
    min: 1,
    max: EVENT_MAX_MESSAGE_BYTES - RECORD_OVERHEAD_BYTES,
  }).default(1_048_576),
  maxBatchEvents: int('INGEST_MAX_BATCH_EVENTS', { min: 1 }).default(256),
  maxBatchBytes: int('INGEST_MAX_BATCH_BYTES', { min: 1 }).default(8_388_608),
  maxFutureSkewMs: duration('INGEST_MAX_FUTURE_SKEW').default('24h'),
  maxPastSkewMs: duration('INGEST_MAX_PAST_SKEW').default('90d'),
  knownTypes: list('INGEST_KNOWN_TYPES', { min: 0 }).default([]),
  // Bytes of requests in flight (admission.ts): what bounds memory under overload.
  maxInflightBytes: int('INGEST_MAX_INFLIGHT_BYTES', { min: 1 }).default(16_777_216),
  // The adaptive event limit (event-admission.ts): its floor (a whole batch of the default
  // ceiling beside others), and the latency rise it tolerates.
  minInflightEvents: int('INGEST_MIN_INFLIGHT_EVENTS', { min: 1 }).default(256),
  latencyTolerance: num('INGEST_LATENCY_TOLERANCE', { min: 1 }).default(2),
  // The service's own standing queueing delay (loop-delay.ts) above which the event limit is cut.
  queueDelayTargetMs: duration('INGEST_QUEUE_DELAY_TARGET', { min: 1, max: 1000 }).default('20ms'),
};

export type IngestConfig = ReturnType<typeof readIngestConfig>;

/** Reads the ingest variables; throws a one-line `ConfigError` naming the bad one. */
export function readIngestConfig(env: Env) {
  const config = readConfig(env, schema);
  // The largest request either route accepts must fit the budget, or it could never be admitted.
  const largest = Math.max(config.maxEventBytes, config.maxBatchBytes) + REQUEST_OVERHEAD_BYTES;
  if (config.maxInflightBytes < largest) {
    throw new ConfigError(
      'INGEST_MAX_INFLIGHT_BYTES',
      `${config.maxInflightBytes} is less than the largest request (${largest} bytes: INGEST_MAX_BATCH_BYTES or INGEST_MAX_EVENT_BYTES plus ${REQUEST_OVERHEAD_BYTES} of overhead)`,
    );
  }
  return config;
}

/** The limits that decide about one request (the defaults are the schema's). */
export interface Limits {
  maxEventBytes: number;
  maxInflightBytes: number;
  maxBatchEvents: number;
  maxBatchBytes: number;
  maxFutureSkewMs: number;
  maxPastSkewMs: number;
}
