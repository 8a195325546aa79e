/**
 * Facets and histogram on a real PostgreSQL over several monthly partitions: facets read partition by
 * partition yet count exactly what one statement over the range counts (below the cap, and the newest
 * `FACET_ROW_CAP` above it); a table histogram is counted when few matches are expected and
 * estimated from a block sample, scaled, when many are.
 */
import { rollupFromEvents, seedEvents } from '@event-observatory/devstack';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { clause, estimateRows, SqlParams, whereOf } from '../src/event-search.js';
import {
  countEvents,
  DAY_MS,
  daySpans,
  type EventFilter,
  FACET_MORE_VALUES,
  FACET_ROW_CAP,
  FACET_VALUES,
  type Facets,
  facetEvents,
  facetStatement,
  HOUR_MS,
  histogramEvents,
  readFilter,
  rollupIngestedFrom,
  scopedPool,
  searchEvents,
  searchStatement,
  sortsEveryMatch,
  totalEvents,
  WHOLE_SCOPE,
} from '../src/index.js';
import { createMigratedDatabase } from './migrated-database.js';
import { refreshRollupNow } from './scoped-roles.js';

const SEEDED = 24_000;
const SPAN_MS = 120 * 86_400_000;
const end = new Date(Math.floor(Date.now() / 1000) * 1000);
let pool: pg.Pool;

beforeAll(async () => {
  const url = await createMigratedDatabase('facets');
  pool = new pg.Pool({ connectionString: url, max: 2 });
  await seedEvents(pool, { count: SEEDED, spanMs: SPAN_MS, end });
  await pool.query('ANALYZE events.cloud_event');
});

afterAll(async () => {
  await pool?.end();
});

/** Type counts of the newest `limit` rows with this type or none, by one statement. */
async function typeCounts(where: string, values: unknown[], limit = SEEDED): Promise<Map<string, number>> {
  const { rows } = await pool.query<{ v: string; n: number }>(
    `SELECT ce_type AS v, count(*)::int AS n FROM (SELECT ce_type FROM events.cloud_event ${where}
      ORDER BY occurred_at DESC LIMIT ${limit}) m GROUP BY 1`,
    values,
  );
  return new Map(rows.map((r) => [r.v, r.n]));
}

async function monthsOf(where: string, values: unknown[]): Promise<number> {
  const { rows } = await pool.query<{ n: number }>(
    `SELECT count(DISTINCT date_trunc('month', occurred_at))::int AS n FROM events.cloud_event ${where}`,
    values,
  );
  return rows[0]!.n;
}

/** The source of rows a test plants (`plantBurst`), which the seed does not make. */
const BURST = 'urn:test:burst';

/** The start of the month `back` months before `end`'s. */
function month(back: number): Date {
  return new Date(Date.UTC(end.getUTCFullYear(), end.getUTCMonth() - back, 1));
}

/** `n` rows of `BURST` evenly between `from` and `to`, of `type`, or of a new one every 100 rows back in time (`banded`). */
async function plantBurst(to: Date, from: Date, n: number, type: string, banded: boolean): Promise<void> {
  await pool.query(
    // sql-witness: plants a month dense with one source's rows, which the seed does not make.
    `INSERT INTO events.cloud_event (occurred_at, ce_source, ce_id, ce_type, raw)
     SELECT $1::timestamptz - n * (($1::timestamptz - $2::timestamptz) / ($3::int + 1)), $6,
            'b-' || $4 || n, CASE WHEN $5 THEN $4 || ((n - 1) / 100) ELSE $4 END, '{}'::jsonb
       FROM generate_series(1, $3::int) AS n`,
    [to, from, n, type, banded, BURST],
  );
}

/**
 * Removes the planted rows and empties the rollup a test may have refreshed (as the seed left it),
 * so that the later tests' plans and counts see the seed as before.
 */
async function removeBurst(): Promise<void> {
  await pool.query('DELETE FROM events.cloud_event WHERE ce_source = $1', [BURST]);
  // sql-witness: puts the rollup back as the seed left it (never refreshed).
  await pool.query('DELETE FROM events.event_rollup_hourly');
  await pool.query('DELETE FROM events.event_rollup_watermark');
  await pool.query('ANALYZE events.cloud_event');
}

/** The facets of `filter` (every planted type listed), and every time bound their statements of the event table were given. */
async function watchedFacets(filter: EventFilter): Promise<{ facets: Facets; bounds: Date[] }> {
  const statements: unknown[][] = [];
  const watched = new Proxy(pool, {
    get: (target, key) =>
      key === 'query'
        ? (...args: [string | { text: string; values: unknown[] }, unknown[]?]) => {
            const [text, values] =
              typeof args[0] === 'string' ? [args[0], args[1]] : [args[0].text, args[0].values];
            if (text.includes('FROM events.cloud_event')) statements.push(values ?? []);
            return (target.query as (...a: unknown[]) => Promise<unknown>)(...args);
          }
        : Reflect.get(target, key),
  });
  const facets = await facetEvents(watched, filter, { more: 'types' });
  return { facets, bounds: statements.flat().filter((v): v is Date => v instanceof Date) };
}

