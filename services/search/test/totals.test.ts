/**
 * The total a search page shows when the planner's estimate is wrong: statistics taken on 25,000
 * rows, then all but 25 deleted (autovacuum off, so nothing re-analyses), so the planner still
 * expects ~25,000 matches. The page counts them and shows their exact number, whether or not the
 * first page holds them all.
 */
import { ESTIMATE_GATE, estimateEvents, totalEvents } from '@event-observatory/store';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Harness, startHarness } from './harness.js';

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
    expect(await totalEvents(h.db, {})).toEqual({ total: 25, capped: false, estimated: false });
    const body = await (await h.get('/events?limit=10&range=all')).text();
    expect(body).toContain('Matching events: <strong>25</strong>');
  });
});
