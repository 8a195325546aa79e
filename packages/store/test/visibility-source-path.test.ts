/**
 * The path by source (`withinScope`) on a real PostgreSQL with the three roles: a reader whose
 * scope is a list of exact sources reads its page, capped total, facets and histogram with the
 * sources as a condition, and finds exactly what the same rows give without it; its capped count
 * reads the source index, no row another viewer sees, and its histogram the rollup's (0019); its
 * page of one type merges each source's newest rows, reading none of another source; the rollup
 * finds where its newest events begin under its policy.
 */
import { seedEvents } from '@event-observatory/devstack';
import pg from 'pg';
import { beforeAll, describe, expect, it } from 'vitest';
import {
  countEvents,
  countStatement,
  type EventFilter,
  FACET_ROW_CAP,
  facetEvents,
  facetStatement,
  histogramEvents,
  histogramStatement,
  type ReadScope,
  readFilter,
  rollupNewestHour,
  scopedPool,
  searchEvents,
  searchStatement,
  sortsEveryMatch,
  totalEvents,
  WHOLE_SCOPE,
  withinScope,
} from '../src/index.js';
import { PREVIOUS_HOUR as hour, refreshRollupNow, scope, useRoleDatabase } from './scoped-roles.js';

const db = useRoleDatabase('store_srcpath');

/** 5 of the seed's 50 sources, as bench/search's restricted viewer. */
const FEW_SOURCES = [0, 1, 2, 3, 4].map((n) => `urn:seed:source-${n}`);
const FEW = scope({ sources: FEW_SOURCES });
/** The same rows as FEW (no seed type starts so), through a scope that has no path by source. */
const FEW_WITHOUT_PATH = scope({ sources: FEW_SOURCES, typePrefixes: ['no.such.type.'] });
const DAY_MS = 86_400_000;

/**
 * Every scan of `plan` reads within the range of one of FEW's sources (an index condition on it),
 * or is a sequential scan that dropped no row (an empty month); no bitmap. A month of few rows (the
 * current one, early in the month) may take the source's own index and drop the other types' rows:
 * never a row of another source.
 */
function expectScansWithinFewSources(plan: string): void {
  expect(plan).not.toMatch(/Bitmap/);
  const scans = plan.split(/\n(?=\s*->)/).filter((node) => /(Seq|Index) Scan/.test(node));
  expect(scans.filter((scan) => scan.includes('Index Cond:')).length).toBeGreaterThanOrEqual(5);
  for (const scan of scans) {
    if (/Seq Scan on /.test(scan)) expect(scan).not.toMatch(/Rows Removed by Filter: [1-9]/);
    else expect(scan).toMatch(/Index Cond: .*ce_source = 'urn:seed:source-[0-4]'/);
  }
}

beforeAll(async () => {
  const seeder = new pg.Pool({ connectionString: db.roles.owner.url, max: 1 });
  await seedEvents(seeder, { count: 20_000, spanMs: 60 * DAY_MS, end: hour });
  await seeder.end();
  await refreshRollupNow(db.writer);
  // What autovacuum does in steady state: the rollup's pages all-visible, so its indexes answer alone.
  await db.owner.query(
    'VACUUM (ANALYZE) events.cloud_event, events.event_rollup_hourly, events.event_rollup_daily',
  );
});

describe('withinScope', () => {
  it("narrows a filter's sources to a scope of exact sources, and nothing else", () => {
    expect(withinScope({ text: 'x' }, FEW)).toEqual({ text: 'x', sources: FEW_SOURCES });
    expect(withinScope({ sources: ['urn:seed:source-1', '/elsewhere'] }, FEW)).toEqual({
      sources: ['urn:seed:source-1'],
    });
    // None of its sources visible: the policy already admits nothing, the filter stays.
    expect(withinScope({ sources: ['/elsewhere'] }, FEW)).toEqual({ sources: ['/elsewhere'] });
    for (const other of [
      undefined,
      WHOLE_SCOPE,
      scope({}),
      FEW_WITHOUT_PATH,
      scope({ sources: ['/a'], sourcePrefixes: ['/b/'] }),
      scope({ sources: ['/a'], producers: ['bob'] }),
    ])
      expect(withinScope({ text: 'x' }, other)).toEqual({ text: 'x' });
  });
});

