/**
 * The migration runner's `lock_timeout` on the devstack PostgreSQL: a migration that needs ACCESS
 * EXCLUSIVE on the event table while a long transaction reads it waits in the lock queue at most
 * `lock_timeout`, so the reads queued behind it go on; it is rolled back and tried again (each retry
 * logged), applies once the lock is free, and gives up with a clear error after its attempts. The
 * CLI takes both settings from its environment and refuses a bad one before connecting.
 */
import { execFile } from 'node:child_process';
import { cp, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { createDatabase } from '@event-observatory/devstack';
import pg from 'pg';
import { afterAll, beforeAll, beforeEach, describe, expect, inject, it } from 'vitest';
import { DEFAULT_MIGRATIONS_DIR, MigrationError, migrate } from '../src/index.js';

const PROBE = '9001_lock_probe.sql';
let url: string;
let dir: string;
/** The long transaction: holds ACCESS SHARE on the event table while it is open. */
let holder: pg.Client;

beforeAll(async () => {
  url = await createDatabase(inject('stack').databaseUrl, `migrate_locks_${Date.now().toString(36)}`);
  await migrate({ url });
  dir = await mkdtemp(join(tmpdir(), 'migrations-locks-'));
  await cp(DEFAULT_MIGRATIONS_DIR, dir, { recursive: true });
  await writeFile(join(dir, PROBE), 'ALTER TABLE events.cloud_event ADD COLUMN lock_probe integer;\n');
});

afterAll(async () => {
  await holder?.end().catch(() => {});
  if (dir) await rm(dir, { recursive: true, force: true });
});

beforeEach(async () => {
  await holder?.end().catch(() => {});
  await withClient(async (c) => {
    await c.query('ALTER TABLE events.cloud_event DROP COLUMN IF EXISTS lock_probe');
    await c.query('DELETE FROM events.schema_migration WHERE name = $1', [PROBE]);
  });
  holder = new pg.Client({ connectionString: url });
  await holder.connect();
  await holder.query('BEGIN');
  await holder.query('SELECT count(*) FROM events.cloud_event');
});

async function withClient<T>(work: (c: pg.Client) => Promise<T>): Promise<T> {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    return await work(c);
  } finally {
    await c.end();
  }
}

async function probeApplied(): Promise<{ column: boolean; recorded: boolean }> {
  return withClient(async (c) => {
    const { rows } = await c.query<{ column: boolean; recorded: boolean }>(
      `SELECT EXISTS (SELECT 1 FROM information_schema.columns
                       WHERE table_schema = 'events' AND table_name = 'cloud_event' AND column_name = 'lock_probe') AS column,
              EXISTS (SELECT 1 FROM events.schema_migration WHERE name = $1) AS recorded`,
      [PROBE],
    );
    return rows[0]!;
  });
}

/** Until the runner's session waits for a heavyweight lock. */
async function untilMigrationWaitsForLock(): Promise<void> {
  await withClient(async (c) => {
    for (const started = Date.now(); Date.now() - started < 10_000; ) {
      const { rows } = await c.query(
        `SELECT 1 FROM pg_stat_activity
          WHERE application_name = 'observatory-migrate' AND datname = current_database() AND wait_event_type = 'Lock'`,
      );
      if (rows.length > 0) return;
      await new Promise((r) => setTimeout(r, 10));
    }
    throw new Error('the migration never waited for a lock');
  });
}

type Logged = { msg: string } & Record<string, unknown>;
const RETRY_MSG = 'migration rolled back: a lock was not granted within lock_timeout; retrying';

