#!/usr/bin/env node
/**
 * `observatory-migrate`: applies pending migrations to the database named by DATABASE_URL
 * (DATABASE_USER / DATABASE_PASSWORD override its credentials) from the folder MIGRATIONS_DIR
 * (default the repository's `migrations/`), grants DATABASE_WRITER_ROLE and DATABASE_READER_ROLE
 * their privileges when set (run it as the owner role), and prints one JSON line.
 * Exit 0 on success, 1 on failure (with the reason on stderr).
 */
import { databaseUrlFromEnv, redactDatabaseUrl } from './config.js';
import { migrate } from './migrate.js';

try {
  const url = databaseUrlFromEnv(process.env);
  const dir = process.env.MIGRATIONS_DIR?.trim() || undefined;
  const writerRole = process.env.DATABASE_WRITER_ROLE?.trim() || undefined;
  const readerRole = process.env.DATABASE_READER_ROLE?.trim() || undefined;
  const result = await migrate({ url, ...(dir && { dir }), writerRole, readerRole });
  process.stdout.write(
    `${JSON.stringify({ msg: 'migrations done', database: redactDatabaseUrl(url), ...result, writerRole, readerRole })}\n`,
  );
} catch (err) {
  process.stderr.write(`migrate: ${(err as Error).message}\n`);
  process.exitCode = 1;
}