describe('a reader of a few sources', () => {
  const to = new Date(hour.getTime() + 3_600_000);
  const from = new Date(to.getTime() - 60 * DAY_MS);
  const FILTERS: EventFilter[] = [
    {},
    { types: ['com.example.t3'] },
    { text: 'alpha' },
    { text: 'overflow' },
    { sources: ['urn:seed:source-2', 'urn:seed:source-9'] },
    { sources: ['urn:seed:source-9'] },
    { from: new Date(to.getTime() - 7 * DAY_MS), to, text: 'bravo' },
  ];

  /** What a page reads for `filter` under `s`: rows, capped total, facets, a rollup and a table histogram. */
  async function pageOf(s: ReadScope, filter: EventFilter) {
    const reads = scopedPool(db.reader, s);
    const range = { from, to, bucketMs: DAY_MS };
    return {
      rows: (await searchEvents(reads, filter, { limit: 200 })).rows.map((r) => r.id),
      oldest: (await searchEvents(reads, filter, { limit: 20, order: 'oldest' })).rows.map((r) => r.id),
      count: await countEvents(reads, filter),
      total: await totalEvents(reads, filter),
      facets: await facetEvents(reads, filter),
      histogram: await histogramEvents(reads, filter, range),
      hourly: await histogramEvents(reads, filter, { ...range, bucketMs: 3_600_000 }),
    };
  }

  it('reads exactly what the same rows give without the path', async () => {
    for (const filter of FILTERS) {
      const withPath = await pageOf(FEW, filter);
      expect(withPath, JSON.stringify(filter)).toEqual(await pageOf(FEW_WITHOUT_PATH, filter));
      if (filter.sources?.includes('urn:seed:source-9') && filter.sources.length === 1) {
        expect(withPath.rows).toEqual([]);
      } else {
        expect(withPath.rows.length, JSON.stringify(filter)).toBeGreaterThan(0);
      }
    }
  });

  it('counts from the source index, not through the rows it cannot see; without the path, it walks the others', async () => {
    /** Rows the capped count's scans read and dropped, and the indexes they used. */
    const counted = async (s: ReadScope) => {
      const reads = scopedPool(db.reader, s);
      const { text, values } = countStatement(await readFilter(reads, {}));
      const { rows } = await reads.query<{ 'QUERY PLAN': string }>(
        `EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF) ${text}`,
        values,
      );
      const plan = rows.map((r) => r['QUERY PLAN']);
      const removed = plan
        .map((line) => /Rows Removed by Filter: (\d+)/.exec(line)?.[1])
        .reduce((sum, n) => sum + Number(n ?? 0), 0);
      return { removed, bySource: plan.some((line) => /Index Scan on \S*ce_source\S*/.test(line)) };
    };
    const few = await counted(FEW);
    const without = await counted(FEW_WITHOUT_PATH);
    expect(few.bySource).toBe(true);
    expect(without.removed).toBeGreaterThan(10_000);
    // A partition of few rows may be read whole when the planner finds that cheaper than its index
    // (a CI run saw 64 such rows): the path is there to not walk the others' rows.
    expect(few.removed).toBeLessThan(without.removed / 100);
  });

  it("pages one type through each source's own range, merged: the same pages, no other source's row read", async () => {
    const filter: EventFilter = { types: ['com.example.t1'] };
    /** Four pages of 25 older rows, then two newer back from the fourth's first row: their ids. */
    const walk = async (s: ReadScope) => {
      const reads = scopedPool(db.reader, s);
      const pages: string[][] = [];
      let page = await searchEvents(reads, filter, { limit: 25 });
      for (let i = 0; i < 4; i += 1) {
        pages.push(page.rows.map((r) => r.id));
        page = await searchEvents(reads, filter, { limit: 25, after: page.rows.at(-1)!.key });
      }
      const back = await searchEvents(reads, filter, { limit: 50, before: page.rows[0]!.key });
      pages.push(back.rows.map((r) => r.id));
      return pages;
    };
    const merged = await walk(FEW);
    expect(merged).toEqual(await walk(FEW_WITHOUT_PATH));
    expect(new Set(merged.slice(0, 4).flat()).size).toBe(100);

    const reads = scopedPool(db.reader, FEW);
    const { text, values } = searchStatement(await readFilter(reads, filter), { limit: 25 });
    const { rows } = await reads.query<{ 'QUERY PLAN': string }>(
      `EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF) ${text}`,
      values,
    );
    const plan = rows.map((r) => r['QUERY PLAN']).join('\n');
    // One ordered merge of the five sources' ranges: no sort of everything read.
    expect(plan).toMatch(/^Limit[\s\S]*\n {2}-> {2}Merge Append/);
    expect(plan.match(/ce_type_ce_source_occurred_at_idx/g)?.length).toBeGreaterThanOrEqual(5);
    expectScansWithinFewSources(plan);

    // A word or a payload value beside them has a narrower index of its own: one statement, `= ANY`.
    for (const narrower of [
      { text: 'alpha' },
      { payload: [{ path: ['device', 'id'], op: '=', value: 'dev-1' }] },
    ]) {
      const one = searchStatement({ ...filter, sources: FEW_SOURCES, ...narrower } as EventFilter, {
        limit: 25,
      });
      expect(one.text).not.toMatch(/UNION ALL/);
    }
    expect(searchStatement({ ...filter, sources: FEW_SOURCES }, { limit: 25 }).text).toMatch(/UNION ALL/);

    // A source named twice is still read once.
    const twice = {
      types: ['com.example.t1'],
      sources: ['urn:seed:source-1', 'urn:seed:source-1', 'urn:seed:source-11'],
    };
    const once = { ...twice, sources: ['urn:seed:source-1', 'urn:seed:source-11'] };
    const all = scopedPool(db.reader, WHOLE_SCOPE);
    const ids = (await searchEvents(all, twice, { limit: 40 })).rows.map((r) => r.id);
    expect(ids).toHaveLength(40);
    expect(new Set(ids).size).toBe(40);
    expect(ids).toEqual((await searchEvents(all, once, { limit: 40 })).rows.map((r) => r.id));
  });

  it("reads a histogram's hours from the rollup's index by source, and a type's by type (0019), and whole days from the daily rollup's (0020)", async () => {
    /** The plan of the histogram statement of `filter` under `s`, over the 60 days in days from `start`. */
    const planned = async (s: ReadScope, filter: EventFilter, start = from) => {
      const reads = scopedPool(db.reader, s);
      const statement = await histogramStatement(reads, filter, { from: start, to, bucketMs: DAY_MS });
      expect(statement.rollup).toBe(true);
      const { rows } = await reads.query<{ 'QUERY PLAN': string }>(
        `EXPLAIN ${statement.text}`,
        statement.values,
      );
      return rows.map((r) => r['QUERY PLAN']).join('\n');
    };
    const cases: [ReadScope, EventFilter, string][] = [
      [FEW, {}, 'event_rollup_hourly_source_idx'],
      [WHOLE_SCOPE, { types: ['com.example.t3'] }, 'event_rollup_hourly_type_idx'],
    ];
    for (const [s, filter, index] of cases) {
      const plan = await planned(s, filter);
      expect(plan, JSON.stringify(filter)).toMatch(
        new RegExp(`Index Only Scan using ${index} on event_rollup_hourly`),
      );
      expect(plan, JSON.stringify(filter)).not.toMatch(
        /Seq Scan on event_rollup_hourly|event_rollup_hourly_pkey/,
      );
      // Bars from a midnight: each is a whole day, read from the daily rollup by the same column.
      const daily = await planned(s, filter, new Date(Math.ceil(from.getTime() / DAY_MS) * DAY_MS));
      const dayIndex = index.replace('hourly', 'daily');
      expect(daily, JSON.stringify(filter)).toMatch(
        new RegExp(`Index Only Scan using ${dayIndex} on event_rollup_daily`),
      );
      expect(daily, JSON.stringify(filter)).not.toMatch(/Seq Scan on event_rollup_(hourly|daily)|_pkey/);
    }
  });

  it("finds the hour from which the rollup counts a number of the viewer's events, under its policy (the facets' bound)", async () => {
    /** The hour of the 100th newest event of type t3 among `sources` (all when undefined), read as the owner. */
    const hourOf100th = async (sources?: string[]) => {
      const { rows } = await db.owner.query<{ hour: Date }>(
        `SELECT date_trunc('hour', occurred_at, 'UTC') AS hour FROM events.cloud_event
          WHERE ce_type = 'com.example.t3' AND ($1::text[] IS NULL OR ce_source = ANY($1))
          ORDER BY occurred_at DESC OFFSET 99 LIMIT 1`,
        [sources ?? null],
      );
      return rows[0]!.hour;
    };
    const newestHour = async (s: ReadScope) => {
      const reads = scopedPool(db.reader, s);
      return rollupNewestHour(reads, await readFilter(reads, { types: ['com.example.t3'] }), 100);
    };
    const few = await hourOf100th(FEW_SOURCES);
    expect(few).not.toEqual(await hourOf100th());
    expect(await newestHour(FEW)).toEqual(few);
    expect(await newestHour(FEW_WITHOUT_PATH)).toEqual(few);
    expect(await newestHour(WHOLE_SCOPE)).toEqual(await hourOf100th());
    // Fewer than asked for in the whole range: no hour.
    const reads = scopedPool(db.reader, FEW);
    expect(await rollupNewestHour(reads, { types: ['com.example.t3'] }, 1_000_000)).toBeUndefined();
  });

  it("counts the facets of one type from each source's range in index order, merged, in one statement over the range", async () => {
    const reads = scopedPool(db.reader, FEW);
    const filter = await readFilter(reads, { types: ['com.example.t1'] });
    let checkouts = 0;
    const count = () => {
      checkouts += 1;
    };
    db.reader.on('acquire', count);
    const facets = await facetEvents(reads, filter);
    db.reader.off('acquire', count);
    expect(facets.counted).toBeGreaterThan(0);
    expect(checkouts).toBe(1);
    const statement = await facetStatement(reads, filter, FACET_ROW_CAP + 1);
    const { rows } = await reads.query({
      ...statement,
      text: `EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF) ${statement.text}`,
    });
    const plan = rows.map((r: { 'QUERY PLAN': string }) => r['QUERY PLAN']).join('\n');
    // Each source's newest rows through the index that holds exactly them, no bitmap of wider ones.
    expect(plan).toMatch(/Merge Append/);
    expect(plan.match(/ce_type_ce_source_occurred_at_idx/g)?.length).toBeGreaterThanOrEqual(5);
    expectScansWithinFewSources(plan);

    // A scope whose policy does not admit every row of those sources reads them month by month.
    const partly = scopedPool(db.reader, FEW_WITHOUT_PATH);
    const named = { types: ['com.example.t1'], sources: FEW_SOURCES };
    expect((await facetStatement(partly, named, FACET_ROW_CAP + 1)).planner).toBeUndefined();
    expect((await facetStatement(reads, named, FACET_ROW_CAP + 1)).planner).toBeDefined();
  });

  it('still sees nothing without a scope', async () => {
    const { rows } = await db.reader.query('SELECT 1 FROM events.cloud_event LIMIT 1');
    expect(rows).toEqual([]);
  });
});