describe('migrations under lock_timeout', () => {
  it('wait in the lock queue at most lock_timeout, so reads go on; retry, and apply once the lock is free', async () => {
    const logged: Logged[] = [];
    const run = migrate({
      url,
      dir,
      lockTimeoutMs: 1_000,
      lockAttempts: 10,
      log: (msg, fields) => logged.push({ msg, ...fields }),
    });
    await untilMigrationWaitsForLock();
    // A third session's read now queues behind the migration's ACCESS EXCLUSIVE request. Without a
    // lock_timeout it would wait for the long transaction; here it waits at most the timeout.
    const readWaitMs = await withClient(async (c) => {
      await c.query('SET statement_timeout = 8000');
      const started = Date.now();
      await c.query('SELECT count(*) FROM events.cloud_event');
      return Date.now() - started;
    });
    expect(readWaitMs).toBeLessThan(2_500);
    await expect
      .poll(() => logged.filter((l) => l.msg === RETRY_MSG).length, { timeout: 10_000 })
      .toBeGreaterThan(0);
    expect(await probeApplied()).toEqual({ column: false, recorded: false });

    await holder.query('COMMIT');
    const result = await run;
    expect(result.applied).toEqual([PROBE]);
    expect(await probeApplied()).toEqual({ column: true, recorded: true });
    const retries = logged.filter((l) => l.msg === RETRY_MSG);
    expect(retries[0]).toMatchObject({ migration: PROBE, attempt: 1, attempts: 10, lock_timeout_ms: 1_000 });
    expect(retries.map((l) => l.attempt)).toEqual(retries.map((_, i) => i + 1));
  });

  it('give up with a clear error after the attempts, applying nothing', async () => {
    const logged: Logged[] = [];
    const failure = await migrate({
      url,
      dir,
      lockTimeoutMs: 200,
      lockAttempts: 3,
      log: (msg, fields) => logged.push({ msg, ...fields }),
    }).catch((err: unknown) => err);
    expect(failure).toBeInstanceOf(MigrationError);
    expect((failure as Error).message).toBe(
      `migration ${PROBE} failed: a lock was not granted within lock_timeout (200 ms) in any of 3 attempts; a long transaction holds a conflicting lock (see pg_locks and pg_stat_activity)`,
    );
    expect(logged.filter((l) => l.msg === RETRY_MSG).map((l) => l.attempt)).toEqual([1, 2]);
    expect(await probeApplied()).toEqual({ column: false, recorded: false });
  });

  it('refuse a lock setting that is not a positive whole number before connecting', async () => {
    await expect(migrate({ url: 'postgres://nowhere.invalid/db', dir, lockTimeoutMs: 0 })).rejects.toThrow(
      'lockTimeoutMs must be a whole number of milliseconds, at least 1: 0',
    );
    await expect(migrate({ url: 'postgres://nowhere.invalid/db', dir, lockAttempts: 0.5 })).rejects.toThrow(
      'lockAttempts must be a whole number, at least 1: 0.5',
    );
  });
});

describe('observatory-migrate (the CLI)', () => {
  const cli = fileURLToPath(new URL('../src/migrate-cli.ts', import.meta.url));
  const run = (env: Record<string, string>) =>
    promisify(execFile)(process.execPath, ['--conditions=source', '--import', 'tsx', cli], {
      env: { ...process.env, DATABASE_URL: url, MIGRATIONS_DIR: dir, ...env },
    }).then(
      (out) => ({ code: 0, ...out }),
      (err: { code: number; stdout: string; stderr: string }) => err,
    );

  it('takes MIGRATION_LOCK_TIMEOUT and MIGRATION_LOCK_ATTEMPTS, printing each retry and the reason it gave up', async () => {
    const { code, stdout, stderr } = await run({
      MIGRATION_LOCK_TIMEOUT: '200ms',
      MIGRATION_LOCK_ATTEMPTS: '2',
    });
    expect(code).toBe(1);
    const lines = stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as Logged);
    expect(lines).toEqual([
      expect.objectContaining({
        msg: RETRY_MSG,
        migration: PROBE,
        attempt: 1,
        attempts: 2,
        lock_timeout_ms: 200,
      }),
    ]);
    expect(stderr).toContain(
      `migrate: migration ${PROBE} failed: a lock was not granted within lock_timeout (200 ms) in any of 2 attempts`,
    );
    expect(await probeApplied()).toEqual({ column: false, recorded: false });
  });

  it('refuses a bad MIGRATION_LOCK_TIMEOUT with the variable named, changing nothing', async () => {
    await holder.query('COMMIT');
    const { code, stdout, stderr } = await run({ MIGRATION_LOCK_TIMEOUT: 'soon' });
    expect(code).toBe(1);
    expect(stdout).toBe('');
    expect(stderr).toMatch(/^migrate: .*MIGRATION_LOCK_TIMEOUT.*duration/);
    expect(await probeApplied()).toEqual({ column: false, recorded: false });
  });
});
