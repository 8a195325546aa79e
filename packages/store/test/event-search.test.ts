/**
 * The search totals on a real PostgreSQL: exact below the cap, capped above it, counted even when
 * the planner expects at least twice the cap (the estimate stands in only when that count runs out
 * of its budget), exact at the cap's boundary whatever the estimate; and the statistics target of
 * migration 0007 on every partition, including one created later.
 */
import { createDatabase, seedEvents } from '@event-observatory/devstack';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { ESTIMATE_GATE, estimateEvents, migrate, TOTAL_CAP, totalEvents } from '../src/index.js';

const SEEDED = 25_000;
const SPAN_MS = 7 * 86_400_000;
/** A count budget no loaded machine runs out of, where a test is about the count and not its deadline. */
const AMPLE_MS = 60_000;
const end = new Date(Math.floor(Date.now() / 1000) * 1000);
let pool: pg.Pool;

/** A migrated database of its own holding the standard seed, analysed. */
async function seededPool(name: string): Promise<pg.Pool> {
  const url = await createDatabase(inject('stack').databaseUrl, `${name}_${Date.now().toString(36)}`);
  await migrate({ url });
  const db = new pg.Pool({ connectionString: url, max: 2 });
  await seedEvents(db, { count: SEEDED, spanMs: SPAN_MS, end });
  await db.query('ANALYZE events.cloud_event');
  return db;
}

beforeAll(async () => {
  pool = await seededPool('search');
});

afterAll(async () => {
  await pool?.end();
});

describe('search totals', () => {
  it('are exact below the cap', async () => {
    // temperature = n % 100: 250 of the 25,000 rows have 7.
    const total = await totalEvents(pool, { payload: [{ path: ['temperature'], op: '=', value: 7 }] });
    expect(total).toEqual({ total: 250, capped: false, estimated: false });
  });

  it('count up to the cap and say capped when the planner expects fewer than twice the cap', async () => {
    // The newest 60 % of the rows: 15,000 matches, estimated below the gate, so counted.
    const filter = { from: new Date(end.getTime() - 0.6 * SPAN_MS) };
    expect(await estimateEvents(pool, filter)).toBeLessThan(ESTIMATE_GATE);
    expect(await totalEvents(pool, filter)).toEqual({ total: TOTAL_CAP, capped: true, estimated: false });
  });

  it('are counted, not taken from the estimate, when the planner expects at least twice the cap', async () => {
    const estimate = await estimateEvents(pool, {});
    expect(estimate).toBeGreaterThan(SEEDED * 0.9);
    expect(estimate).toBeLessThan(SEEDED * 1.1);
    expect(await totalEvents(pool, {}, AMPLE_MS)).toEqual({
      total: TOTAL_CAP,
      capped: true,
      estimated: false,
    });
  });

  it('fall back to the capped estimate when the count of a large estimate runs out of its budget', async () => {
    // Every row holds the word `reading`: 25,000 expected; counting 10,001 of them (a bitmap of
    // 25,000 rows, then 10,001 heap visits) takes longer than a 1 ms budget.
    const filter = { text: 'reading' };
    expect(await estimateEvents(pool, filter)).toBeGreaterThanOrEqual(ESTIMATE_GATE);
    expect(await totalEvents(pool, filter, 1)).toEqual({ total: TOTAL_CAP, capped: true, estimated: true });
    expect(await totalEvents(pool, filter, AMPLE_MS)).toEqual({
      total: TOTAL_CAP,
      capped: true,
      estimated: false,
    });
  });
});

describe('search totals at the cap, with statistics that expect 25,000 matches', () => {
  // Statistics taken on 25,000 rows, then rows deleted with autovacuum off: the planner still
  // expects ~25,000 matches of an empty filter, so only the count can tell 10,000 from 10,001.
  let stale: pg.Pool;

  beforeAll(async () => {
    stale = await seededPool('search_cap');
    const { rows } = await stale.query<{ name: string }>(
      `SELECT inhrelid::regclass::text AS name FROM pg_inherits WHERE inhparent = 'events.cloud_event'::regclass`,
    );
    for (const r of rows) await stale.query(`ALTER TABLE ${r.name} SET (autovacuum_enabled = false)`);
    await stale.query(`DELETE FROM events.cloud_event WHERE (data ->> 'n')::int > $1`, [TOTAL_CAP + 1]);
  });

  afterAll(async () => {
    await stale?.end();
  });

  it('shows 10,000+ for exactly 10,001 matches', async () => {
    expect(await estimateEvents(stale, {})).toBeGreaterThanOrEqual(ESTIMATE_GATE);
    expect(await totalEvents(stale, {}, AMPLE_MS)).toEqual({
      total: TOTAL_CAP,
      capped: true,
      estimated: false,
    });
  });

  it('shows exactly 10,000 for 10,000 matches', async () => {
    await stale.query(`DELETE FROM events.cloud_event WHERE (data ->> 'n')::int = $1`, [TOTAL_CAP + 1]);
    expect(await estimateEvents(stale, {})).toBeGreaterThanOrEqual(ESTIMATE_GATE);
    expect(await totalEvents(stale, {}, AMPLE_MS)).toEqual({
      total: TOTAL_CAP,
      capped: false,
      estimated: false,
    });
  });
});

describe('statistics of the containment filters (migration 0007)', () => {
  it('give data and extensions 1,000 histogram entries on every partition, one created later too', async () => {
    await pool.query(`SELECT events.create_month_partition('2032-03-01')`);
    const { rows } = await pool.query<{ partition: string; targets: number[] }>(
      `SELECT c.relname AS partition, array_agg(a.attstattarget::int ORDER BY a.attname) AS targets
         FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
         JOIN pg_attribute a ON a.attrelid = c.oid AND a.attname IN ('data', 'extensions')
        WHERE i.inhparent = 'events.cloud_event'::regclass
        GROUP BY c.relname`,
    );
    expect(rows.map((r) => r.partition)).toContain('cloud_event_2032_03');
    for (const r of rows) expect(r, r.partition).toEqual({ partition: r.partition, targets: [1000, 1000] });
  });
});
