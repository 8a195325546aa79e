/**
 * Configuration of the search service, every variable with its default (README has the table).
 * Database settings are read by `databaseUrlFromEnv` of the store package.
 */
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import {
  ConfigError,
  duration,
  type Env,
  int,
  list,
  metricsPort,
  oneOf,
  readConfig,
  str,
  url,
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
  publicUrl: url('SEARCH_PUBLIC_URL', { protocols: ['http:', 'https:'] }).optional(),
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
  /**
   * The external base URL, without a trailing slash: the login's redirect URI and the origin form
   * posts must come from (unset: the origin a request came to). Only an `http:` one drops the
   * cookies' Secure flag: unset, TLS may still end in front (auth/session.ts).
   */
  publicUrl?: string;
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
  const { secret, environment, publicUrl, ...rest } = readConfig(env, schema);
  if (secret === undefined && environment !== 'development') {
    throw new ConfigError(
      'APPLICATION_SECRET',
      'required outside development (NODE_ENV=development); it signs the search cursors',
    );
  }
  if (secret !== undefined && Buffer.byteLength(secret) < MIN_SECRET_BYTES) {
    throw new ConfigError('APPLICATION_SECRET', `expected at least ${MIN_SECRET_BYTES} bytes`);
  }
  return {
    ...rest,
    secret: secret ?? randomBytes(MIN_SECRET_BYTES).toString('hex'),
    ...(publicUrl === undefined ? {} : { publicUrl: publicUrl.replace(/\/+$/, '') }),
  };
}

export const AUTH_MODES = ['oidc', 'proxy', 'local', 'off'] as const;
export type AuthMode = (typeof AUTH_MODES)[number];
/** Longest a login lasts unless `SEARCH_SESSION_MAX_AGE` says otherwise. */
export const DEFAULT_SESSION_MAX_AGE_MS = 8 * 3_600_000;

/** What seals and bounds the session cookie of the `oidc` and `local` modes. */
export interface SessionConfig {
  /** Key material of the sealed cookie (at least 32 bytes). */
  secret: string;
  maxAgeMs: number;
}

export type AuthConfig =
  | { mode: 'off' }
  | { mode: 'proxy' }
  | {
      mode: 'oidc';
      session: SessionConfig;
      issuer: string;
      clientId: string;
      clientSecret: string;
      groupsClaim: string;
      /** Space-separated scopes the login asks for. */
      scopes: string;
    }
  | { mode: 'local'; session: SessionConfig; adminPassword: string };

const authSchema = {
  mode: oneOf('SEARCH_AUTH_MODE', AUTH_MODES).optional(),
  sessionSecret: str('SEARCH_SESSION_SECRET').secret().optional(),
  sessionMaxAgeMs: duration('SEARCH_SESSION_MAX_AGE', { min: 60_000, max: 30 * 86_400_000 }).default(
    DEFAULT_SESSION_MAX_AGE_MS,
  ),
  environment: str('NODE_ENV').default('production'),
};

/**
 * Reads how the search service finds its viewers. `SEARCH_AUTH_MODE` is required: login is on
 * unless switched `off` on purpose. `oidc` and `local` need `SEARCH_SESSION_SECRET` (a random
 * one under `NODE_ENV=development`, sessions then die with the process) and their own variables;
 * secrets come from files so they stay out of the environment.
 */
export function readAuthConfig(env: Env): AuthConfig {
  const { mode, sessionSecret, sessionMaxAgeMs, environment } = readConfig(env, authSchema);
  if (mode === undefined) {
    throw new ConfigError(
      'SEARCH_AUTH_MODE',
      `required; expected one of ${AUTH_MODES.join(', ')} (off serves every page to anyone)`,
    );
  }
  if (mode === 'off' || mode === 'proxy') return { mode };
  if (sessionSecret === undefined && environment !== 'development') {
    throw new ConfigError('SEARCH_SESSION_SECRET', `required in ${mode} mode; it seals the session cookie`);
  }
  if (sessionSecret !== undefined && Buffer.byteLength(sessionSecret) < MIN_SECRET_BYTES) {
    throw new ConfigError('SEARCH_SESSION_SECRET', `expected at least ${MIN_SECRET_BYTES} bytes`);
  }
  const session: SessionConfig = {
    secret: sessionSecret ?? randomBytes(MIN_SECRET_BYTES).toString('hex'),
    maxAgeMs: sessionMaxAgeMs,
  };
  if (mode === 'local') {
    return { mode, session, adminPassword: secretFile(env, 'SEARCH_LOCAL_ADMIN_PASSWORD_FILE') };
  }
  const oidc = readConfig(env, {
    issuer: url('SEARCH_OIDC_ISSUER', { protocols: ['http:', 'https:'] }),
    clientId: str('SEARCH_OIDC_CLIENT_ID'),
    groupsClaim: str('SEARCH_OIDC_GROUPS_CLAIM').default('groups'),
    scopes: str('SEARCH_OIDC_SCOPES').default('openid profile email groups'),
  });
  return { mode, session, ...oidc, clientSecret: secretFile(env, 'SEARCH_OIDC_CLIENT_SECRET_FILE') };
}

/** The first line of the file a variable names (a mounted Secret), never echoed. */
function secretFile(env: Env, variable: string): string {
  const path = env[variable];
  if (path === undefined || path === '') throw new ConfigError(variable, 'required; the path of a file');
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    throw new ConfigError(variable, `cannot read ${path}: ${(err as NodeJS.ErrnoException).code ?? 'error'}`);
  }
  const value = text.split(/\r?\n/, 1)[0]!;
  if (value === '') throw new ConfigError(variable, `${path} is empty`);
  return value;
}
