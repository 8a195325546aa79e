/**
 * Database connection settings from the environment: `DATABASE_URL` (a `postgres://` URL or the
 * spec's `jdbc:postgresql://host:port/db` form), `DATABASE_USER` and `DATABASE_PASSWORD`
 * (override the URL's credentials when set), and for a service that reads a streaming replica,
 * `DATABASE_PRIMARY_URL` (the primary, with the same credentials). The URL's TLS parameters are libpq's (`sslmode`,
 * `sslrootcert`, `sslcert`, `sslkey`), checked here so a bad one stops the service at start-up
 * (`databaseTls`); `connection.ts` turns them into node-postgres settings.
 *
 * @example
 * databaseUrlFromEnv({ DATABASE_URL: 'jdbc:postgresql://db:5432/observatory', DATABASE_PASSWORD: 's' });
 * // 'postgres://observatory:s@db:5432/observatory'
 * databaseTls('postgres://db/observatory?sslmode=verify-full&sslrootcert=/etc/ca.pem');
 * // { mode: 'verify-full', verifyChain: true, verifyHost: true, ca: '-----BEGIN CERTIFICATE-----…' }
 */
import { readFileSync } from 'node:fs';
import { ConfigError, duration, type Env, readConfig } from '@event-observatory/service-kit/config';

export const DEFAULT_DATABASE_URL = 'jdbc:postgresql://localhost:5432/observatory';

/** A bad `DATABASE_URL`: a service kit `ConfigError`, so start-up prints `configuration error: DATABASE_URL: …`. */
export class DatabaseConfigError extends ConfigError {
  constructor(problem: string, variable = 'DATABASE_URL') {
    super(variable, problem);
  }
}

export function databaseUrlFromEnv(env: Record<string, string | undefined>): string {
  return withCredentials(env, env.DATABASE_URL?.trim() || DEFAULT_DATABASE_URL, 'DATABASE_URL');
}

/**
 * `DATABASE_PRIMARY_URL` with the credentials of `DATABASE_USER` and `DATABASE_PASSWORD`, for a
 * service whose `DATABASE_URL` may name a streaming replica (search: its few writes go to the
 * primary); undefined when it is unset or empty.
 */
export function primaryDatabaseUrlFromEnv(env: Record<string, string | undefined>): string | undefined {
  const raw = env.DATABASE_PRIMARY_URL?.trim();
  return raw ? withCredentials(env, raw, 'DATABASE_PRIMARY_URL') : undefined;
}

function withCredentials(env: Record<string, string | undefined>, raw: string, variable: string): string {
  const normalised = raw.replace(/^jdbc:postgresql:/, 'postgres:');
  let url: URL;
  try {
    url = new URL(normalised);
  } catch {
    throw new DatabaseConfigError('not a URL', variable); // the value may hold a password
  }
  if (url.protocol !== 'postgres:' && url.protocol !== 'postgresql:') {
    throw new DatabaseConfigError(
      `expected postgres:// or jdbc:postgresql://, got ${url.protocol}`,
      variable,
    );
  }
  const user = env.DATABASE_USER?.trim();
  if (user) url.username = encodeURIComponent(user);
  else if (!url.username) url.username = 'observatory';
  const password = env.DATABASE_PASSWORD;
  if (password !== undefined && password !== '') url.password = encodeURIComponent(password);
  databaseTls(url.toString()); // refuse a bad TLS setting now, not at the first connection
  return url.toString();
}

/** The URL with its password replaced by `***`, for logs. */
export function redactDatabaseUrl(url: string): string {
  try {
    const u = new URL(url);
    if (u.password) u.password = '***';
    return u.toString();
  } catch {
    return '<unparseable DATABASE_URL>';
  }
}

/**
 * The write pool's session timeouts (`createWritePool`), for the consumer and the jobs:
 * `DATABASE_STATEMENT_TIMEOUT` (default 30s) and `DATABASE_IDLE_IN_TRANSACTION_TIMEOUT` (60s).
 */
export function writePoolSettingsFromEnv(env: Env) {
  return readConfig(env, {
    statementTimeoutMs: duration('DATABASE_STATEMENT_TIMEOUT', { min: 1 }).default('30s'),
    idleInTransactionTimeoutMs: duration('DATABASE_IDLE_IN_TRANSACTION_TIMEOUT', { min: 1 }).default('60s'),
  });
}