/**
 * The banded types of the older planted month among the facets, which must equal one statement's
 * newest `FACET_ROW_CAP` before `month(0)`; returned for the test to check how many were reached.
 */
async function burstOldCounts(facets: Facets): Promise<[string, number][]> {
  const expected = await typeCounts(
    'WHERE ce_source = $1 AND occurred_at < $2',
    [BURST, month(0)],
    FACET_ROW_CAP,
  );
  const byType = (m: Map<string, number>) =>
    [...m]
      .filter(([t]) => t.startsWith('burst.old.'))
      .sort((a, b) => a[0].localeCompare(b[0], 'en', { numeric: true }));
  const found = byType(new Map(facets.types.map((t) => [t.value, t.count])));
  expect(found).toEqual(byType(expected));
  return found;
}

describe('facets', () => {
  it('count every match of a range spanning months, as one statement would', async () => {
    // Severity error and above: n % 100 = 0 or n % 500 = 1, 288 rows over four or five months.
    const facets = await facetEvents(pool, { minSeverity: 50 });
    expect(await monthsOf('WHERE severity_rank >= 50', [])).toBeGreaterThanOrEqual(4);
    expect(facets.capped).toBe(false);
    const expected = await typeCounts('WHERE severity_rank >= 50', []);
    expect(new Map(facets.types.map((t) => [t.value, t.count]))).toEqual(
      new Map([...expected].sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0])).slice(0, 10)),
    );
    expect(facets.severities.reduce((n, s) => n + s.count, 0)).toBe(288);
    expect(facets.counted).toBe(288);
  });

  it('count the newest FACET_ROW_CAP matches and say capped beyond it', async () => {
    const facets = await facetEvents(pool, {});
    expect(facets.capped).toBe(true);
    expect(facets.severities.reduce((n, s) => n + s.count, 0)).toBe(FACET_ROW_CAP);
    expect(facets.counted).toBe(FACET_ROW_CAP);
    const expected = await typeCounts('', [], FACET_ROW_CAP);
    for (const t of facets.types) expect(t.count).toBe(expected.get(t.value));
  });

  it('keep to the bounds of a range that starts and ends inside months', async () => {
    const filter: EventFilter = {
      from: new Date(end.getTime() - 0.7 * SPAN_MS),
      to: new Date(end.getTime() - 0.4 * SPAN_MS),
      types: ['com.example.t3'],
    };
    const where = 'WHERE occurred_at >= $1 AND occurred_at < $2 AND ce_type = $3';
    const values = [filter.from, filter.to, 'com.example.t3'];
    expect(await monthsOf(where, values)).toBeGreaterThanOrEqual(2);
    const facets = await facetEvents(pool, filter);
    expect(facets.capped).toBe(false);
    expect(facets.types).toEqual([
      { value: 'com.example.t3', count: (await typeCounts(where, values)).get('com.example.t3') },
    ]);
  });

  it("count exactly the newest matches when a month holds far more than the cap still allows, reading only that month's newest part", async () => {
    // 9,600 rows in the last whole month, then 3,000 in the one before: the cap leaves 401 of those,
    // the newest, whose types (a new one every 100 rows back in time) say which were counted.
    await plantBurst(month(0), month(1), 9_600, 'burst.new', false);
    await plantBurst(month(1), month(2), 3_000, 'burst.old.', true);
    try {
      const { facets, bounds } = await watchedFacets({ sources: [BURST], to: month(0) });
      expect(facets.capped).toBe(true);
      expect(await burstOldCounts(facets)).toEqual([
        ['burst.old.0', 100],
        ['burst.old.1', 100],
        ['burst.old.2', 100],
        ['burst.old.3', 100],
      ]);
      // The month before was read from a time inside it, not from its start.
      expect(bounds.some((t) => t > month(2) && t < month(1))).toBe(true);
      // The source alone, through a pool that plans it so, is read in index order: the same counts.
      const reads = scopedPool(pool, WHOLE_SCOPE);
      const alone: EventFilter = { sources: [BURST], to: month(0) };
      expect((await facetStatement(reads, alone, FACET_ROW_CAP + 1)).planner).toBeDefined();
      expect(await facetEvents(reads, alone, { more: 'types' })).toEqual(facets);
    } finally {
      await removeBurst();
    }
  });

  it('read from the hour the rollup says the newest matches begin when the newest month holds fewer than the cap', async () => {
    // 6,000 rows in the last whole month, then 9,000 in the one before, counted by the rollup: the
    // cap leaves 4,000 of those, which no guess from the newer month's density would cut out.
    await plantBurst(month(0), month(1), 6_000, 'burst.new', false);
    await plantBurst(month(1), month(2), 9_000, 'burst.old.', true);
    try {
      await refreshRollupNow(pool);
      const { facets, bounds } = await watchedFacets({ sources: [BURST], to: month(0) });
      expect(facets.capped).toBe(true);
      const old = await burstOldCounts(facets);
      expect(old).toHaveLength(40);
      expect(old.every(([, n]) => n === 100)).toBe(true);
      // One piece from the rollup's hour, inside the month before, instead of the newer month alone.
      const hours = bounds.filter((t) => t > month(2) && t < month(1) && t.getTime() % 3_600_000 === 0);
      expect(hours).toHaveLength(1);
      expect(bounds.some((t) => t.getTime() === month(1).getTime())).toBe(false);
      // A rollup last refreshed before the newer month began is not asked: month by month again.
      // sql-witness: moves the rollup's watermark back, as a refresh job that stopped would leave it.
      await pool.query('UPDATE events.event_rollup_watermark SET ingested_from = $1', [month(2)]);
      const stale = await watchedFacets({ sources: [BURST], to: month(0) });
      expect(stale.facets).toEqual(facets);
      expect(stale.bounds.some((t) => t.getTime() === month(1).getTime())).toBe(true);
    } finally {
      await removeBurst();
    }
  });

  it('list FACET_VALUES values of each facet, FACET_MORE_VALUES of the one asked for more, and say how many they leave out', async () => {
    // 20 types and 1,000 subjects among the newest 20,000.
    const facets = await facetEvents(pool, {});
    expect(facets.types).toHaveLength(FACET_VALUES);
    expect(facets.hidden).toMatchObject({
      types: 20 - FACET_VALUES,
      subjects: 1000 - FACET_VALUES,
      extensions: 0,
    });
    const more = await facetEvents(pool, {}, { more: 'subjects' });
    expect(more.subjects).toHaveLength(FACET_MORE_VALUES);
    expect(more.subjects.slice(0, FACET_VALUES)).toEqual(facets.subjects);
    expect(more.hidden.subjects).toBe(1000 - FACET_MORE_VALUES);
    expect(more.types).toEqual(facets.types);
  });

  it('filter on the unknown severity (a null rank) and exclude it', async () => {
    await pool.query(
      // sql-witness: plants events without a severity, which the seed does not make.
      `INSERT INTO events.cloud_event (occurred_at, ce_source, ce_id, ce_type, raw)
       SELECT $1::timestamptz - n * interval '1 second', 'urn:test:unknown', 'u-' || n, 'com.example.unknown', '{}'::jsonb
         FROM generate_series(1, 3) AS n`,
      [end],
    );
    const unknown = await facetEvents(pool, { sources: ['urn:test:unknown'] });
    expect(unknown.severities).toEqual([{ value: '', count: 3 }]);
    const only = await facetEvents(pool, { ranks: [null, 60], from: new Date(end.getTime() - 86_400_000) });
    expect(only.severities.map((s) => s.value).sort()).toEqual(['', '60']);
    const not = await facetEvents(pool, {
      exclude: { ranks: [null] },
      sources: ['urn:test:unknown', 'urn:seed:source-1'],
    });
    expect(not.types.map((t) => t.value)).not.toContain('com.example.unknown');
    expect(not.counted).toBe(SEEDED / 50);
    // The histogram tests count the seed alone.
    await pool.query(`DELETE FROM events.cloud_event WHERE ce_source = 'urn:test:unknown'`);
  });
});

