/**
 * Migration runner. Applies the SQL files of `migrations/` (sorted by name) once each, every file
 * in its own transaction, recording name and SHA-256 in `events.schema_migration`. A session-level
 * advisory lock serialises concurrent runners (replicas booting together): the second waits, then
 * finds nothing left to do. An applied file whose content changed is refused, never re-run.
 * Each file runs under `lock_timeout` (`lockTimeoutMs`): a lock it cannot get in time (a long
 * search holding the event table) rolls its transaction back, and the whole file is tried again
 * after a backoff, `lockAttempts` times in all, each retry logged. A lock request waiting in
 * PostgreSQL's queue holds every later request on the same table behind it, so an unbounded wait for
 * ACCESS EXCLUSIVE would stall every insert and search for as long as the long query runs.
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
import { type Backoff, retry } from '@event-observatory/service-kit/resilience';
import pg from 'pg';
import { ADVISORY_LOCKS } from './advisory-locks.js';
import { connectionConfig } from './connection.js';
import { sqlstateOf } from './errors.js';
import { grantRoles } from './grants.js';
import type { DatabaseConnection } from './queryable.js';
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
  /** `lock_timeout` of each file's statements in ms, at least 1; default `MIGRATION_LOCK_DEFAULTS`. */
  lockTimeoutMs?: number;
  /** Tries of a file whose lock timed out, the first included, at least 1; default `MIGRATION_LOCK_DEFAULTS`. */
  lockAttempts?: number;
}

/**
 * 5 s in the lock queue at most per try (what partition-maintenance allows a detach), 10 tries:
 * with the backoff below, about 4 minutes before giving up, inside the migration Job's deadline.
 */
export const MIGRATION_LOCK_DEFAULTS = { lockTimeoutMs: 5_000, lockAttempts: 10 } as const;

/** Between tries of a file whose lock timed out: the long query gets time to finish. */
const LOCK_RETRY_BACKOFF: Backoff = { initialMs: 1_000, maxMs: 30_000, randomFactor: 0.2 };

/** SQLSTATE `lock_not_available`: `lock_timeout` expired. */
const LOCK_NOT_AVAILABLE = '55P03';

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
  const lockTimeoutMs = opts.lockTimeoutMs ?? MIGRATION_LOCK_DEFAULTS.lockTimeoutMs;
  const lockAttempts = opts.lockAttempts ?? MIGRATION_LOCK_DEFAULTS.lockAttempts;
  if (!(Number.isInteger(lockTimeoutMs) && lockTimeoutMs >= 1))
    throw new MigrationError(
      `lockTimeoutMs must be a whole number of milliseconds, at least 1: ${lockTimeoutMs}`,
    );
  if (!(Number.isInteger(lockAttempts) && lockAttempts >= 1))
    throw new MigrationError(`lockAttempts must be a whole number, at least 1: ${lockAttempts}`);
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
  // A session the server ends fails the statement in flight, which the caller sees; the client's
  // own error event would otherwise go unheard and end the process.
  client.on('error', () => {});
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
        await retry(() => applyFile(client, file, lockTimeoutMs), {
          attempts: lockAttempts,
          backoff: LOCK_RETRY_BACKOFF,
          retryable: isLockTimeout,
          onRetry: (_err, attempt, delayMs) =>
            log('migration rolled back: a lock was not granted within lock_timeout; retrying', {
              migration: file.name,
              attempt: attempt + 1,
              attempts: lockAttempts,
              lock_timeout_ms: lockTimeoutMs,
              retry_in_ms: delayMs,
            }),
        }).catch((err: unknown) => {
          const why = isLockTimeout(err)
            ? `a lock was not granted within lock_timeout (${lockTimeoutMs} ms) in any of ${lockAttempts} attempts; a long transaction holds a conflicting lock (see pg_locks and pg_stat_activity)`
            : (err as Error).message;
          throw new MigrationError(`migration ${file.name} failed: ${why}`, { cause: err });
        });
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

/**
 * One file and its record in one transaction under `lock_timeout` (`SET LOCAL`: it ends with the
 * transaction). Rejects with the file's own error, whose SQLSTATE says whether a lock timed out;
 * the whole file is rolled back either way, so no savepoint is needed.
 */
async function applyFile(
  client: DatabaseConnection,
  file: MigrationFile,
  lockTimeoutMs: number,
): Promise<void> {
  await inTransaction(client, async () => {
    await client.query(`SET LOCAL lock_timeout = ${lockTimeoutMs}`);
    await client.query(file.sql);
    await client.query('INSERT INTO events.schema_migration (name, checksum) VALUES ($1, $2)', [
      file.name,
      file.checksum,
    ]);
  });
}

function isLockTimeout(err: unknown): boolean {
  return sqlstateOf(err) === LOCK_NOT_AVAILABLE;
}