/** libpq's `sslmode` values, weakest first. */
export const SSL_MODES = ['disable', 'allow', 'prefer', 'require', 'verify-ca', 'verify-full'] as const;
export type SslMode = (typeof SSL_MODES)[number];

/** The URL parameters `databaseTls` reads; `connection.ts` removes them before node-postgres sees the URL. */
export const TLS_PARAMETERS = ['sslmode', 'sslrootcert', 'sslcert', 'sslkey'] as const;

/** The TLS settings of a database URL, with libpq's meaning, files already read (PEM text). */
export interface DatabaseTls {
  mode: SslMode;
  /** Refuse a server certificate that no trusted authority signed. */
  verifyChain: boolean;
  /** Refuse a server certificate that does not name the host dialled (`verify-full`). */
  verifyHost: boolean;
  /** Authorities to trust (`sslrootcert` file); absent with `sslrootcert=system`: the system's. */
  ca?: string;
  /** Client certificate and key (`sslcert`, `sslkey`), sent when the server asks for one. */
  cert?: string;
  key?: string;
}

/**
 * The TLS settings of `url`, as libpq reads them:
 * - `sslmode` absent means `disable` (node-postgres' and this project's default; libpq's is `prefer`).
 * - `require` encrypts without checking the certificate, unless `sslrootcert` names a file: then,
 *   as with `allow` and `prefer`, the chain is verified (libpq's compatibility rule).
 * - `verify-ca` checks the chain, `verify-full` also the host name; both need `sslrootcert` (a
 *   file, or `system` for the system's authorities, which only `verify-full` may use).
 * - `sslcert` and `sslkey` go together.
 * Any other `ssl*` parameter (node-postgres' `ssl`, `sslcrl`, `sslpassword`, ...) is refused rather
 * than silently ignored. Throws `DatabaseConfigError` naming DATABASE_URL, never printing the URL.
 */
export function databaseTls(url: string): DatabaseTls {
  const params = new URL(url).searchParams;
  for (const name of params.keys()) {
    if (/^ssl|^uselibpqcompat$/i.test(name) && !(TLS_PARAMETERS as readonly string[]).includes(name)) {
      throw new DatabaseConfigError(
        `parameter ${name} is not supported (TLS takes libpq's ${TLS_PARAMETERS.join(', ')})`,
      );
    }
  }
  const mode = (params.get('sslmode') ?? 'disable') as SslMode;
  if (!SSL_MODES.includes(mode)) {
    throw new DatabaseConfigError(
      `sslmode must be one of ${SSL_MODES.join(', ')} (got ${JSON.stringify(mode)})`,
    );
  }
  if (mode === 'disable') return { mode, verifyChain: false, verifyHost: false };
  const rootcert = params.get('sslrootcert') ?? undefined;
  if (mode.startsWith('verify') && !rootcert) {
    throw new DatabaseConfigError(
      `sslmode=${mode} needs sslrootcert (a PEM file of the authorities to trust, or system)`,
    );
  }
  if (rootcert === 'system' && mode !== 'verify-full') {
    throw new DatabaseConfigError(`sslrootcert=system needs sslmode=verify-full (got ${mode})`);
  }
  const ca = rootcert && rootcert !== 'system' ? readPem('sslrootcert', rootcert) : undefined;
  const certFile = params.get('sslcert');
  const keyFile = params.get('sslkey');
  if (!certFile !== !keyFile) {
    throw new DatabaseConfigError('sslcert and sslkey must be given together');
  }
  return {
    mode,
    verifyChain: mode.startsWith('verify') || ca !== undefined,
    verifyHost: mode === 'verify-full',
    ...(ca !== undefined && { ca }),
    ...(certFile && keyFile && { cert: readPem('sslcert', certFile), key: readPem('sslkey', keyFile) }),
  };
}

function readPem(param: string, file: string): string {
  try {
    return readFileSync(file, 'utf8');
  } catch (err) {
    const reason = (err as NodeJS.ErrnoException).code ?? (err as Error).message;
    throw new DatabaseConfigError(`${param} ${file} cannot be read (${reason})`);
  }
}
