/**
 * Row visibility (migration 0011) on a real PostgreSQL with the three roles: the reader sees no
 * event and no rollup row without a scope, only its scope's rows with one, through the parent and
 * never through a partition; the writer and the owner see everything; the scope of one statement
 * never stays on its connection.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import {
  bypassesRowSecurity,
  countEvents,
  DAY_MS,
  type DatabasePool,
  histogramEvents,
  hourlyCountsTable,
  insertEvents,
  monthPartitionName,
  type ReadScope,
  rollupTop,
  rollupVolume,
  scopedPool,
  searchEvents,
  WHOLE_SCOPE,
} from '../src/index.js';
import {
  scopedEvent as event,
  PREVIOUS_HOUR as hour,
  refreshRollupNow,
  scope,
  useRoleDatabase,
} from './scoped-roles.js';

const db = useRoleDatabase('store_vis');
let owner: DatabasePool;
let writer: DatabasePool;
let reader: DatabasePool;

beforeAll(async () => {
  ({ owner, writer, reader } = db);
  await insertEvents(writer, [
    event('a', '/plant/a', 'com.a.reading', { authtype: 'token', authid: 'alice', namespace: 'ns-a' }),
    event('b', '/plant/b/1', 'com.b.alarm', {
      authtype: 'service-account',
      authid: 'bob',
      namespace: 'ns-b',
    }),
    event('c', '/office', 'org.c.door', null),
  ]);
  await refreshRollupNow(writer);
});

async function ids(db: DatabasePool): Promise<string[]> {
  const { rows } = await db.query<{ id: string }>('SELECT ce_id AS id FROM events.cloud_event ORDER BY 1');
  return rows.map((r) => r.id);
}

/** The rollups of type and source: per hour, and per day (migration 0020) under the same policy. */
const ROLLUPS = ['events.event_rollup_hourly', 'events.event_rollup_daily'];

async function rollupSources(db: DatabasePool, table = ROLLUPS[0]): Promise<string[]> {
  const { rows } = await db.query<{ s: string }>(`SELECT DISTINCT ce_source AS s FROM ${table} ORDER BY 1`);
  return rows.map((r) => r.s);
}

