/**
 * The search totals on a real PostgreSQL: exact below the cap, capped above it, and not counted at
 * all when the planner expects at least twice the cap; and the statistics target of migration 0007
 * on every partition, including one created later.
 */
import { createDatabase, seedEvents } from '@event-observatory/devstack';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { ESTIMATE_GATE, estimateEvents, migrate, TOTAL_CAP, totalEvents } from '../src/index.js';

const SEEDED = 25_000;
const SPAN_MS = 7 * 86_400_000;
const end = new Date(Math.floor(Date.now() / 1000) * 1000);
let pool: pg.Pool;

beforeAll(async () => {
  const stack = inject('stack');
  const url = await createDatabase(stack.databaseUrl, `search_${Date.now().toString(36)}`);
  await migrate({ url });
  pool = new pg.Pool({ connectionString: url, max: 2 });
  await seedEvents(pool, { count: SEEDED, spanMs: SPAN_MS, end });
  await pool.query('ANALYZE events.cloud_event');
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

  it('are not counted when the planner expects at least twice the cap', async () => {
    const estimate = await estimateEvents(pool, {});
    expect(estimate).toBeGreaterThan(SEEDED * 0.9);
    expect(estimate).toBeLessThan(SEEDED * 1.1);
    expect(await totalEvents(pool, {})).toEqual({ total: TOTAL_CAP, capped: true, estimated: true });
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