describe('facets and histogram of a text and types', () => {
  // Rows of one day, cleared after: a type whose lexemes other rows carry in their data, and a
  // type without lexemes at all.
  const at = new Date(end.getTime() - 2 * 86_400_000);
  const planted: [type: string, note: string, n: number][] = [
    ['com.example.hint-a', 'alpha com.example.hint-b', 4],
    ['com.example.hint-b', 'alpha', 3],
    ['com.example.hint-b', 'bravo', 2],
    ['---', 'alpha', 5],
  ];
  beforeAll(async () => {
    for (const [type, note, n] of planted) {
      await pool.query(
        // sql-witness: plants the rows the type lexemes could be confused by, which the seed does not make.
        `INSERT INTO events.cloud_event (occurred_at, ce_source, ce_id, ce_type, raw, data)
         SELECT $1::timestamptz - n * interval '1 second', 'urn:test:hint', $2 || $3 || n, $2, '{}'::jsonb,
                jsonb_build_object('note', $3::text)
           FROM generate_series(1, $4::int) AS n`,
        [at, type, note, n],
      );
    }
  });
  afterAll(async () => {
    await pool.query(`DELETE FROM events.cloud_event WHERE ce_source = 'urn:test:hint'`);
  });

  it.each<[string, EventFilter, number]>([
    ['a word and a type others mention', { text: 'alpha', types: ['com.example.hint-b'] }, 3],
    ['a word and a type without lexemes', { text: 'alpha', types: ['---'] }, 5],
    ['a word and both', { text: 'alpha', types: ['---', 'com.example.hint-b'] }, 8],
    ['a word left out', { text: '-bravo', types: ['com.example.hint-b'] }, 3],
    ['web search syntax', { text: '"alpha" or bravo', types: ['com.example.hint-b'] }, 5],
    ['a type prefix', { text: 'alpha', types: ['com.example.hint-*'] }, 7],
    ['a text without words', { text: '_', types: ['com.example.hint-b'] }, 0],
    ['a text without words left out', { text: '-_', types: ['com.example.hint-b'] }, 5],
  ])('count and page %s as the text and types apart do', async (_, filter, expected) => {
    // All months: the seed's rows carry the words too, so the planner reads the facets by bitmap.
    const facets = await facetEvents(pool, filter);
    expect(await totalEvents(pool, filter)).toEqual({ total: expected, capped: false, estimated: false });
    // The page's statement as the text alone and with the types asked of the text index too, whichever
    // the planner's choice makes `searchEvents` use: the same rows.
    const page = { limit: 50 };
    const ids = async (typeLexemes: boolean) => {
      const { text, values } = searchStatement(await readFilter(pool, filter), page, undefined, {
        typeLexemes,
      });
      return (await pool.query<{ ce_id: string }>(text, values)).rows.map((r) => r.ce_id);
    };
    const plain = await ids(false);
    expect(plain).toHaveLength(expected);
    expect(await ids(true)).toEqual(plain);
    expect((await searchEvents(pool, filter, page)).rows.map((r) => r.id)).toEqual(plain);
    expect(facets.counted, 'facets').toBe(expected);
    expect(facets.types.reduce((n, t) => n + t.count, 0)).toBe(expected);
    const range = { from: new Date(at.getTime() - 86_400_000), to: end, bucketMs: 3_600_000 };
    const histogram = await histogramEvents(pool, filter, range);
    expect(histogram.source).toBe('table');
    const counted = histogram.buckets.reduce((n, b) => n + b.severe + b.warning + b.other, 0);
    expect(counted, 'histogram').toBe(expected);
  });

  it.each([
    ['two common types', ['com.example.t3', 'com.example.t4']],
    ['a common type beside one without lexemes', ['---', 'com.example.t3']],
  ])('count a word and %s, read through a bitmap, as the text and types apart do', async (_, types) => {
    const filter: EventFilter = { text: 'alpha', types };
    const { rows } = await pool.query<{ n: number }>(
      // sql-witness: counts the matches in its own SQL, without the type lexemes under test.
      `SELECT count(*)::int AS n FROM events.cloud_event
        WHERE search_doc @@ plainto_tsquery('simple', 'alpha') AND ce_type = ANY($1::text[])`,
      [types],
    );
    expect(rows[0]!.n).toBeGreaterThan(5);
    expect(rows[0]!.n).toBeLessThan(FACET_ROW_CAP);
    // A whole month of the facets is planned as a bitmap, so its statement asks for the types too.
    // The month before the one holding `end`: the one holding it has next to no rows on its first day.
    const plan = await pool.query<{ 'QUERY PLAN': string }>(
      // sql-witness: the plain statement of one month of the facets, as the planner sees it.
      `EXPLAIN SELECT ce_type FROM events.cloud_event
        WHERE occurred_at >= date_trunc('month', $2::timestamptz - interval '1 month')
          AND occurred_at < date_trunc('month', $2::timestamptz)
          AND search_doc @@ plainto_tsquery('simple', 'alpha') AND ce_type = ANY($1::text[])
        ORDER BY occurred_at DESC LIMIT ${FACET_ROW_CAP + 1}`,
      [types, end],
    );
    expect(plan.rows.map((r) => r['QUERY PLAN']).join('\n')).toContain('Bitmap Heap Scan');
    expect((await facetEvents(pool, filter)).counted).toBe(rows[0]!.n);
  });

  it('page and count a rare word and a common type, whose every match is read and sorted, with the types asked of the text index', async () => {
    // `overflow`: n % 997 = 0, 24 rows, of which the type of n % 20 = 3; the type's index is no
    // shorter a path to them, so the planner reads the word's bitmap and sorts.
    const filter: EventFilter = { text: 'overflow', types: ['com.example.t3'] };
    const resolved = await readFilter(pool, filter);
    expect(await sortsEveryMatch(pool, searchStatement(resolved, { limit: 50 }))).toBe(true);
    const { rows } = await pool.query<{ ce_id: string }>(
      // sql-witness: the matches in their order by its own SQL, without the type lexemes under test.
      `SELECT ce_id FROM events.cloud_event
        WHERE search_doc @@ plainto_tsquery('simple', 'overflow') AND ce_type = 'com.example.t3'
        ORDER BY occurred_at DESC, event_uid DESC`,
    );
    expect(rows.length).toBeGreaterThan(0);
    expect((await searchEvents(pool, filter, { limit: 50 })).rows.map((r) => r.id)).toEqual(
      rows.map((r) => r.ce_id),
    );
    expect((await totalEvents(pool, filter)).total).toBe(rows.length);
    // A common word and type is read in time order instead, and stops at the page.
    const common = await readFilter(pool, { text: 'alpha', types: ['com.example.t3'] });
    expect(await sortsEveryMatch(pool, searchStatement(common, { limit: 50 }))).toBe(false);
  });

  it('ask the text index for the types too, so a common word is intersected with them there', async () => {
    const p = new SqlParams();
    const where = whereOf({ text: 'alpha', types: ['com.example.t3'] }, p, { typeLexemes: true });
    const { rows } = await pool.query<{ 'QUERY PLAN': string }>(
      `EXPLAIN SELECT 1 FROM events.cloud_event ${clause(where)}`,
      p.values,
    );
    const plan = rows.map((r) => r['QUERY PLAN']).join('\n');
    expect(plan).toMatch(/search_doc @@ .*'alpha'.*'t3'/);
  });
});

