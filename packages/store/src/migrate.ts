/**
 * Migration runner. Applies the SQL files of `migrations/` (sorted by name) once each, every file
 * in its own transaction, recording name and SHA-256 in `events.schema_migration`. A session-level
 * advisory lock serialises concurrent runners (replicas booting together): the second waits, then
 * finds nothing left to do. An applied file whose content changed is refused, never re-run.
 * With `writerRole` / `readerRole`, it then grants those roles their privileges (`grants.ts`), on
 * every run, in one transaction; without them nothing is granted (one role for everything).
 * When nothing is pending it runs no DDL at all, so a role without CREATE (the consumer's writer,
 * migrating at boot after the owner's migration job) finds nothing to do instead of failing.
 * Raw SQL on purpose: it runs DDL, before the tables the drizzle schema describes exist.
 *
 * @example
 * const result = await migrate({ url: databaseUrl, writerRole: 'observatory_writer', readerRole: 'observatory_reader' });
 * result.applied; // ['0001_events_schema.sql', ...] on a fresh database, [] afterwards
 */
import { createHash } from 'node:crypto';
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { ADVISORY_LOCKS } from './advisory-locks.js';
import { connectionConfig } from './connection.js';
import { grantRoles } from './grants.js';
import { inTransaction } from './transactions.js';

/** `migrations/` at the repository root (../../../migrations from src/ or dist/). */
export const DEFAULT_MIGRATIONS_DIR = fileURLToPath(new URL('../../../migrations/', import.meta.url));

export interface MigrateOptions {
  url: string;
  /** Folder of `NNNN_name.sql` files; default the repository's `migrations/` (`DEFAULT_MIGRATIONS_DIR`). */
  dir?: string;
  log?: (msg: string, fields?: Record<string, unknown>) => void;
  /** Role granted the consumer's and the jobs' privileges; unset: no grants to a writer. */
  writerRole?: string;
  /** Role granted SELECT (the search service); unset: no grants to a reader. */
  readerRole?: string;
}

export interface MigrateResult {
  applied: string[];
  alreadyApplied: string[];
}

export class MigrationError extends Error {
  override name = 'MigrationError';
}

export interface MigrationFile {
  name: string;
  sql: string;
  checksum: string;
}

export async function readMigrations(dir: string): Promise<MigrationFile[]> {
  const names = (await readdir(dir)).filter((n) => /^\d{4}_[\w-]+\.sql$/.test(n)).sort();
  return Promise.all(
    names.map(async (name) => {
      const sql = await readFile(join(dir, name), 'utf8');
      return { name, sql, checksum: createHash('sha256').update(sql).digest('hex') };
    }),
  );
}

export async function migrate(opts: MigrateOptions): Promise<MigrateResult> {
  const dir = opts.dir ?? DEFAULT_MIGRATIONS_DIR;
  const files = await readMigrations(dir);
  if (files.length === 0) throw new MigrationError(`no migrations found in ${dir}`);
  const log = opts.log ?? (() => {});
  const { Client = pg.Client, ...connection } = connectionConfig(opts.url, '-c TimeZone=UTC');
  const client = new Client({
    ...connection,
    application_name: 'observatory-migrate',
    connectionTimeoutMillis: 10_000,
  });
  await client.connect();
  try {
    await client.query('SELECT pg_advisory_lock($1)', [ADVISORY_LOCKS.migration]);
    try {
      const found = await client.query<{ table: string | null }>(
        `SELECT to_regclass('events.schema_migration')::text AS table`,
      );
      if (found.rows[0]?.table === null) {
        await client.query(`CREATE SCHEMA IF NOT EXISTS events;
          CREATE TABLE IF NOT EXISTS events.schema_migration (
            name text PRIMARY KEY,
            checksum text NOT NULL,
            applied_at timestamptz NOT NULL DEFAULT now()
          )`);
      }
      const { rows } = await client.query<{ name: string; checksum: string }>(
        'SELECT name, checksum FROM events.schema_migration',
      );
      const done = new Map(rows.map((r) => [r.name, r.checksum]));
      const result: MigrateResult = { applied: [], alreadyApplied: [] };
      for (const file of files) {
        const previous = done.get(file.name);
        if (previous !== undefined) {
          if (previous !== file.checksum) {
            throw new MigrationError(
              `migration ${file.name} changed after it was applied (checksum differs)`,
            );
          }
          result.alreadyApplied.push(file.name);
          continue;
        }
        const started = Date.now();
        await client.query('BEGIN');
        try {
          await client.query(file.sql);
          await client.query('INSERT INTO events.schema_migration (name, checksum) VALUES ($1, $2)', [
            file.name,
            file.checksum,
          ]);
          await client.query('COMMIT');
        } catch (err) {
          await client.query('ROLLBACK').catch(() => {});
          throw new MigrationError(`migration ${file.name} failed: ${(err as Error).message}`, {
            cause: err,
          });
        }
        log('migration applied', { migration: file.name, duration_ms: Date.now() - started });
        result.applied.push(file.name);
      }
      const roles = { writer: opts.writerRole, reader: opts.readerRole };
      if (roles.writer || roles.reader) {
        await inTransaction(client, (c) => grantRoles(c, roles)).catch((err: Error) => {
          throw new MigrationError(`grants failed: ${err.message}`, { cause: err });
        });
        log('grants applied', { writer: roles.writer ?? null, reader: roles.reader ?? null });
      }
      return result;
    } finally {
      await client.query('SELECT pg_advisory_unlock($1)', [ADVISORY_LOCKS.migration]).catch(() => {});
    }
  } finally {
    await client.end();
  }
}
