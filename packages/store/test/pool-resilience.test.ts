/**
 * The write pool when the path to the database goes silent (a TCP proxy that stops forwarding
 * without closing anything, as a dropped route or a dead NAT entry does), when a connection
 * answers read-only (25006, a primary demoted by a failover) and when the server ends a session
 * checked out of the pool (a database stopping): the write fails in bounded time, the connection
 * leaves the pool, and the retry the consumer makes succeeds on a fresh one.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { createDatabase, startSilentProxy } from '@event-observatory/devstack';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import {
  createWritePool,
  type DatabasePool,
  inPooledTransaction,
  insertEvents,
  insertEventsWithCheckpoints,
  migrate,
  upsertCheckpoints,
} from '../src/index.js';
import { row } from './rows.js';

const stack = inject('stack');
let url: string;
let admin: DatabasePool;

beforeAll(async () => {
  url = await createDatabase(stack.databaseUrl, `store_res_${Date.now().toString(36)}`);
  await migrate({ url });
  admin = createWritePool({ url, max: 1 });
});

afterAll(async () => {
  await admin?.end();
});

async function storedIds(): Promise<string[]> {
  const { rows } = await admin.query<{ ce_id: string }>('SELECT ce_id FROM events.cloud_event ORDER BY 1');
  return rows.map((r) => r.ce_id);
}

describe('a silent network drop', () => {
  it('fails a stuck write within the bound, the server ends its transaction, and the retry succeeds', async () => {
    const direct = new URL(url);
    const proxy = await startSilentProxy({ host: direct.hostname, port: Number(direct.port) });
    const proxied = new URL(url);
    proxied.hostname = '127.0.0.1';
    proxied.port = String(proxy.port);
    // Client-side bound: 500 ms statement timeout + 500 ms for its cancellation to arrive.
    const pool = createWritePool({
      url: proxied.toString(),
      max: 1,
      statementTimeoutMs: 500,
      idleInTransactionTimeoutMs: 1_000,
    });
    try {
      await insertEvents(pool, [row('before-drop')]);
      const started = Date.now();
      const write = inPooledTransaction(pool, async (client) => {
        await insertEvents(client, [row('during-drop', { offset: '1' })]);
        proxy.freeze(); // the network drops between two statements of the transaction
        await upsertCheckpoints(client, 'g', [{ topic: 'events', partition: 0, nextOffset: '2' }]);
      });
      // drizzle (the checkpoint upsert) wraps node-postgres' error.
      await expect(write).rejects.toMatchObject({ cause: { message: 'Query read timeout' } });
      expect(Date.now() - started).toBeLessThan(3_000);

      // The server side gave up on the abandoned transaction (its locks go with it).
      await expect
        .poll(
          async () =>
            (
              await admin.query(
                `SELECT count(*)::int AS n FROM pg_stat_activity
                  WHERE datname = current_database() AND state = 'idle in transaction'`,
              )
            ).rows[0].n,
          { timeout: 5_000, interval: 100 },
        )
        .toBe(0);
      expect(await storedIds()).toEqual(['before-drop']);

      // The consumer's retry of the batch: a new connection (the stuck one left the pool).
      const retried = await insertEventsWithCheckpoints(
        pool,
        'g',
        [row('during-drop', { offset: '1' })],
        [{ topic: 'events', partition: 0, nextOffset: '2' }],
      );
      expect(retried.inserted).toBe(1);
      expect(await storedIds()).toEqual(['before-drop', 'during-drop']);
    } finally {
      await proxy.close();
      await pool.end();
    }
  });
});

describe('a connection that answers read-only (25006)', () => {
  async function backendPid(pool: DatabasePool): Promise<number> {
    return inPooledTransaction(
      pool,
      async (c) => (await c.query('SELECT pg_backend_pid() AS pid')).rows[0].pid,
    );
  }

  it('is evicted from the pool after the failed write, not reused', async () => {
    const pool = createWritePool({ url, max: 1 });
    const database = `"${new URL(url).pathname.slice(1)}"`;
    try {
      const first = await backendPid(pool);
      const client = await pool.connect();
      await client.query('SET SESSION CHARACTERISTICS AS TRANSACTION READ ONLY');
      client.release();
      await expect(
        insertEventsWithCheckpoints(pool, 'g', [row('ro-1', { offset: '10' })], []),
      ).rejects.toMatchObject({ code: '25006' });
      const second = await backendPid(pool);
      expect(second).not.toBe(first);
      expect(
        (await insertEventsWithCheckpoints(pool, 'g', [row('ro-1', { offset: '10' })], [])).inserted,
      ).toBe(1);

      // A failover: every new session is read-only for a while, then the primary is back.
      await admin.query(`ALTER DATABASE ${database} SET default_transaction_read_only = on`);
      const before = await pool.connect();
      before.release(true); // the session from before the failover goes: the next write connects anew
      await expect(
        insertEventsWithCheckpoints(pool, 'g', [row('ro-2', { offset: '11' })], []),
      ).rejects.toMatchObject({ code: '25006' });
      await admin.query(`ALTER DATABASE ${database} RESET default_transaction_read_only`);
      // Were the read-only connection still pooled, its session default would refuse this too.
      expect(
        (await insertEventsWithCheckpoints(pool, 'g', [row('ro-2', { offset: '11' })], [])).inserted,
      ).toBe(1);
    } finally {
      await admin.query(`ALTER DATABASE ${database} RESET default_transaction_read_only`);
      await pool.end();
    }
  });
});

describe('a session the server ends while it is checked out of the pool', () => {
  it('fails its transaction, not the process, and the retry succeeds on a fresh connection', async () => {
    const pool = createWritePool({ url, max: 1 });
    try {
      const write = inPooledTransaction(pool, async (client) => {
        await insertEvents(client, [row('before-end', { offset: '20' })]);
        const { rows } = await client.query<{ pid: number }>('SELECT pg_backend_pid() AS pid');
        // As a stopping server does (57P01), between two statements of the transaction.
        await admin.query('SELECT pg_terminate_backend($1)', [rows[0]?.pid]);
        await sleep(300);
        await insertEvents(client, [row('after-end', { offset: '21' })]);
      });
      await expect(write).rejects.toThrow();
      await insertEvents(pool, [row('retried-after-end', { offset: '22' })]);
      const ids = await storedIds();
      expect(ids).toContain('retried-after-end');
      expect(ids).not.toContain('before-end');
    } finally {
      await pool.end();
    }
  });
});
