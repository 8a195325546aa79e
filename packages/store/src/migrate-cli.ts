#!/usr/bin/env node
/**
 * `observatory-migrate`: applies pending migrations to the database named by DATABASE_URL
 * (DATABASE_USER / DATABASE_PASSWORD override its credentials) from the folder MIGRATIONS_DIR
 * (default the repository's `migrations/`), grants DATABASE_WRITER_ROLE and DATABASE_READER_ROLE
 * their privileges when set (run it as the owner role), and prints one JSON line per applied
 * migration and per retry after a lock timeout (MIGRATION_LOCK_TIMEOUT, MIGRATION_LOCK_ATTEMPTS),
 * then one for the run. Exit 0 on success, 1 on failure (with the reason on stderr).
 */
import { duration, int, readConfig } from '@event-observatory/service-kit/config';
import { databaseUrlFromEnv, redactDatabaseUrl } from './config.js';
import { MIGRATION_LOCK_DEFAULTS, migrate } from './migrate.js';

const line = (msg: string, fields: Record<string, unknown> = {}) =>
  process.stdout.write(`${JSON.stringify({ msg, ...fields })}\n`);

try {
  const url = databaseUrlFromEnv(process.env);
  const dir = process.env.MIGRATIONS_DIR?.trim() || undefined;
  const writerRole = process.env.DATABASE_WRITER_ROLE?.trim() || undefined;
  const readerRole = process.env.DATABASE_READER_ROLE?.trim() || undefined;
  const locks = readConfig(process.env, {
    lockTimeoutMs: duration('MIGRATION_LOCK_TIMEOUT', { min: 1 }).default(
      MIGRATION_LOCK_DEFAULTS.lockTimeoutMs,
    ),
    lockAttempts: int('MIGRATION_LOCK_ATTEMPTS', { min: 1, max: 100 }).default(
      MIGRATION_LOCK_DEFAULTS.lockAttempts,
    ),
  });
  const result = await migrate({ url, ...(dir && { dir }), writerRole, readerRole, ...locks, log: line });
  line('migrations done', { database: redactDatabaseUrl(url), ...result, writerRole, readerRole });
} catch (err) {
  process.stderr.write(`migrate: ${(err as Error).message}\n`);
  process.exitCode = 1;
}
