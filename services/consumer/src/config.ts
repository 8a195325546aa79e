/**
 * Configuration of the consumer service, every variable with its default (README has the table).
 * The `BROKER_*` settings are read by `readConsumerBrokerConfig` of the broker package; database
 * settings by `databaseUrlFromEnv` and `writePoolSettingsFromEnv` of the store package; the admin
 * API's authentication by `authConfigFromEnv` of the service kit with its own `ADMIN_AUTH_*`
 * variables (scope `events:admin` by default), apart from the ingest service's `AUTH_*`.
 */
import { readConsumerBrokerConfig } from '@event-observatory/broker';
import {
  bool,
  duration,
  type Env,
  int,
  metricsPort,
  readConfig,
  str,
} from '@event-observatory/service-kit/config';
import { writePoolSettingsFromEnv } from '@event-observatory/store';

export const ADMIN_SCOPE = 'events:admin';

export function readConsumerConfig(env: Env) {
  const own = readConfig(env, {
    serviceVersion: str('SERVICE_VERSION').default('0.0.0-unknown'),
    logLevel: str('LOG_LEVEL').default('info'),
    httpHost: str('HTTP_HOST').default('0.0.0.0'),
    httpPort: int('HTTP_PORT', { min: 0, max: 65535 }).default(8080),
    // The admin API on a port of its own (the probes stay on HTTP_PORT, the meters on METRICS_PORT).
    adminPort: int('ADMIN_PORT', { min: 0, max: 65535 }).default(8081),
    metricsPort: metricsPort(),
    batchSize: int('CONSUMER_BATCH_SIZE', { min: 1, max: 10_000 }).default(500),
    batchWindowMs: duration('CONSUMER_BATCH_WINDOW', { min: 0 }).default('250ms'),
    writeConcurrency: int('CONSUMER_WRITE_CONCURRENCY', { min: 1, max: 6 }).default(2),
    writeAttempts: int('CONSUMER_WRITE_ATTEMPTS', { min: 1, max: 100 }).default(3),
    retryDelayMs: duration('CONSUMER_RETRY_DELAY', { min: 0 }).default('200ms'),
    drainTimeoutMs: duration('CONSUMER_DRAIN_TIMEOUT', { min: 0 }).default('30s'),
    lagRefreshMs: duration('LAG_REFRESH_INTERVAL', { min: 100 }).default('20s'),
    lagRequestTimeoutMs: duration('LAG_REQUEST_TIMEOUT', { min: 100 }).default('5s'),
    dlqAgeIntervalMs: duration('DLQ_AGE_INTERVAL', { min: 1000 }).default('60s'),
    retainedRangeRefreshMs: duration('RETAINED_RANGE_REFRESH_INTERVAL', { min: 1000 }).default('30s'),
    replayMaxRecords: int('REPLAY_MAX_RECORDS', { min: 1, max: 100_000 }).default(1000),
    migrateOnBoot: bool('CONSUMER_MIGRATE_ON_BOOT').default(true),
    migrationsDir: str('MIGRATIONS_DIR').optional(),
    autoStart: bool('CONSUMER_AUTO_START').default(true),
    /**
     * Test only: wait this long after a chunk's group was durably written and before its offset is
     * committed (0: never). Lets tests kill or stop the process between the write and the commit.
     */
    testHoldAfterWriteMs: duration('CONSUMER_TEST_HOLD_AFTER_WRITE', { min: 0 }).default('0ms'),
  });
  return { ...own, broker: readConsumerBrokerConfig(env), writePool: writePoolSettingsFromEnv(env) };
}

export type ConsumerConfig = ReturnType<typeof readConsumerConfig>;
