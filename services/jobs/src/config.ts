/**
 * Configuration of the jobs, every variable with its default (README has the table). Database
 * settings are read by `databaseUrlFromEnv` and `writePoolSettingsFromEnv` of the store package.
 */
import { bool, duration, type Env, int, readConfig, str } from '@event-observatory/service-kit/config';
import { writePoolSettingsFromEnv } from '@event-observatory/store';

export function readJobsConfig(env: Env) {
  const own = readConfig(env, {
    serviceVersion: str('SERVICE_VERSION').default('0.0.0-unknown'),
    logLevel: str('LOG_LEVEL').default('info'),
    enabled: bool('MAINTENANCE_ENABLED').default(true),
    monthsAhead: int('MAINTENANCE_MONTHS_AHEAD', { min: 0, max: 120 }).default(3),
    /** Unset: never detach. */
    retainMonths: int('MAINTENANCE_RETAIN_MONTHS', { min: 1, max: 1200 }).optional(),
    detachLockTimeoutMs: duration('MAINTENANCE_DETACH_LOCK_TIMEOUT', { min: 1 }).default('5s'),
    /** How often `make dev` runs partition-maintenance (a CronJob's schedule in a cluster). */
    partitionIntervalMs: duration('MAINTENANCE_PARTITION_INTERVAL', { min: 1_000 }).default('6h'),
    /** How often `make dev` runs rollup-refresh. */
    refreshIntervalMs: duration('MAINTENANCE_REFRESH_INTERVAL', { min: 1_000 }).default('5m'),
  });
  return { ...own, writePool: writePoolSettingsFromEnv(env) };
}

export type JobsConfig = ReturnType<typeof readJobsConfig>;
