/**
 * The names a restricted reader's words are matched against (migration 0012), on a real PostgreSQL
 * with the three roles: the catalog holds every (source, type, producer) of the events, whoever
 * inserts them, and loses a month's with its partition; under a scope a word resolves exactly to the
 * names of the events that scope sees, never to another's, and finds the rows it found when the
 * names came from the event table; reading the names touches the catalog alone, the same pages
 * whatever the scope.
 */
import { cpSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { createDatabase, seedEvents } from '@event-observatory/devstack';
import pg from 'pg';
import { beforeAll, describe, expect, inject, it } from 'vitest';
import {
  createMonthPartition,
  createWritePool,
  type DatabasePool,
  DEFAULT_MIGRATIONS_DIR,
  detachPartition,
  insertEvents,
  migrate,
  type ReadScope,
  scopedPool,
  searchEvents,
  VISIBLE_NAMES_SQL,
  WHOLE_SCOPE,
  withWordParts,
} from '../src/index.js';
import { scopedEvent as event, PREVIOUS_HOUR as hour, scope, useRoleDatabase } from './scoped-roles.js';

const name = `store_names_${Date.now().toString(36)}`;
const db = useRoleDatabase('store_names');

const EVENTS = [
  event('pay-a', '/shop/a', 'com.acme.payment.failed', {
    authtype: 'token',
    authid: 'alice',
    namespace: 'ns-a',
  }),
  event('pay-b', '/shop/b', 'com.other.payment.failed', {
    authtype: 'token',
    authid: 'bob',
    namespace: 'ns-b',
  }),
  event('door', '/office/door', 'org.site.door.failed', null),
];

/** 5 of the seed's 50 sources, as bench/search's restricted viewer. */
const FEW_SOURCES = [0, 1, 2, 3, 4].map((n) => `urn:seed:source-${n}`);
const FEW = scope({ sources: FEW_SOURCES });
const SCOPES: ReadScope[] = [
  WHOLE_SCOPE,
  scope({}),
  FEW,
  scope({ sources: ['/shop/a'] }),
  scope({ sourcePrefixes: ['/shop/'] }),
  scope({ typePrefixes: ['org.', 'com.example.t1'] }),
  scope({ producers: ['bob'] }),
  scope({ producers: ['ns-a'], sources: ['urn:seed:source-7'] }),
];
const WORDS = ['failed', 'payment', 'shop', 'door', 'example', 'seed', 't1', 'acme', 'nothing'];

beforeAll(async () => {
  // Many rows per name: a skip scan under a scope of FEW walked the other 45 sources' rows.
  const seeder = new pg.Pool({ connectionString: db.roles.owner.url, max: 1 });
  await seedEvents(seeder, { count: 20_000, spanMs: 30 * 86_400_000, end: hour });
  await seeder.end();
  await insertEvents(db.writer, EVENTS);
  await db.owner.query('ANALYZE events.cloud_event, events.event_name');
});

const sorted = (values: Iterable<string>) => [...values].sort();

/** The distinct values of `column` among the events `db` sees (what the skip scan used to find). */
async function eventNames(db: DatabasePool, column: 'ce_type' | 'ce_source'): Promise<string[]> {
  const { rows } = await db.query<{ v: string }>(`SELECT DISTINCT ${column} AS v FROM events.cloud_event`);
  return sorted(rows.map((r) => r.v));
}

/** Whether `name` holds `word` between separators, as the search matches a word against names. */
const holds = (name: string, word: string) =>
  new RegExp(`(^|[^\\p{L}\\p{N}])${word}([^\\p{L}\\p{N}]|$)`, 'iu').test(name);

describe('the names catalog', () => {
  it('holds every (month, source, type, producer) inserted, by the writer or by a seed', async () => {
    const { rows } = await db.owner.query<{
      month: string;
      ce_source: string;
      producer_ids: (string | null)[];
    }>(
      `SELECT month::text, ce_source, producer_ids FROM events.event_name
        WHERE ce_source !~ '^urn:seed:' ORDER BY ce_source`,
    );
    const month = `${hour.toISOString().slice(0, 7)}-01`;
    expect(rows).toEqual([
      { month, ce_source: '/office/door', producer_ids: [null, null] },
      { month, ce_source: '/shop/a', producer_ids: ['alice', 'ns-a'] },
      { month, ce_source: '/shop/b', producer_ids: ['bob', 'ns-b'] },
    ]);
    // The seed's 50 sources and 20 types, in every month it spans, once each.
    const seeded = await db.owner.query<{ pairs: number; distinct: number }>(
      `SELECT count(*)::int AS pairs, count(DISTINCT (ce_source, ce_type))::int AS distinct
         FROM events.event_name WHERE ce_source ~ '^urn:seed:'`,
    );
    const months = await db.owner.query<{ n: number }>(
      `SELECT count(DISTINCT date_trunc('month', occurred_at AT TIME ZONE 'UTC'))::int AS n
         FROM events.cloud_event WHERE ce_source ~ '^urn:seed:'`,
    );
    expect(seeded.rows[0]!.distinct).toBe(100);
    expect(seeded.rows[0]!.pairs).toBeLessThanOrEqual(100 * months.rows[0]!.n);
    // A batch that stores nothing new (all duplicates) adds nothing.
    const before = await db.owner.query('SELECT count(*)::int AS n FROM events.event_name');
    expect((await insertEvents(db.writer, EVENTS)).inserted).toBe(0);
    expect((await db.owner.query('SELECT count(*)::int AS n FROM events.event_name')).rows).toEqual(
      before.rows,
    );
  });

  it("loses a month's names when its partition is detached, and only that month's", async () => {
    const future = new Date('2091-01-15T00:00:00Z');
    expect(await createMonthPartition(db.writer, future)).toBe('cloud_event_2091_01');
    await insertEvents(db.writer, [event('future', '/shop/a', 'com.future.only', null, future)]);
    const futureTypes = async () =>
      (
        await db.owner.query<{ month: string }>(
          "SELECT month::text FROM events.event_name WHERE ce_type = 'com.future.only'",
        )
      ).rows;
    expect(await futureTypes()).toEqual([{ month: '2091-01-01' }]);
    await detachPartition(db.writer, 'cloud_event_2091_01');
    expect(await futureTypes()).toEqual([]);
    const { wordParts } = await withWordParts(db.owner, { text: 'shop' });
    expect(wordParts?.get('shop')).toEqual({ types: [], sources: ['/shop/a', '/shop/b'] });
  });

  it('is filled from the events stored before its migration', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'names-migrations-'));
    const url = await createDatabase(inject('stack').databaseUrl, `${name}_late`);
    const late = createWritePool({ url, max: 1 });
    try {
      // The migrations before this one.
      cpSync(DEFAULT_MIGRATIONS_DIR, dir, {
        recursive: true,
        filter: (f) => f === DEFAULT_MIGRATIONS_DIR || basename(f) < '0012',
      });
      await migrate({ url, dir });
      await insertEvents(late, EVENTS);
      await migrate({ url });
      const { rows } = await late.query<{ t: string }>(
        'SELECT ce_type AS t FROM events.event_name ORDER BY 1',
      );
      expect(rows.map((r) => r.t)).toEqual(sorted(EVENTS.map((e) => e.type)));
    } finally {
      await late.end();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('a restricted reader', () => {
  it('sees no name without a scope', async () => {
    expect((await db.reader.query('SELECT * FROM events.event_name')).rows).toEqual([]);
  });

  it('matches its words against exactly the names of the events it sees', async () => {
    for (const s of SCOPES) {
      const scoped = scopedPool(db.reader, s);
      const [types, sources] = [await eventNames(scoped, 'ce_type'), await eventNames(scoped, 'ce_source')];
      const { wordParts } = await withWordParts(scoped, { text: WORDS.join(' ') });
      for (const w of WORDS) {
        expect(wordParts?.get(w), `${JSON.stringify(s)} ${w}`).toEqual({
          types: types.filter((t) => holds(t, w)),
          sources: sources.filter((n) => holds(n, w)),
        });
      }
    }
  });

  it("is never given a name of another's events", async () => {
    const { wordParts } = await withWordParts(scopedPool(db.reader, scope({ sources: ['/shop/a'] })), {
      text: 'failed other office seed example',
    });
    expect(Object.fromEntries(wordParts ?? [])).toEqual({
      failed: { types: ['com.acme.payment.failed'], sources: [] },
      other: { types: [], sources: [] },
      office: { types: [], sources: [] },
      seed: { types: [], sources: [] },
      example: { types: [], sources: [] },
    });
    // Nor a catalog row another scope admits.
    const { rows } = await scopedPool(db.reader, FEW).query<{ s: string }>(
      'SELECT DISTINCT ce_source AS s FROM events.event_name ORDER BY 1',
    );
    expect(rows.map((r) => r.s)).toEqual(FEW_SOURCES);
  });

  it('finds the rows the owner finds, less those it does not see', async () => {
    const texts = ['failed', 'payment', 'shop door', 'failed -acme', 'seed t13 -overflow', 'overflow'];
    for (const s of SCOPES) {
      const scoped = scopedPool(db.reader, s);
      const { rows: seen } = await scoped.query<{ id: string }>('SELECT ce_id AS id FROM events.cloud_event');
      const visible = new Set(seen.map((r) => r.id));
      for (const text of texts) {
        const all = await searchEvents(db.owner, { text }, { limit: 2_000 });
        const mine = await searchEvents(scoped, { text }, { limit: 2_000 });
        expect(all.more, text).toBe(false);
        expect(sorted(mine.rows.map((r) => r.id)), `${JSON.stringify(s)} ${text}`).toEqual(
          sorted(all.rows.map((r) => r.id).filter((id) => visible.has(id))),
        );
      }
    }
  });

  it('has the one scope predicate inlined into each policy: no call per row, the scope read once', async () => {
    for (const table of ['events.cloud_event', 'events.event_rollup_hourly', 'events.event_name']) {
      const { rows } = await scopedPool(db.reader, FEW).query<{ 'QUERY PLAN': string }>(
        `EXPLAIN (COSTS OFF) SELECT 1 FROM ${table}`,
      );
      const filters = rows.map((r) => r['QUERY PLAN']).filter((line) => line.includes('Filter:'));
      expect(filters.length, table).toBeGreaterThan(0);
      for (const f of filters) {
        expect(f, table).not.toMatch(/scope_admits|read_scope/);
        // An InitPlan's output: `(InitPlan 2).col1` from PostgreSQL 17, `$1` before.
        expect(f, table).toMatch(/ce_source = ANY \((\(InitPlan \d+\)\.col1|\$\d+)\)/);
      }
    }
  });

  it('reads the names from the catalog alone, the same pages whatever its scope', async () => {
    interface PlanNode {
      'Relation Name'?: string;
      'Shared Hit Blocks': number;
      'Shared Read Blocks': number;
      Plans?: PlanNode[];
    }
    const nodes = (n: PlanNode): PlanNode[] => [n, ...(n.Plans ?? []).flatMap(nodes)];
    const scanned = async (s: ReadScope) => {
      const { rows } = await scopedPool(db.reader, s).query<{ 'QUERY PLAN': [{ Plan: PlanNode }] }>(
        `EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) ${VISIBLE_NAMES_SQL}`,
      );
      const scans = nodes(rows[0]!['QUERY PLAN'][0].Plan).filter((n) => n['Relation Name']);
      return scans.map((n) => ({
        relation: n['Relation Name'],
        pages: n['Shared Hit Blocks'] + n['Shared Read Blocks'],
      }));
    };
    const { rows: sizes } = await db.owner.query<{ names: number; events: number }>(
      `SELECT (pg_relation_size('events.event_name') / 8192)::int AS names,
              (SELECT sum(pg_relation_size(inhrelid) / 8192)::int FROM pg_inherits
                WHERE inhparent = 'events.cloud_event'::regclass) AS events`,
    );
    const { names, events } = sizes[0]!;
    expect(names * 20).toBeLessThan(events);
    const few = await scanned(FEW);
    expect(few).toEqual([{ relation: 'event_name', pages: names }]);
    expect(await scanned(WHOLE_SCOPE)).toEqual(few);
  });
});
