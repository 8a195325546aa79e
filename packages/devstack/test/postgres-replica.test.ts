/**
 * The streaming replica against a primary of its own: the base backup, streaming, read-only
 * sessions, a visible replay lag, a restart that resumes streaming, and removal of the slot.
 */
import { rmSync } from 'node:fs';
import {
  type PostgresHandle,
  type ReplicaHandle,
  startPostgres,
  startReplica,
  tempDataDir,
} from '@event-observatory/devstack';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';

const dir = tempDataDir('replica');
let primary: PostgresHandle;
let replica: ReplicaHandle;

async function query<T extends pg.QueryResultRow>(url: string, sql: string): Promise<T[]> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query<T>(sql)).rows;
  } finally {
    await client.end();
  }
}

beforeAll(async () => {
  primary = await startPostgres({ dataDir: `${dir}/primary` });
  await query(primary.url, 'create table replicated (n int primary key)');
  await query(primary.url, 'insert into replicated select generate_series(1, 1000)');
  replica = await startReplica({ primary, dataDir: `${dir}/replica` });
}, 120_000);

afterAll(async () => {
  await replica?.remove();
  await primary?.stop();
  rmSync(dir, { recursive: true, force: true });
});

const count = async (url: string) =>
  (await query<{ n: number }>(url, 'select count(*)::int as n from replicated'))[0]!.n;

describe('a streaming replica of a devstack PostgreSQL', () => {
  it('starts from a base backup of the running primary, as a hot standby with the same credentials', async () => {
    expect(replica.port).not.toBe(primary.port);
    expect(await count(replica.url)).toBe(1000);
    expect(await query(replica.url, 'select pg_is_in_recovery() as standby')).toEqual([{ standby: true }]);
    expect(await query(primary.url, 'select application_name, state from pg_stat_replication')).toEqual([
      { application_name: 'devstack_replica', state: 'streaming' },
    ]);
  });

  it('streams what the primary writes after the backup, and refuses writes (read-only transaction)', async () => {
    await query(primary.url, 'insert into replicated select generate_series(1001, 2000)');
    await vi.waitFor(async () => expect(await count(replica.url)).toBe(2000), {
      timeout: 10_000,
      interval: 100,
    });
    expect(await replica.lagBytes()).toBe(0);
    await expect(query(replica.url, 'insert into replicated values (0)')).rejects.toMatchObject({
      code: '25006',
    });
  });

  it('shows its replay lag while it cannot keep up, and catches up once it can', async () => {
    // Replay paused: the primary goes on writing, the replica's position stays.
    await query(replica.url, 'select pg_wal_replay_pause()');
    await query(primary.url, 'insert into replicated select generate_series(2001, 3000)');
    await vi.waitFor(async () => expect(await replica.lagBytes()).toBeGreaterThan(0), { timeout: 10_000 });
    expect(await count(replica.url)).toBe(2000);
    await query(replica.url, 'select pg_wal_replay_resume()');
    await vi.waitFor(async () => expect(await replica.lagBytes()).toBe(0), {
      timeout: 10_000,
      interval: 100,
    });
    expect(await count(replica.url)).toBe(3000);
  });

  it('resumes streaming after a restart, from the WAL its slot kept', async () => {
    await replica.stop();
    await query(primary.url, 'insert into replicated select generate_series(3001, 4000)');
    await replica.start();
    await vi.waitFor(async () => expect(await count(replica.url)).toBe(4000), {
      timeout: 20_000,
      interval: 200,
    });
  });

  it('drops its slot when removed, so the primary keeps no WAL for it', async () => {
    await replica.remove();
    expect(await query(primary.url, 'select slot_name from pg_replication_slots')).toEqual([]);
  });
});
