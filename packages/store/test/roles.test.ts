/**
 * The three roles: the owner migrates and grants (`writerRole`, `readerRole`), the writer does the
 * consumer's and the jobs' writes and nothing an owner does, the reader only reads, even when a
 * session turns `default_transaction_read_only` off.
 */
import { createDatabase, createDatabaseRoles, type DatabaseRoles } from '@event-observatory/devstack';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import {
  ADVISORY_LOCKS,
  beginLockedTransaction,
  commitTransaction,
  countDefaultRows,
  createMonthPartition,
  createReadPool,
  createWritePool,
  type DatabasePool,
  deleteCheckpoints,
  detachPartition,
  facetEvents,
  getEvent,
  insertEvents,
  insertEventsWithCheckpoints,
  listPartitions,
  migrate,
  readCheckpoints,
  recordMaintenanceRun,
  refreshHorizon,
  refreshRollup,
  rollupNewestIngestedAt,
  rollupSeverities,
  rollupVolume,
  scopedPool,
  searchEvents,
  stepUnderLockTimeout,
  tailEvents,
  totalEvents,
  WHOLE_SCOPE,
} from '../src/index.js';
import { row } from './rows.js';

const stack = inject('stack');
const name = `store_roles_${Date.now().toString(36)}`;
let roles: DatabaseRoles;
let writer: DatabasePool;
let reader: DatabasePool;

beforeAll(async () => {
  await createDatabase(stack.databaseUrl, name);
  roles = await createDatabaseRoles(stack.databaseUrl, name);
  await migrate({ url: roles.owner.url, writerRole: roles.writer.name, readerRole: roles.reader.name });
  writer = createWritePool({ url: roles.writer.url });
  reader = createReadPool({ url: roles.reader.url });
});

afterAll(async () => {
  await Promise.all([writer?.end(), reader?.end()]);
});

/** The SQLSTATE `sql` fails with on `db` (undefined when it succeeds). */
async function sqlstate(db: DatabasePool, sql: string): Promise<string | undefined> {
  try {
    await db.query(sql);
    return undefined;
  } catch (err) {
    return (err as { code?: string }).code;
  }
}

const INSUFFICIENT_PRIVILEGE = '42501';

describe('the writer', () => {
  it("runs the consumer's writes: events with checkpoints, autocommit inserts, clearing checkpoints", async () => {
    const result = await insertEventsWithCheckpoints(
      writer,
      'g',
      [row('w1'), row('w2', { offset: '1' })],
      [{ topic: 'events', partition: 0, nextOffset: '2' }],
    );
    expect(result.inserted).toBe(2);
    expect((await insertEvents(writer, [row('w1'), row('w3', { offset: '2' })])).inserted).toBe(1);
    expect(await readCheckpoints(writer, 'g', 'events')).toEqual(new Map([[0, 2n]]));
    // January 2026 has no partition here: the rows sit in the default one, which the probe counts.
    expect(await countDefaultRows(writer)).toBe(3);
    expect(await deleteCheckpoints(writer, 'g', 'events')).toBe(1);
  });

  it("runs the jobs' maintenance: creates and detaches months, refreshes the rollup, records the runs", async () => {
    const client = await writer.connect();
    try {
      const locked = await beginLockedTransaction(client, {
        isolation: 'READ COMMITTED',
        statementTimeout: '1min',
        lockKey: ADVISORY_LOCKS.partitionMaintenance,
      });
      expect(locked).toBe(true);
      let created: string | null = null;
      expect(
        await stepUnderLockTimeout(client, 5_000, async () => {
          created = await createMonthPartition(client, new Date('2091-01-15T00:00:00Z'));
        }),
      ).toBeUndefined();
      expect(created).toBe('cloud_event_2091_01');
      expect(
        await stepUnderLockTimeout(client, 5_000, () => detachPartition(client, 'cloud_event_2091_01')),
      ).toBeUndefined();
      const startedAt = new Date();
      await recordMaintenanceRun(client, {
        job: 'partition-maintenance',
        outcome: 'success',
        startedAt,
        durationSeconds: 0.1,
        partitionsCreated: 1,
        partitionsDetached: 1,
      });
      await commitTransaction(client);

      const horizon = await refreshHorizon(client);
      await client.query('BEGIN ISOLATION LEVEL REPEATABLE READ');
      expect((await refreshRollup(client, horizon)).hours).toBeGreaterThan(0);
      await recordMaintenanceRun(client, {
        job: 'rollup-refresh',
        outcome: 'success',
        startedAt,
        durationSeconds: 0.1,
      });
      await commitTransaction(client);
    } finally {
      client.release();
    }
    expect((await listPartitions(writer)).map((p) => p.name)).not.toContain('cloud_event_2091_01');
    // The detached month is owned by the owner, like every table, readable by the writer and not
    // by the reader (outside the event table, no row-level security would hold it back).
    const { rows } = await writer.query(
      "SELECT tableowner FROM pg_tables WHERE schemaname = 'events' AND tablename = 'cloud_event_2091_01'",
    );
    expect(rows).toEqual([{ tableowner: roles.owner.name }]);
    expect(await sqlstate(writer, 'SELECT * FROM events.cloud_event_2091_01')).toBeUndefined();
    expect(await sqlstate(reader, 'SELECT * FROM events.cloud_event_2091_01')).toBe(INSUFFICIENT_PRIVILEGE);
  });

  it('cannot drop, alter, truncate or rewrite the events table, nor detach anything but a month', async () => {
    for (const sql of [
      'DROP TABLE events.cloud_event',
      'ALTER TABLE events.cloud_event ADD COLUMN x int',
      'ALTER TABLE events.cloud_event DETACH PARTITION events.cloud_event_default',
      'TRUNCATE events.cloud_event',
      'DELETE FROM events.cloud_event',
      "UPDATE events.cloud_event SET ce_type = 'x'",
      'CREATE TABLE events.x (a int)',
      'CREATE INDEX ON events.consumer_checkpoint (updated_at)',
      'DELETE FROM events.maintenance_run',
      'DROP FUNCTION events.detach_month_partition(text)',
      'DELETE FROM events.event_name',
      "UPDATE events.event_name SET ce_type = 'x'",
    ]) {
      expect(await sqlstate(writer, sql), sql).toBe(INSUFFICIENT_PRIVILEGE);
    }
    expect(await sqlstate(writer, "SELECT events.detach_month_partition('cloud_event_default')")).toBe(
      '22023',
    );
  });
});

