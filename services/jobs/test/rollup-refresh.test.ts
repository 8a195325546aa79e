import { rollupSeverities } from '@event-observatory/store';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Harness, insertEvents, sample, startHarness } from './harness.js';

let h: Harness;

beforeAll(async () => {
  h = await startHarness('rollup');
});

afterAll(async () => {
  await h?.close();
});

const HOUR = 3_600_000;
const base = Math.floor(Date.now() / HOUR) * HOUR;
const hoursAgo = (n: number, minute = 0) => new Date(base - n * HOUR + minute * 60_000);

async function rollup(): Promise<unknown[]> {
  const { rows } = await h.db.query(
    // sql-witness: recomputes the rollup in its own SQL to check the job's incremental refresh.
    `SELECT bucket_start, ce_type, ce_source, event_count::int, error_count::int, max_severity_rank
       FROM events.event_rollup_hourly ORDER BY 1, 2, 3`,
  );
  return rows;
}

async function groupBy(): Promise<unknown[]> {
  const { rows } = await h.db.query(
    `SELECT date_trunc('hour', occurred_at, 'UTC') AS bucket_start, ce_type, ce_source, count(*)::int AS event_count,
            count(*) FILTER (WHERE severity_rank >= 50)::int AS error_count, max(severity_rank) AS max_severity_rank
       FROM events.cloud_event GROUP BY 1, 2, 3 ORDER BY 1, 2, 3`,
  );
  return rows;
}

describe('rollup-refresh on real PostgreSQL', () => {
  it('reports rollup_staleness -1 while the rollup is empty', async () => {
    const jobs = h.jobs();
    expect(await jobs.run('rollup-refresh')).toMatchObject({ outcome: 'success', hoursRefreshed: 0 });
    expect(sample(await h.scrape(), 'rollup_staleness')).toBe(-1);
  });

  it("gives the overview the last refresh's time even when that refresh found nothing new", async () => {
    await h.db.query('DELETE FROM events.event_rollup_watermark');
    const since = new Date(0);
    expect((await rollupSeverities(h.db, since)).refreshedAt).toBeUndefined();
    const before = Date.now();
    expect(await h.jobs().run('rollup-refresh')).toMatchObject({ outcome: 'success', hoursRefreshed: 0 });
    const summary = await rollupSeverities(h.db, since);
    expect(summary.groupsByMaxRank).toEqual([]);
    expect(summary.refreshedAt?.getTime()).toBeGreaterThanOrEqual(before - 5_000);
  });

  it('equals a GROUP BY over the table after inserts in several hours, and after late events for an old hour', async () => {
    const jobs = h.jobs();
    const severities = ['info', 'error', 'warn', 'fatal', undefined];
    await insertEvents(
      h.db,
      Array.from({ length: 60 }, (_, i) => ({
        at: hoursAgo(i % 5, i),
        id: `a-${i}`,
        type: i % 3 ? 'com.example.reading' : 'com.example.alarm',
        source: `urn:test:site-${i % 2}`,
        severity: severities[i % 5],
      })),
    );
    expect(await jobs.run('rollup-refresh')).toMatchObject({ outcome: 'success', hoursRefreshed: 5 });
    expect(await rollup()).toEqual(await groupBy());
    expect((await rollup()).length).toBeGreaterThan(5);

    // Late events for an hour 50 hours back, and more for the newest hour: only those two hours are recomputed.
    await insertEvents(h.db, [
      { at: hoursAgo(50, 5), id: 'late-1', severity: 'error' },
      { at: hoursAgo(50, 6), id: 'late-2' },
      { at: hoursAgo(0, 59), id: 'new-1', source: 'urn:test:site-0', severity: 'critical' },
    ]);
    expect(await jobs.run('rollup-refresh')).toMatchObject({ outcome: 'success', hoursRefreshed: 2 });
    expect(await rollup()).toEqual(await groupBy());
    expect(await jobs.run('rollup-refresh')).toMatchObject({ outcome: 'success' });
    expect(await rollup()).toEqual(await groupBy());
  });

  it('counts rows of a transaction that was still open while a refresh ran', async () => {
    const writer = await h.db.connect();
    try {
      await writer.query('BEGIN');
      await insertEvents(writer, [{ at: hoursAgo(7, 1), id: 'slow-writer' }]);
      await new Promise((r) => setTimeout(r, 50));
      // Its own source: a name the slow writer added but has not committed would make this insert
      // wait for that commit (the name catalog's key, migration 0012), and the test with it.
      await insertEvents(h.db, [{ at: hoursAgo(8, 1), id: 'quick-writer', source: 'urn:test:quick' }]);
      expect(await h.jobs().run('rollup-refresh')).toMatchObject({ outcome: 'success' });
      await writer.query('COMMIT');
    } finally {
      writer.release();
    }
    expect(await rollup()).not.toEqual(await groupBy());
    expect(await h.jobs().run('rollup-refresh')).toMatchObject({ outcome: 'success' });
    expect(await rollup()).toEqual(await groupBy());
  });

  it('reports seconds since the newest rolled-up event as rollup_staleness', async () => {
    const { rows } = await h.db.query<{ newest: Date }>(
      'SELECT max(ingested_at) AS newest FROM events.cloud_event',
    );
    h.now = new Date(rows[0]!.newest.getTime() + 90_000);
    expect(sample(await h.scrape(), 'rollup_staleness')).toBeCloseTo(90, 3);
  });
});
