/**
 * Facets and histogram over spans far wider than the stored months, and over events stored before
 * year 100 or far ahead (rows written before the pipeline's time window existed): the facet pass
 * reads the partitions the catalog lists, so its statements are as many as the partitions, not the
 * calendar months of the span, and every event is counted.
 */
import { createDatabase, seedEvents } from '@event-observatory/devstack';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { facetEvents, histogramEvents, listPartitions, migrate } from '../src/index.js';

const yearStart = (year: number) => {
  const d = new Date(0);
  d.setUTCFullYear(year, 0, 1);
  return d;
};
const end = new Date(Math.floor(Date.now() / 1000) * 1000);
let pool: pg.Pool;

beforeAll(async () => {
  const url = await createDatabase(inject('stack').databaseUrl, `span_${Date.now().toString(36)}`);
  await migrate({ url });
  pool = new pg.Pool({ connectionString: url, max: 2 });
  await seedEvents(pool, { count: 30, spanMs: 86_400_000, end });
  // One event in a partition of year 50, one in the default partition in year 9000.
  await seedEvents(pool, {
    count: 1,
    spanMs: 1,
    end: new Date(yearStart(50).getTime() + 3_600_000),
    idPrefix: 'old',
  });
  await pool.query(
    `INSERT INTO events.cloud_event (occurred_at, ce_source, ce_id, ce_type, raw, extensions)
     VALUES ('9000-06-01T00:00:00Z', 'urn:far', 'far-1', 'com.example.far', '{}', '{}')`,
  );
});

afterAll(async () => {
  await pool?.end();
});

/** Statements the pool runs while `work` runs. */
async function statementsOf(work: () => Promise<unknown>): Promise<number> {
  let n = 0;
  const query = pool.query.bind(pool);
  pool.query = ((...args: Parameters<typeof query>) => {
    n++;
    return query(...args);
  }) as typeof pool.query;
  try {
    await work();
  } finally {
    pool.query = query;
  }
  return n;
}

describe('facets over any span', () => {
  it('count every stored event, year 50 and year 9000 included, with as many statements as partitions', async () => {
    const partitions = (await listPartitions(pool)).length;
    let total = 0;
    const statements = await statementsOf(async () => {
      const facets = await facetEvents(pool, { from: yearStart(1), to: yearStart(9999) });
      total = facets.severities.reduce((n, s) => n + s.count, 0);
    });
    expect(total).toBe(32);
    expect(statements).toBeLessThanOrEqual(2 * partitions + 2);
    const allTime = await facetEvents(pool, {});
    expect(allTime.severities.reduce((n, s) => n + s.count, 0)).toBe(32);
  });

  it('draw a histogram from year 50 to now', async () => {
    const h = await histogramEvents(
      pool,
      {},
      { from: yearStart(50), to: end, bucketMs: 366 * 86_400_000 * 40 + 1_000 },
    );
    expect(h.buckets.reduce((n, b) => n + b.severe + b.warning + b.other, 0)).toBe(31);
  });
});