describe('a block-sampled histogram', () => {
  it("samples the same share of the months' pages for every viewer, as the owner does", async () => {
    const to = new Date(hour.getTime() + 3_600_000);
    const range = { from: new Date(to.getTime() - 60 * DAY_MS), to, bucketMs: 7 * DAY_MS };
    // `alpha`: about 1 row in 7 of the 20,000, above 1,000; the months hold more than 2,000.
    const limits = { exactMax: 1_000, sampleRows: 2_000 };
    const shares = [];
    for (const pool of [
      db.owner,
      scopedPool(db.reader, WHOLE_SCOPE),
      scopedPool(db.reader, FEW_WITHOUT_PATH),
    ]) {
      const h = await histogramEvents(pool, { text: 'alpha' }, range, limits);
      expect(h.source).toBe('sample');
      shares.push(h.samplePercent);
    }
    // Of the rows of every month the range touches (two or three of them hold the 20,000).
    expect(shares[0]).toBeGreaterThan(100 * (2_000 / 20_000) * 0.8);
    expect(shares[0]).toBeLessThan(100 * (2_000 / 20_000) * 1.25);
    expect(shares).toEqual([shares[0], shares[0], shares[0]]);
  });

  it("gives a payload comparison's facets from that sample, of the viewer's rows only", async () => {
    const to = new Date(hour.getTime() + 3_600_000);
    const filter = {
      from: new Date(to.getTime() - 60 * DAY_MS),
      to,
      payload: [{ path: ['temperature'], op: '>' as const, value: 49 }],
    };
    // The few sources' 2,000 rows are above the sample's 1,000 too.
    const limits = { exactMax: 500, sampleRows: 1_000 };
    const all = await facetEvents(scopedPool(db.reader, WHOLE_SCOPE), filter, { limits });
    const few = await facetEvents(scopedPool(db.reader, FEW), filter, { limits });
    const named = await facetEvents(
      scopedPool(db.reader, WHOLE_SCOPE),
      { ...filter, sources: FEW_SOURCES },
      { limits },
    );
    expect(all.samplePercent).toBeDefined();
    expect(few.samplePercent).toBe(all.samplePercent);
    // The same pages' rows of the few sources, scaled alike: what everyone reads naming them. (Their
    // share of all's estimate is no check: their matches lie in runs of 5 rows every 100, so a
    // sample of a few hundred pages holds anywhere from a third to twice their tenth.)
    expect(few).toEqual(named);
    expect(few.counted).toBeGreaterThan(0);
    expect(few.counted).toBeLessThan(all.counted);
    expect(few.sources.map((v) => v.value).every((v) => FEW_SOURCES.includes(v))).toBe(true);
    expect(few.sources.reduce((n, v) => n + v.count, 0)).toBe(few.counted);
  });
});

describe('sortsEveryMatch', () => {
  it("finds the Sort under the Limit for the reader too, whose plan lists the policy's InitPlans first", async () => {
    // Sorted by an expression no index holds: a Sort under the Limit, whoever plans it.
    const statement = {
      text: 'SELECT ce_id FROM events.cloud_event ORDER BY lower(ce_id) LIMIT 5',
      values: [],
    };
    expect(await sortsEveryMatch(db.owner, statement)).toBe(true);
    expect(await sortsEveryMatch(scopedPool(db.reader, WHOLE_SCOPE), statement)).toBe(true);
    const ordered = {
      text: 'SELECT ce_id FROM events.cloud_event ORDER BY occurred_at DESC LIMIT 5',
      values: [],
    };
    expect(await sortsEveryMatch(scopedPool(db.reader, WHOLE_SCOPE), ordered)).toBe(false);
  });
});