describe('histogram from the table', () => {
  const range = { from: new Date(end.getTime() - SPAN_MS), to: end, bucketMs: 10 * 86_400_000 };
  const total = (h: { buckets: { severe: number; warning: number; other: number }[] }) =>
    h.buckets.reduce((n, b) => n + b.severe + b.warning + b.other, 0);

  it('is counted exactly when few matches are expected', async () => {
    // `overflow`: n % 997 = 0, 24 rows.
    const h = await histogramEvents(pool, { text: 'overflow' }, range, { exactMax: 1000, sampleRows: 5000 });
    expect(h.source).toBe('table');
    expect(total(h)).toBe(24);
  });

  it('is estimated from a block sample, scaled, when many matches are expected', async () => {
    // Every row says `reading`: 24,000 expected, above 1,000; a sample of ~5,000 of the range's rows.
    const h = await histogramEvents(pool, { text: 'reading' }, range, { exactMax: 1000, sampleRows: 5000 });
    expect(h.source).toBe('sample');
    expect(h.samplePercent).toBeGreaterThan(15);
    expect(h.samplePercent).toBeLessThan(30);
    expect(total(h)).toBeGreaterThan(SEEDED * 0.75);
    expect(total(h)).toBeLessThan(SEEDED * 1.25);
    // Ten days of it hold ~2,000 rows, fewer than the sample's 5,000: counted, exactly.
    const short = { ...range, from: new Date(end.getTime() - 10 * 86_400_000), bucketMs: 86_400_000 };
    const counted10 = await histogramEvents(pool, { text: 'reading' }, short, {
      exactMax: 1000,
      sampleRows: 5000,
    });
    expect(counted10.source).toBe('table');
    expect(total(counted10)).toBe(
      (
        await pool.query('SELECT count(*)::int AS n FROM events.cloud_event WHERE occurred_at >= $1', [
          short.from,
        ])
      ).rows[0].n,
    );
    // The same filter under the default limits (this store is far below them) is counted.
    const counted = await histogramEvents(pool, { text: 'reading' }, range);
    expect(counted.source).toBe('table');
    expect(total(counted)).toBe(SEEDED);
  });
});

