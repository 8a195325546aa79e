/**
 * The total a search page shows when the planner's estimate is wrong: statistics taken on 25,000
 * rows, then all but 25 deleted (autovacuum off, so nothing re-analyses), so the planner still
 * expects ~25,000 matches. The page counts them and shows their exact number, whether or not the
 * first page holds them all: from the facets' count, with no count statement of its own, unless
 * the facets failed.
 */
import { ESTIMATE_GATE, estimateEvents, totalEvents } from '@event-observatory/store';
import pg from 'pg';
import { Registry } from 'prom-client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cursorCodec } from '../src/cursor.js';
import { parseSearch } from '../src/filters.js';
import { createSearchMeters } from '../src/metrics.js';
import { runSearch } from '../src/search.js';
import { type Harness, SECRET, startHarness } from './harness.js';

/**
 * A pool on the test database that keeps the text of every statement it runs and, when told to,
 * answers the facets' statements with PostgreSQL's statement timeout (SQLSTATE 57014) instead of
 * running them.
 */
class WatchedPool extends pg.Pool {
  readonly statements: string[] = [];
  failFacets = false;

  // biome-ignore lint/suspicious/noExplicitAny: pg.Pool#query's overloads, passed through whole.
  override query(...args: any[]): any {
    const text: string = typeof args[0] === 'string' ? args[0] : args[0].text;
    this.statements.push(text);
    if (this.failFacets && text.startsWith('WITH matched')) {
      return Promise.reject(
        Object.assign(new Error('canceling statement due to statement timeout'), { code: '57014' }),
      );
    }
    // biome-ignore lint/suspicious/noExplicitAny: as above.
    return (super.query as any)(...args);
  }
}

/** A count budget no loaded machine runs out of: the test is about the count, not its deadline. */
const AMPLE_MS = 30_000;

let h: Harness;

beforeAll(async () => {
  h = await startHarness('totals', { seed: 25_000 });
  const { rows } = await h.db.query<{ name: string }>(
    // sql-witness: shapes the table's statistics (ANALYZE, deletes) the estimated totals under test depend on.
    `SELECT inhrelid::regclass::text AS name FROM pg_inherits WHERE inhparent = 'events.cloud_event'::regclass`,
  );
  for (const r of rows) await h.db.query(`ALTER TABLE ${r.name} SET (autovacuum_enabled = false)`);
  await h.db.query('ANALYZE events.cloud_event');
  await h.db.query(`DELETE FROM events.cloud_event WHERE (data ->> 'n')::int % 1000 <> 0`);
});

afterAll(async () => {
  await h?.close();
});

describe('search page total', () => {
  it('is the exact number of rows when the first page holds every match, whatever the estimate says', async () => {
    const body = await (await h.get('/events?range=all')).text();
    expect(body).toContain('Matching events: <strong>25</strong>');
  });

  it('is counted, not the estimate, when more matches lie beyond the first page', async () => {
    expect(await estimateEvents(h.db, {})).toBeGreaterThanOrEqual(ESTIMATE_GATE);
    // With its default 50 ms, counting past 24,975 dead rows ran out under CI's parallel suites.
    expect(await totalEvents(h.db, {}, AMPLE_MS)).toEqual({ total: 25, capped: false, estimated: false });
    const body = await (await h.get('/events?limit=10&range=all')).text();
    expect(body).toContain('Matching events: <strong>25</strong>');
  });
});

describe('search page total beside the facets', () => {
  const pageOf = async (pool: WatchedPool, query = 'limit=10&range=all') =>
    runSearch(
      { pool, meters: createSearchMeters(new Registry()), cursors: cursorCodec(SECRET) },
      parseSearch(new URLSearchParams(query)),
    );

  it("is the facets' count when more matches lie beyond the page: no count statement of its own", async () => {
    const pool = new WatchedPool({ connectionString: h.databaseUrl, max: 4 });
    try {
      const view = await pageOf(pool);
      expect(view.facets).toMatchObject({ counted: 25, capped: false });
      expect(view.total).toEqual({ total: 25, capped: false, estimated: false });
      expect(pool.statements.some((s) => s.startsWith('WITH matched'))).toBe(true);
      expect(pool.statements.filter((s) => s.startsWith('EXPLAIN') || s.includes('AS capped'))).toEqual([]);
    } finally {
      await pool.end();
    }
  });

  it('is counted on its own when the facets failed', async () => {
    const pool = new WatchedPool({ connectionString: h.databaseUrl, max: 4 });
    pool.failFacets = true;
    try {
      // One seed type of 20, which every kept row has (n % 1000 = 0): the planner expects 1,250,
      // under the gate, so the count runs under the session's timeout. Past the gate it gets
      // VERIFY_BUDGET_MS, which 24,975 dead rows outlast on a loaded machine (estimated 10,000+).
      const view = await pageOf(pool, 'limit=10&range=all&type=com.example.t0');
      expect(view.facets).toMatchObject({ status: 504 });
      expect(view.total).toEqual({ total: 25, capped: false, estimated: false });
      expect(pool.statements.some((s) => s.startsWith('EXPLAIN'))).toBe(true);
      expect(pool.statements.some((s) => s.includes('AS capped'))).toBe(true);
    } finally {
      await pool.end();
    }
  });
});