describe('the reader', () => {
  it("runs the search service's reads through its read pool, under a scope", async () => {
    const filter = { text: 'io' };
    const reads = scopedPool(reader, WHOLE_SCOPE);
    const page = await searchEvents(reads, {}, { limit: 10 });
    expect(page.rows.length).toBeGreaterThan(0);
    expect((await totalEvents(reads, {})).total).toBeGreaterThan(0);
    await facetEvents(reads, filter);
    expect(await getEvent(reads, page.rows[0]!.key.uid)).toBeDefined();
    await tailEvents(reads, {}, undefined, 5);
    await rollupVolume(reads, new Date(0), 'day');
    await rollupSeverities(reads, new Date(0));
    await rollupNewestIngestedAt(reads);
  });

  it('cannot write or create even after turning default_transaction_read_only off', async () => {
    const client = await reader.connect();
    try {
      // The read pool's session default stops it first...
      await expect(client.query("DELETE FROM events.cloud_event WHERE ce_id = 'w1'")).rejects.toMatchObject({
        code: '25006',
      });
      // ...and with the default off, the role's privileges do.
      await client.query('SET default_transaction_read_only = off');
      for (const sql of [
        "INSERT INTO events.consumer_checkpoint VALUES ('g', 't', 0, 1)",
        "UPDATE events.cloud_event SET ce_type = 'x'",
        "DELETE FROM events.cloud_event WHERE ce_id = 'w1'",
        'DELETE FROM events.event_rollup_hourly',
        "INSERT INTO events.event_name VALUES ('2026-01-01', 's', 't', '{}')",
        'DELETE FROM events.event_name',
        'TRUNCATE events.cloud_event',
        'CREATE TABLE events.x (a int)',
        'CREATE TABLE public.x (a int)',
        "SELECT events.create_month_partition('2092-01-01')",
        "SELECT events.detach_month_partition('cloud_event_2091_02')",
      ]) {
        await expect(client.query(sql), sql).rejects.toMatchObject({ code: INSUFFICIENT_PRIVILEGE });
      }
    } finally {
      client.release(true);
    }
  });
});

describe('the migration runner', () => {
  it('grants nothing without role names, and runs no DDL for a role that finds nothing pending', async () => {
    const other = `${name}_plain`;
    const url = await createDatabase(stack.databaseUrl, other);
    await migrate({ url });
    const admin = createWritePool({ url, max: 1 });
    try {
      const { rows } = await admin.query(
        "SELECT has_table_privilege($1, 'events.cloud_event', 'SELECT') AS reads, has_function_privilege($1, 'events.create_month_partition(date)', 'EXECUTE') AS creates",
        [roles.writer.name],
      );
      expect(rows).toEqual([{ reads: false, creates: false }]);
    } finally {
      await admin.end();
    }
    // The consumer migrating at boot as the writer, after the owner's migration job.
    const again = await migrate({ url: roles.writer.url });
    expect(again.applied).toEqual([]);
    expect(again.alreadyApplied.length).toBeGreaterThan(0);
  });
});

describe('roles added to a database the superuser migrated (a make dev folder from before)', () => {
  it('hand the schema to the owner, whose run then grants the writer', async () => {
    const legacy = `${name}_legacy`;
    await migrate({ url: await createDatabase(stack.databaseUrl, legacy) });
    const late = await createDatabaseRoles(stack.databaseUrl, legacy);
    const again = await migrate({
      url: late.owner.url,
      writerRole: late.writer.name,
      readerRole: late.reader.name,
    });
    expect(again.applied).toEqual([]);
    const pool = createWritePool({ url: late.writer.url, max: 1 });
    try {
      expect((await insertEvents(pool, [row('legacy')])).inserted).toBe(1);
      expect(await createMonthPartition(pool, new Date('2093-03-01T00:00:00Z'))).toBe('cloud_event_2093_03');
    } finally {
      await pool.end();
    }
  });
});
