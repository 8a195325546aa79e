import { createDatabase } from '@event-observatory/devstack';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';

const { databaseUrl } = inject('stack');
let url: string;
let client: pg.Client;

beforeAll(async () => {
  url = await createDatabase(databaseUrl, 'devstack_test');
  client = new pg.Client({ connectionString: url });
  await client.connect();
});
afterAll(async () => {
  await client.end();
});

describe('the devstack PostgreSQL server', () => {
  it('creates a database once and returns its URL (idempotent)', async () => {
    expect(new URL(url).pathname).toBe('/devstack_test');
    expect(await createDatabase(databaseUrl, 'devstack_test')).toBe(url);
    const { rows } = await client.query<{ db: string }>('select current_database() as db');
    expect(rows[0]?.db).toBe('devstack_test');
  });

  it('runs sessions in UTC and listens on 127.0.0.1 with password authentication', async () => {
    const { rows } = await client.query<{ tz: string; addr: string }>(
      "select current_setting('TimeZone') as tz, host(inet_server_addr()) as addr",
    );
    expect(rows[0]).toEqual({ tz: 'UTC', addr: '127.0.0.1' });
    const wrong = new URL(url);
    wrong.password = 'not-the-password';
    const intruder = new pg.Client({ connectionString: wrong.toString() });
    await expect(intruder.connect()).rejects.toThrow(/password authentication failed/);
    await intruder.end().catch(() => {});
  });

  it('routes rows of a range-partitioned table into monthly partitions', async () => {
    await client.query('drop table if exists devstack_event');
    await client.query(`
      create table devstack_event (occurred_at timestamptz not null, id text not null,
        primary key (occurred_at, id)) partition by range (occurred_at)`);
    await client.query(`create table devstack_event_2026_01 partition of devstack_event
      for values from ('2026-01-01 00:00:00+00') to ('2026-02-01 00:00:00+00')`);
    await client.query(`create table devstack_event_2026_02 partition of devstack_event
      for values from ('2026-02-01 00:00:00+00') to ('2026-03-01 00:00:00+00')`);
    await client.query('create table devstack_event_default partition of devstack_event default');
    await client.query(`insert into devstack_event values
      ('2026-01-31 23:59:59+00', 'a'), ('2026-02-01 00:00:00+00', 'b'), ('2027-05-01 00:00:00+00', 'c')`);
    const { rows } = await client.query<{ id: string; part: string }>(
      'select id, tableoid::regclass::text as part from devstack_event order by id',
    );
    expect(rows).toEqual([
      { id: 'a', part: 'devstack_event_2026_01' },
      { id: 'b', part: 'devstack_event_2026_02' },
      { id: 'c', part: 'devstack_event_default' },
    ]);
  });
});
