/**
 * Configuration of the search service, every variable with its default (README has the table).
 * Database settings are read by `databaseUrlFromEnv` of the store package.
 */
import { randomBytes } from 'node:crypto';
import {
  ConfigError,
  duration,
  type Env,
  int,
  list,
  metricsPort,
  readConfig,
  str,
} from '@event-observatory/service-kit/config';
import { logLevel } from '@event-observatory/service-kit/logger';
import { TAIL_LIMITS } from './tail.js';

export const DEFAULT_ALLOWED_HOSTS = 'localhost,127.0.0.1,.local';
/** Shortest APPLICATION_SECRET accepted: the HMAC-SHA256 key of the cursor signatures. */
const MIN_SECRET_BYTES = 32;
/**
 * How long one page may take, all its statements together: above the read pool's 2 s statement
 * timeout and its 3 s wait for a connection, so a page that merely waited or ran one slow
 * statement still answers, yet a page never holds a reader for long.
 */
export const DEFAULT_PAGE_TIMEOUT_MS = 5_000;

const schema = {
  host: str('PLAY_HTTP_ADDRESS').default('0.0.0.0'),
  port: int('PLAY_HTTP_PORT', { min: 0, max: 65535 }).default(9000),
  metricsPort: metricsPort(),
  version: str('SERVICE_VERSION').default('0.0.0-unknown'),
  logLevel: logLevel(),
  allowedHosts: list('ALLOWED_HOSTS', { min: 1 }).default(DEFAULT_ALLOWED_HOSTS),
  secret: str('APPLICATION_SECRET').secret().optional(),
  environment: str('NODE_ENV').default('production'),
  pageTimeoutMs: duration('SEARCH_PAGE_TIMEOUT', { min: 100, max: 60_000 }).default(DEFAULT_PAGE_TIMEOUT_MS),
  tailMaxPerViewer: int('SEARCH_TAIL_MAX_PER_VIEWER', { min: 1, max: 1000 }).default(TAIL_LIMITS.perViewer),
  tailMaxPerPod: int('SEARCH_TAIL_MAX_PER_POD', { min: 1, max: 1000 }).default(TAIL_LIMITS.perPod),
};

export interface SearchConfig {
  host: string;
  port: number;
  /** The metrics listener's (`METRICS_PORT`), on `host`. */
  metricsPort: number;
  version: string;
  logLevel: string;
  allowedHosts: string[];
  /** Key of the cursor signatures. */
  secret: string;
  /** Deadline of one page (its statements are cancelled when it passes). */
  pageTimeoutMs: number;
  /** Live tails one viewer may have open on a pod. */
  tailMaxPerViewer: number;
  /** Live tails a pod serves at once. */
  tailMaxPerPod: number;
}

/**
 * Reads the search variables; throws a one-line `ConfigError` naming the bad one. `ALLOWED_HOSTS`
 * set but empty fails (an unset one takes the default). `APPLICATION_SECRET` is required unless
 * `NODE_ENV=development`, where a random one is made (cursors then die with the process).
 */
export function readSearchConfig(env: Env): SearchConfig {
  if (env.ALLOWED_HOSTS !== undefined && env.ALLOWED_HOSTS.trim() === '') {
    throw new ConfigError('ALLOWED_HOSTS', 'empty; expected a comma-separated list of host names');
  }
  const { secret, environment, ...rest } = readConfig(env, schema);
  if (secret === undefined && environment !== 'development') {
    throw new ConfigError(
      'APPLICATION_SECRET',
      'required outside development (NODE_ENV=development); it signs the search cursors',
    );
  }
  if (secret !== undefined && Buffer.byteLength(secret) < MIN_SECRET_BYTES) {
    throw new ConfigError('APPLICATION_SECRET', `expected at least ${MIN_SECRET_BYTES} bytes`);
  }
  return { ...rest, secret: secret ?? randomBytes(MIN_SECRET_BYTES).toString('hex') };
}
