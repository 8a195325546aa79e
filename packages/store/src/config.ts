/**
 * Database connection settings from the environment: `DATABASE_URL` (a `postgres://` URL or the
 * spec's `jdbc:postgresql://host:port/db` form), `DATABASE_USER` and `DATABASE_PASSWORD`
 * (override the URL's credentials when set).
 *
 * @example
 * databaseUrlFromEnv({ DATABASE_URL: 'jdbc:postgresql://db:5432/observatory', DATABASE_PASSWORD: 's' });
 * // 'postgres://observatory:s@db:5432/observatory'
 */
export const DEFAULT_DATABASE_URL = 'jdbc:postgresql://localhost:5432/observatory';

export class DatabaseConfigError extends Error {
  override name = 'DatabaseConfigError';
}

export function databaseUrlFromEnv(env: Record<string, string | undefined>): string {
  const raw = env.DATABASE_URL?.trim() || DEFAULT_DATABASE_URL;
  const normalised = raw.replace(/^jdbc:postgresql:/, 'postgres:');
  let url: URL;
  try {
    url = new URL(normalised);
  } catch {
    throw new DatabaseConfigError(`DATABASE_URL: not a URL: ${JSON.stringify(raw)}`);
  }
  if (url.protocol !== 'postgres:' && url.protocol !== 'postgresql:') {
    throw new DatabaseConfigError(
      `DATABASE_URL: expected postgres:// or jdbc:postgresql://, got ${url.protocol}`,
    );
  }
  const user = env.DATABASE_USER?.trim();
  if (user) url.username = encodeURIComponent(user);
  else if (!url.username) url.username = 'observatory';
  const password = env.DATABASE_PASSWORD;
  if (password !== undefined && password !== '') url.password = encodeURIComponent(password);
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