describe('facets and histogram of a payload comparison', () => {
  const range = { from: new Date(end.getTime() - SPAN_MS), to: end, bucketMs: 10 * 86_400_000 };
  const limits = { exactMax: 1000, sampleRows: 5000 };
  const warm = { path: ['temperature'], op: '>' as const, value: 49 };
  const total = (h: { buckets: { severe: number; warning: number; other: number }[] }) =>
    h.buckets.reduce((n, b) => n + b.severe + b.warning + b.other, 0);
  // sql-witness: the comparison's matches by its own SQL (temperature is n % 100: half the rows).
  const matching = async (extra = '', values: unknown[] = []) =>
    (
      await pool.query<{ n: number }>(
        `SELECT count(*)::int AS n FROM events.cloud_event WHERE (data->>'temperature')::int > 49${extra}`,
        values,
      )
    ).rows[0]!.n;
  const near = (estimate: number, exact: number) => {
    expect(estimate).toBeGreaterThan(exact * 0.75);
    expect(estimate).toBeLessThan(exact * 1.25);
  };

  it('are sampled over many rows, whatever the planner guesses the comparison matches', async () => {
    // The planner expects a few dozen of these 12,000 matches (a default selectivity), so the
    // histogram was counted, and the facets sought them back through the range: on a large
    // store, past the statement timeout.
    expect(await estimateRows(pool, { payload: [warm] })).toBeLessThan(limits.exactMax);
    const all = await matching();
    const h = await histogramEvents(pool, { payload: [warm] }, range, limits);
    expect(h.source).toBe('sample');
    near(total(h), all);
    const f = await facetEvents(pool, { ...range, payload: [warm] }, { limits });
    expect(f.samplePercent).toBe(h.samplePercent);
    expect(f.capped).toBe(false);
    near(f.counted, all);
    // The types listed, scaled, against their matches counted.
    near(
      f.types.reduce((n, t) => n + t.count, 0),
      await matching(' AND ce_type = ANY($1)', [f.types.map((t) => t.value)]),
    );
    // Within a query-language expression too.
    const within = { where: { not: { match: { payload: [warm] } } } };
    expect((await histogramEvents(pool, within, range, limits)).source).toBe('sample');
    expect((await facetEvents(pool, { ...range, ...within }, { limits })).samplePercent).toBeDefined();
  });

  it('are counted when the other conditions leave few rows, or under the default limits on this small store', async () => {
    // A source: 480 rows, fewer than either limit whatever the comparison matches.
    const one = { sources: ['urn:seed:source-7'], payload: [warm] };
    const exact = await matching(' AND ce_source = $1', ['urn:seed:source-7']);
    const h = await histogramEvents(pool, one, range, limits);
    expect(h.source).toBe('table');
    expect(total(h)).toBe(exact);
    const f = await facetEvents(pool, { ...range, ...one }, { limits });
    expect(f.samplePercent).toBeUndefined();
    expect(f.counted).toBe(exact);
    // 24,000 rows, below the default sample of 100,000: the newest matches, up to the cap.
    const counted = await facetEvents(pool, { payload: [warm] });
    expect(counted.samplePercent).toBeUndefined();
    expect(counted.capped).toBe(true);
    expect(counted.counted).toBe(10_000);
  });
});