describe('the reader', () => {
  it("keeps the search operators' indexes: their functions are leakproof here, as the devstack and the bundled server make them", async () => {
    const { rows } = await owner.query<{ f: string; leakproof: boolean }>(
      `SELECT oid::regprocedure::text AS f, proleakproof AS leakproof FROM pg_proc
        WHERE oid IN ('pg_catalog.ts_match_vq(tsvector, tsquery)'::regprocedure,
                      'pg_catalog.jsonb_contains(jsonb, jsonb)'::regprocedure,
                      'pg_catalog.arraycontains(anyarray, anyarray)'::regprocedure)
        ORDER BY 1`,
    );
    expect(rows.map((r) => [r.f, r.leakproof])).toEqual([
      ['arraycontains(anyarray,anyarray)', true],
      ['jsonb_contains(jsonb,jsonb)', true],
      ['ts_match_vq(tsvector,tsquery)', true],
    ]);
  });

  it('sees no event and no rollup row in plain SQL without a scope', async () => {
    expect(await ids(reader)).toEqual([]);
    for (const table of ROLLUPS) expect(await rollupSources(reader, table), table).toEqual([]);
    // Nor with a scope set by hand and emptied, as set_config leaves it after its transaction.
    expect(await reader.query("SELECT set_config('observatory.scope', '', false)")).toBeDefined();
    expect(await ids(reader)).toEqual([]);
  });

  it("sees exactly its scope's events: sources, prefixes of source and type, producers by id or namespace", async () => {
    const cases: [ReadScope, string[]][] = [
      [WHOLE_SCOPE, ['a', 'b', 'c']],
      [scope({}), []],
      [scope({ sources: ['/plant/a'] }), ['a']],
      [scope({ sources: ['/plant'] }), []],
      [scope({ sourcePrefixes: ['/plant/'] }), ['a', 'b']],
      [scope({ typePrefixes: ['org.'] }), ['c']],
      [scope({ producers: ['bob'] }), ['b']],
      [scope({ producers: ['ns-a'] }), ['a']],
      [scope({ sources: ['/office'], producers: ['alice'] }), ['a', 'c']],
    ];
    for (const [s, expected] of cases) {
      expect(await ids(scopedPool(reader, s)), JSON.stringify(s)).toEqual(expected);
      const page = await searchEvents(scopedPool(reader, s), {}, { limit: 10 });
      expect(page.rows.map((r) => r.id).sort(), JSON.stringify(s)).toEqual(expected);
    }
    // The scope lived in its statement's transaction only.
    expect(await ids(reader)).toEqual([]);
  });

  it('cannot read a partition, nor the default one, with or without a scope', async () => {
    for (const partition of [monthPartitionName(hour), 'cloud_event_default']) {
      for (const db of [reader, scopedPool(reader, WHOLE_SCOPE)]) {
        await expect(db.query(`SELECT count(*) FROM events.${partition}`), partition).rejects.toMatchObject({
          code: '42501',
        });
      }
    }
  });

  it("sees the rollup rows of its scope's sources and types, per hour and per day; producers admit none there", async () => {
    for (const table of ROLLUPS) {
      const sources = (s: ReadScope) => rollupSources(scopedPool(reader, s), table);
      expect(await sources(WHOLE_SCOPE), table).toEqual(['/office', '/plant/a', '/plant/b/1']);
      expect(await sources(scope({ sourcePrefixes: ['/plant/b'] })), table).toEqual(['/plant/b/1']);
      expect(await sources(scope({ typePrefixes: ['org.'] })), table).toEqual(['/office']);
      expect(await sources(scope({ producers: ['alice'] })), table).toEqual([]);
    }
    const top = await rollupTop(scopedPool(reader, scope({ sources: ['/plant/a'] })), hour, 'ce_source', 10);
    expect(top.map((t) => t.value)).toEqual(['/plant/a']);
  });

  it('counts a histogram from the rollup for a scope of sources, from the table for a scope of producers', async () => {
    const range = { from: hour, to: new Date(hour.getTime() + 3_600_000), bucketMs: 3_600_000 };
    const total = (h: { buckets: { severe: number; warning: number; other: number }[] }) =>
      h.buckets.reduce((n, b) => n + b.severe + b.warning + b.other, 0);
    const bySource = await histogramEvents(
      scopedPool(reader, scope({ sourcePrefixes: ['/plant/'] })),
      {},
      range,
    );
    expect([bySource.source, total(bySource)]).toEqual(['rollup', 2]);
    // Bars of whole days: the days from the daily rollup, under the same policy.
    const midnight = Math.floor(hour.getTime() / DAY_MS) * DAY_MS;
    const days = {
      from: new Date(midnight - 2 * DAY_MS),
      to: new Date(midnight + 3 * DAY_MS),
      bucketMs: DAY_MS,
    };
    const byDay = await histogramEvents(scopedPool(reader, scope({ sourcePrefixes: ['/plant/'] })), {}, days);
    expect([byDay.source, total(byDay)]).toEqual(['rollup', 2]);
    const byProducer = await histogramEvents(scopedPool(reader, scope({ producers: ['alice'] })), {}, range);
    expect([byProducer.source, total(byProducer)]).toEqual(['table', 1]);
  });

  it('reads the totals per hour with a scope of everything alone, and counts its histogram from them', async () => {
    const totals = async (db: DatabasePool) =>
      (await db.query<{ n: number }>('SELECT event_count::int AS n FROM events.event_rollup_hour_total'))
        .rows;
    expect(await totals(scopedPool(reader, WHOLE_SCOPE))).toEqual([{ n: 3 }]);
    expect(await totals(scopedPool(reader, scope({ sourcePrefixes: ['/'] })))).toEqual([]);
    expect(await totals(reader)).toEqual([]);
    const range = { from: hour, to: new Date(hour.getTime() + 3_600_000), bucketMs: 3_600_000 };
    const whole = await histogramEvents(scopedPool(reader, WHOLE_SCOPE), {}, range);
    expect([whole.source, whole.buckets.reduce((n, b) => n + b.severe + b.warning + b.other, 0)]).toEqual([
      'rollup',
      3,
    ]);
  });

  it("counts the overview's volume from the totals for a scope of everything, from its rows for any other", async () => {
    const volume = async (db: DatabasePool) => (await rollupVolume(db, hour, 'hour')).map((b) => b.events);
    const whole = scopedPool(reader, WHOLE_SCOPE);
    const plant = scopedPool(reader, scope({ sourcePrefixes: ['/plant/'] }));
    expect([hourlyCountsTable(whole), await volume(whole)]).toEqual(['events.event_rollup_hour_total', [3]]);
    expect([hourlyCountsTable(plant), await volume(plant)]).toEqual(['events.event_rollup_hourly', [2]]);
  });

  it('counts under its scope also within a budget, in a transaction of its own', async () => {
    const plant = scopedPool(reader, scope({ sourcePrefixes: ['/plant/'] }));
    expect(await countEvents(plant, {})).toEqual({ total: 2, capped: false });
    expect(await countEvents(plant, {}, 5_000)).toEqual({ total: 2, capped: false });
    expect(await countEvents(scopedPool(reader, WHOLE_SCOPE), {}, 5_000)).toEqual({
      total: 3,
      capped: false,
    });
    // The transaction's scope ended with it.
    expect(await ids(reader)).toEqual([]);
  });

  it('keeps a scoped statement cancellable and its failures from leaving the transaction open', async () => {
    const controller = new AbortController();
    const reason = new Error('gone');
    const running = scopedPool(reader, WHOLE_SCOPE, controller.signal).query('SELECT pg_sleep(30)');
    setTimeout(() => controller.abort(reason), 200);
    await expect(running).rejects.toBe(reason);
    await expect(scopedPool(reader, WHOLE_SCOPE).query('SELECT 1/0')).rejects.toMatchObject({
      code: '22012',
    });
    // The next statement on the one connection is in no transaction and has no scope.
    const { rows } = await reader.query<{ s: string | null }>(
      "SELECT current_setting('observatory.scope', true) AS s",
    );
    expect(rows[0]?.s ?? '').toBe('');
    expect(await ids(scopedPool(reader, WHOLE_SCOPE))).toEqual(['a', 'b', 'c']);
  });
});

describe('the writer and the owner', () => {
  it('are told apart from the reader: only the owner bypasses row-level security', async () => {
    expect(await bypassesRowSecurity(reader)).toBe(false);
    expect(await bypassesRowSecurity(writer)).toBe(false);
    expect(await bypassesRowSecurity(owner)).toBe(true);
  });

  it('see every event and rollup row without a scope', async () => {
    for (const db of [writer, owner]) {
      expect(await ids(db)).toEqual(['a', 'b', 'c']);
      expect(await rollupSources(db)).toEqual(['/office', '/plant/a', '/plant/b/1']);
    }
    // The writer still reads the partitions (the jobs' probe of the default partition).
    await expect(writer.query('SELECT count(*) FROM events.cloud_event_default')).resolves.toBeDefined();
  });
});
