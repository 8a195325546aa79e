/**
 * `cancellablePool` on a real PostgreSQL: an abort rejects the caller at once with the signal's
 * reason and stops the statement on the server; an aborted signal sends nothing; a connection whose
 * backend was terminated never serves another statement, also under `scopedPool` (no ROLLBACK
 * sent on it to fail after its release); a transaction on a connection checked out of either pool
 * (a page's count under its own budget) stops at the abort as well; `scopedPool` sets a
 * statement's planner settings for it alone.
 */
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import {
  cancellablePool,
  inPooledTransaction,
  type PlannedStatement,
  scopedPool,
  WHOLE_SCOPE,
} from '../src/index.js';

let pool: pg.Pool;
let watcher: pg.Pool;

beforeAll(() => {
  const url = inject('stack').databaseUrl;
  pool = new pg.Pool({ connectionString: url, max: 2, application_name: 'cancellable-test' });
  // As the services' pools (`createPool`): a connection that loses its backend must not crash.
  pool.on('error', () => {});
  watcher = new pg.Pool({ connectionString: url, max: 1 });
});

afterAll(async () => {
  await pool?.end();
  await watcher?.end();
});

async function sleepersRunning(): Promise<number> {
  const { rows } = await watcher.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM pg_stat_activity
      WHERE application_name = 'cancellable-test' AND state = 'active' AND query LIKE '%pg_sleep(30)%'`,
  );
  return rows[0]!.n;
}

describe('cancellablePool', () => {
  it('rejects at the abort with its reason and cancels the statement on the server', async () => {
    const controller = new AbortController();
    const reason = new Error('client went away');
    const running = cancellablePool(pool, controller.signal).query('SELECT pg_sleep(30)');
    await expect.poll(sleepersRunning, { timeout: 5_000 }).toBe(1);
    const abortedAt = Date.now();
    controller.abort(reason);
    await expect(running).rejects.toBe(reason);
    expect(Date.now() - abortedAt).toBeLessThan(1_000);
    await expect.poll(sleepersRunning, { timeout: 5_000 }).toBe(0);
    // The pool still answers: the cancelled connection was closed, not handed out again.
    expect((await pool.query('SELECT 1 AS one')).rows[0].one).toBe(1);
  });

  it('sends nothing once the signal has aborted', async () => {
    const signal = AbortSignal.abort(new Error('too late'));
    await expect(cancellablePool(pool, signal).query('SELECT 1')).rejects.toThrow('too late');
    expect(pool.totalCount).toBeLessThanOrEqual(2);
  });

  it.each([
    ['cancellablePool', () => cancellablePool(pool, new AbortController().signal)],
    ['scopedPool', () => scopedPool(pool, WHOLE_SCOPE)],
  ])(
    '%s closes a connection whose backend was terminated mid-statement, so the next statement gets a live one',
    async (_, make) => {
      const reads = make();
      // One connection at a time, so a dead one kept in the pool would serve the next statement.
      const running = reads.query('SELECT pg_sleep(30)');
      // Expected before the termination: the failure may arrive before the watcher's answer.
      const failed = expect(running).rejects.toThrow(/terminat/);
      await expect.poll(sleepersRunning, { timeout: 5_000 }).toBe(1);
      await watcher.query(
        `SELECT pg_terminate_backend(pid) FROM pg_stat_activity
        WHERE application_name = 'cancellable-test' AND query LIKE '%pg_sleep(30)%'`,
      );
      await failed;
      for (let i = 0; i < 5; i++) expect((await reads.query('SELECT 1 AS one')).rows[0].one).toBe(1);
    },
  );

  it.each([
    ['cancellablePool', (signal: AbortSignal) => cancellablePool(pool, signal)],
    ['scopedPool', (signal: AbortSignal) => scopedPool(pool, WHOLE_SCOPE, signal)],
  ])('%s stops a transaction on a connection checked out of it at the abort', async (_, make) => {
    const controller = new AbortController();
    const reason = new Error('client went away');
    const running = inPooledTransaction(
      make(controller.signal),
      (client) => client.query('SELECT pg_sleep(30)'),
      {
        statementTimeoutMs: 60_000,
      },
    );
    const failed = expect(running).rejects.toBe(reason);
    await expect.poll(sleepersRunning, { timeout: 5_000 }).toBe(1);
    controller.abort(reason);
    await expect.poll(sleepersRunning, { timeout: 5_000 }).toBe(0);
    await failed;
    expect((await pool.query('SELECT 1 AS one')).rows[0].one).toBe(1);
  });

  it("scopedPool plans a statement under its planner settings, and the next one under the server's, on the same connection", async () => {
    // One connection, so the next statement surely runs where the settings were set.
    const one = new pg.Pool({ connectionString: inject('stack').databaseUrl, max: 1 });
    try {
      const reads = scopedPool(one, WHOLE_SCOPE);
      const setting = 'SELECT current_setting($1) AS value, pg_backend_pid() AS pid';
      const planned: PlannedStatement = {
        text: setting,
        values: ['enable_bitmapscan'],
        planner: { enable_bitmapscan: 'off' },
      };
      const first = (await reads.query(planned)).rows[0];
      expect(first.value).toBe('off');
      const next = (await reads.query(setting, ['enable_bitmapscan'])).rows[0];
      expect(next).toEqual({ value: 'on', pid: first.pid });
      // A planned statement that fails is rolled back with its settings.
      await expect(reads.query({ ...planned, text: 'SELECT 1 / 0, $1::text' })).rejects.toThrow(
        /division by zero/,
      );
      expect((await reads.query(setting, ['enable_bitmapscan'])).rows[0]).toEqual(next);
      // A name that is not one of the planner settings is never sent.
      const odd = { ...planned, planner: { work_mem: 'off' } } as unknown as PlannedStatement;
      expect((await reads.query(odd)).rows[0]).toEqual(next);
    } finally {
      await one.end();
    }
  });
});