describe('the rollup histogram', () => {
  it('is not read for a filter it cannot answer (severity ranks, excluded values, extension names): the bars count what the list shows', async () => {
    try {
      await refreshRollupNow(pool);
      const range = {
        from: new Date(Math.floor((end.getTime() - 30 * 86_400_000) / 3_600_000) * 3_600_000),
        to: new Date(Math.ceil(end.getTime() / 3_600_000) * 3_600_000 + 3_600_000),
        bucketMs: 3_600_000,
      };
      const filters: EventFilter[] = [
        { ranks: [50] },
        { types: ['com.example.t3'], ranks: [null] },
        { exclude: { types: ['com.example.t3'] } },
        { sources: ['urn:seed:source-3'], exclude: { ranks: [null] } },
        { hasExtensions: ['no-such-extension'] },
      ];
      for (const filter of filters) {
        const h = await histogramEvents(pool, filter, range);
        expect(h.source, JSON.stringify(filter)).toBe('table');
        const bars = h.buckets.reduce((n, b) => n + b.severe + b.warning + b.other, 0);
        const listed = await countEvents(pool, { ...filter, from: range.from, to: range.to });
        expect(listed.capped).toBe(false);
        expect(bars, JSON.stringify(filter)).toBe(listed.total);
      }
      // The rollup still answers time, types and sources.
      expect((await histogramEvents(pool, { types: ['com.example.t3'] }, range)).source).toBe('rollup');
    } finally {
      await removeBurst();
    }
  });

  it('never shows fewer events than the table: hours ingested since the last refresh are counted from it', async () => {
    const url = await createMigratedDatabase('rollup');
    const db = new pg.Pool({ connectionString: url, max: 2 });
    try {
      const now = new Date(Math.floor(Date.now() / 3_600_000) * 3_600_000 + 1_800_000);
      await seedEvents(db, { count: 2_000, spanMs: 2 * 86_400_000, end: now });
      // Before the first refresh the rollup has counted no row.
      expect(await rollupIngestedFrom(db)).toBe('-infinity');
      await rollupFromEvents(db);
      const { rows: marks } = await db.query('SELECT ingested_from FROM events.event_rollup_watermark');
      expect(await rollupIngestedFrom(db)).toEqual(marks[0].ingested_from);
      // After the refresh: a late event for an hour the rollup has counted, and a new hour's events.
      await db.query(
        `INSERT INTO events.cloud_event (occurred_at, ce_source, ce_id, ce_type, raw)
         SELECT $1::timestamptz - g * interval '1 second', 'urn:test:late', 'late-' || g, 'com.example.late', '{}'
           FROM generate_series(0, $2::int - 1) AS g`,
        [new Date(now.getTime() - 30 * 3_600_000), 7],
      );
      await db.query(
        `INSERT INTO events.cloud_event (occurred_at, ce_source, ce_id, ce_type, raw)
         SELECT $1::timestamptz + g * interval '1 second', 'urn:test:new', 'new-' || g, 'com.example.new', '{}'
           FROM generate_series(1, $2::int) AS g`,
        [now, 11],
      );
      const range = {
        from: new Date(now.getTime() - 3 * 86_400_000),
        to: new Date(now.getTime() + 3_600_000),
        bucketMs: 3_600_000,
      };
      const total = async (filter: EventFilter) => {
        const h = await histogramEvents(db, filter, range);
        expect(h.source).toBe('rollup');
        return h.buckets.reduce((n, b) => n + b.severe + b.warning + b.other, 0);
      };
      const { rows } = await db.query<{ n: number }>(
        'SELECT count(*)::int AS n FROM events.cloud_event WHERE occurred_at >= $1 AND occurred_at < $2',
        [range.from, range.to],
      );
      expect(await total({})).toBe(rows[0]!.n);
      expect(await total({ types: ['com.example.late'] })).toBe(7);
      expect(await total({ sources: ['urn:test:new'] })).toBe(11);
      // A refresh that commits between the watermark's read and the counts leaves the counts an
      // older watermark than their rollup: more hours from the table, none missed or counted twice.
      let raced = false;
      const racing = Object.create(db) as pg.Pool;
      racing.query = (async (...args: Parameters<pg.Pool['query']>) => {
        const result = await (db.query as (...a: unknown[]) => Promise<unknown>)(...args);
        const text = typeof args[0] === 'string' ? args[0] : (args[0] as { text: string }).text;
        if (!raced && text.includes('event_rollup_watermark')) {
          raced = true;
          await rollupFromEvents(db);
        }
        return result;
      }) as pg.Pool['query'];
      const h = await histogramEvents(racing, {}, range);
      expect(raced).toBe(true);
      expect(h.buckets.reduce((n, b) => n + b.severe + b.warning + b.other, 0)).toBe(rows[0]!.n);
      // The totals per hour follow every write of the rollup: the seeders' upserts above, the
      // refresh's deletes and inserts here.
      await refreshRollupNow(db);
      const table = async (sql: string) => (await db.query(sql)).rows;
      expect(
        await table(
          'SELECT bucket_start, event_count::int AS events, error_count::int AS errors FROM events.event_rollup_hour_total ORDER BY 1',
        ),
      ).toEqual(
        await table(
          'SELECT bucket_start, sum(event_count)::int AS events, sum(error_count)::int AS errors FROM events.event_rollup_hourly GROUP BY 1 ORDER BY 1',
        ),
      );
    } finally {
      await db.end();
    }
  });

  it('keeps the days equal to the hours summed per UTC day through every write of the hourly rollup', async () => {
    const url = await createMigratedDatabase('rollup_daily');
    const db = new pg.Pool({ connectionString: url, max: 2 });
    const rows = async (sql: string) => (await db.query(sql)).rows;
    /** The daily rollup, which must equal the hourly one summed per UTC day (after `step`). */
    const days = async (step: string) => {
      const daily = await rows(
        'SELECT bucket_start, ce_type, ce_source, event_count::int, error_count::int FROM events.event_rollup_daily ORDER BY 1, 2, 3',
      );
      const summed =
        await rows(`SELECT date_trunc('day', bucket_start, 'UTC') AS bucket_start, ce_type, ce_source,
               sum(event_count)::int AS event_count, sum(error_count)::int AS error_count
          FROM events.event_rollup_hourly GROUP BY 1, 2, 3 ORDER BY 1, 2, 3`);
      expect(daily, step).toEqual(summed);
      return daily;
    };
    const plant = (at: Date, id: string, type: string) =>
      db.query(
        `INSERT INTO events.cloud_event (occurred_at, ce_source, ce_id, ce_type, raw)
         VALUES ($1, 'urn:seed:source-3', $2, $3, '{}')`,
        [at, id, type],
      );
    try {
      const now = new Date(Math.floor(Date.now() / HOUR_MS) * HOUR_MS + HOUR_MS / 2);
      await seedEvents(db, { count: 2_000, spanMs: 10 * DAY_MS, end: now });
      // The seeder inserts the hours.
      await rollupFromEvents(db);
      expect((await days('inserted')).length).toBeGreaterThan(0);
      // The refresh deletes the hours of late events and inserts them again.
      for (const back of [2, 5, 8])
        await plant(new Date(now.getTime() - back * DAY_MS), `late-${back}`, 'com.example.t3');
      await refreshRollupNow(db);
      await days('refreshed');
      // The seeder's upsert updates every hour it counts again.
      await plant(new Date(now.getTime() - 3 * DAY_MS), 'late-upsert', 'com.example.t4');
      await rollupFromEvents(db);
      await days('upserted');
      // The last hours of a type go: so do its days.
      await db.query("DELETE FROM events.event_rollup_hourly WHERE ce_type = 'com.example.t3'");
      expect((await days('deleted')).some((d) => d.ce_type === 'com.example.t3')).toBe(false);
      // A writer in another time zone (a repair by hand, on the day Berlin's clocks go forward).
      const client = await db.connect();
      try {
        await client.query("SET TimeZone = 'Europe/Berlin'");
        await client.query(
          `INSERT INTO events.event_rollup_hourly (bucket_start, ce_type, ce_source, event_count, error_count)
           SELECT h, 'com.example.dst', 'urn:test:dst', 1, 0
             FROM generate_series('2026-03-28 20:00+00'::timestamptz, '2026-03-30 03:00+00', interval '1 hour') AS h`,
        );
      } finally {
        client.release(true);
      }
      // Two writers of different hours of one day: the later one sums the day after the other
      // committed (each write waits for the refresh's lock), so neither hour is lost.
      const [a, b] = [await db.connect(), await db.connect()];
      try {
        const hour = (h: number, n: number) =>
          `INSERT INTO events.event_rollup_hourly (bucket_start, ce_type, ce_source, event_count, error_count)
           VALUES ('2026-02-10 0${h}:00+00', 'com.example.race', 'urn:test:race', ${n}, 0)`;
        await a.query('BEGIN');
        await a.query(hour(1, 1));
        const second = b.query(hour(2, 2));
        await new Promise((r) => setTimeout(r, 300));
        await a.query('COMMIT');
        await second;
      } finally {
        a.release();
        b.release();
      }
      const race = (await days('two writers of one day')).filter((d) => d.ce_type === 'com.example.race');
      expect(race.map((d) => d.event_count)).toEqual([3]);
      const dst = (await days('another time zone')).filter((d) => d.ce_type === 'com.example.dst');
      expect(dst.map((d) => [d.bucket_start.toISOString(), d.event_count])).toEqual([
        ['2026-03-28T00:00:00.000Z', 4],
        ['2026-03-29T00:00:00.000Z', 24],
        ['2026-03-30T00:00:00.000Z', 4],
      ]);
    } finally {
      await db.end();
    }
  });

  it('counts bars of whole days from the daily rollup, the other hours and those not refreshed yet from the hourly rollup and the table', async () => {
    const url = await createMigratedDatabase('rollup_days');
    const db = new pg.Pool({ connectionString: url, max: 2 });
    try {
      const now = new Date(Math.floor(Date.now() / HOUR_MS) * HOUR_MS + HOUR_MS / 2);
      await seedEvents(db, { count: 3_000, spanMs: 20 * DAY_MS, end: now });
      await rollupFromEvents(db);
      // Not refreshed yet: a late event in a day the rollup has counted, and new ones.
      const late = new Date(now.getTime() - 6 * DAY_MS);
      for (const [at, id] of [
        [late, 'late'],
        [new Date(now.getTime() + 1_000), 'new'],
      ] as const) {
        await db.query(
          `INSERT INTO events.cloud_event (occurred_at, ce_source, ce_id, ce_type, raw)
           VALUES ($1, 'urn:seed:source-3', $2, 'com.example.t3', '{}')`,
          [at, id],
        );
      }
      const midnight = Math.floor(now.getTime() / DAY_MS) * DAY_MS - 12 * DAY_MS;
      const to = new Date(Math.ceil(now.getTime() / HOUR_MS) * HOUR_MS + HOUR_MS);
      const filters: EventFilter[] = [
        { types: ['com.example.t3'] },
        { sources: ['urn:seed:source-3', 'urn:seed:source-8'] },
        {},
      ];
      // Bars from a midnight, and from another hour (a whole day and an hourly one in each bar).
      for (const from of [new Date(midnight), new Date(midnight + 7 * HOUR_MS)]) {
        const range = { from, to, bucketMs: 2 * DAY_MS };
        for (const filter of filters) {
          const h = await histogramEvents(db, filter, range);
          expect(h.source).toBe('rollup');
          const p = new SqlParams();
          const where = whereOf({ ...filter, from, to }, p);
          const { rows: counted } = await db.query<{ start: Date; n: number }>(
            `SELECT date_bin('2 days', occurred_at, ${p.add(from)}::timestamptz) AS start, count(*)::int AS n
               FROM events.cloud_event ${clause(where)} GROUP BY 1 ORDER BY 1`,
            p.values,
          );
          const bars = h.buckets
            .map((b) => ({ start: b.start, n: b.severe + b.warning + b.other }))
            .filter((b) => b.n > 0);
          expect(bars, `${from.toISOString()} ${JSON.stringify(filter)}`).toEqual(counted);
        }
      }
      // The days are read: a day's count changed by hand changes its bar.
      const before = await histogramEvents(db, filters[0]!, {
        from: new Date(midnight),
        to,
        bucketMs: 2 * DAY_MS,
      });
      const { rowCount } = await db.query(
        `UPDATE events.event_rollup_daily SET event_count = event_count + 1000
          WHERE bucket_start = $1 AND ce_type = 'com.example.t3'`,
        [new Date(midnight + 2 * DAY_MS)],
      );
      expect(rowCount).toBeGreaterThan(0);
      const after = await histogramEvents(db, filters[0]!, {
        from: new Date(midnight),
        to,
        bucketMs: 2 * DAY_MS,
      });
      expect(after.buckets[1]!.other - before.buckets[1]!.other).toBe(1000 * rowCount!);
    } finally {
      await db.end();
    }
  });

  it('splits a range into the days inside one bar and the other hours', () => {
    const d = (day: number, hour = 0) => Date.UTC(2026, 0, 1 + day, hour);
    expect(daySpans(new Date(d(0)), new Date(d(6, 5)), 2 * DAY_MS)).toEqual({
      days: [[d(0), d(6)]],
      hours: [[d(6), d(6, 5)]],
    });
    // Bars from 07:00: the day after each bar's start lies whole in it, the next one does not.
    expect(daySpans(new Date(d(0, 7)), new Date(d(4, 7)), 2 * DAY_MS)).toEqual({
      days: [
        [d(1), d(2)],
        [d(3), d(4)],
      ],
      hours: [
        [d(0, 7), d(1)],
        [d(2), d(3)],
        [d(4), d(4, 7)],
      ],
    });
    // Bars of one day from another hour than midnight hold no whole day.
    expect(daySpans(new Date(d(0, 7)), new Date(d(3)), DAY_MS)).toEqual({
      days: [],
      hours: [[d(0, 7), d(3)]],
    });
  });
});
