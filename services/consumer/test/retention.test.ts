/**
 * The store's retained range on the real broker and database: once retention detached a month, an
 * event of that month or older is dead-lettered `unpersistable` with a past-retention detail and
 * stored nowhere; an event after it is stored, in the default partition when its month has no
 * partition. Before any detach there is no bound: a backfill older than every partition is stored
 * in the default partition, as it always was. The consumer reads the range's start every
 * `RETAINED_RANGE_REFRESH_INTERVAL` (1 s here), so a detach is seen without a restart.
 */
import {
  addMonths,
  createMonthPartition,
  detachPartition,
  listPartitions,
  monthPartitionName,
  retentionCutoff,
} from '@event-observatory/store';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DlqListing } from '../src/dlq/admin.js';
import { type Harness, metricSum, startHarness, testEvent, waitFor } from './harness.js';

let h: Harness;
/** The oldest month the migration created (the month before it ran). */
let first: Date;

beforeAll(async () => {
  h = await startHarness('retention', { env: { RETAINED_RANGE_REFRESH_INTERVAL: '1s' } });
  first = (await listPartitions(h.db))[0]!.from;
});

afterAll(async () => {
  await h?.close();
});

/** The second day of `month`, inside the plausible window whatever today is. */
const dayTwo = (month: Date) => new Date(month.getTime() + 86_400_000).toISOString();

async function untilRangeStarts(month: Date): Promise<void> {
  await waitFor(`the retained range to start at ${month.toISOString()}`, () => {
    return h.service.retainedRange.startMs === month.getTime();
  });
}

/** Rows of `source` in the default partition. */
async function defaultRows(source: string): Promise<number> {
  // sql-witness: reads where the rows landed (a partition, a detached table) in its own SQL, independently of the insert under test.
  const { rows } = await h.db.query(
    'SELECT count(*)::int AS n FROM events.cloud_event_default WHERE ce_source = $1',
    [source],
  );
  return rows[0].n as number;
}

/** The past-retention details of this harness's dead letters. */
async function pastRetentionLetters(): Promise<string[]> {
  const res = await h.request('/admin/dlq/records?reason=unpersistable&limit=100');
  const listing = (await res.json()) as DlqListing;
  return listing.records.map((r) => r.detail).filter((d) => d.startsWith('past retention'));
}

describe('events older than the retained range', () => {
  it('stores a backfill older than every partition while nothing is detached, in the default partition', async () => {
    expect(h.service.retainedRange.startMs).toBe(Number.NEGATIVE_INFINITY);
    await h.publish([testEvent(200, { source: 'urn:test:backfill', time: dayTwo(addMonths(first, -6)) })]);
    await waitFor('the backfill', async () => (await defaultRows('urn:test:backfill')) === 1);
    expect(await pastRetentionLetters()).toEqual([]);
    // sql-witness: clears the rows this test left in the default partition, which no store function removes.
    await h.db.query(`DELETE FROM events.cloud_event_default WHERE ce_source = 'urn:test:backfill'`);
  });

  it('dead-letters events of a detached month and older, and stores those after it, a month without partition in the default partition', async () => {
    // Months by hand, as an operator restoring history would: the range then has gaps.
    const kept = addMonths(first, -2);
    const detached = addMonths(first, -4);
    const cutoff = addMonths(detached, 1);
    await createMonthPartition(h.db, kept);
    await createMonthPartition(h.db, detached);
    // Retention detaches the oldest month.
    await detachPartition(h.db, monthPartitionName(detached));
    await untilRangeStarts(cutoff);
    // A month staged outside the event table before its ATTACH is not a cut: only a table ending
    // before the oldest attached month is.
    const staged = `events.${monthPartitionName(addMonths(first, 8))}`;
    // sql-witness: stages a month as an operator would, which no store function does.
    await h.db.query(`CREATE TABLE ${staged} (LIKE events.cloud_event)`);
    expect(await retentionCutoff(h.db)).toEqual(cutoff);
    // sql-witness: removes the staged month again.
    await h.db.query(`DROP TABLE ${staged}`);

    const poisonBefore = await metricSum(h, 'consume_records_poison_total', 'reason="unpersistable"');
    const fresh = Array.from({ length: 10 }, (_, i) => testEvent(i, { source: 'urn:test:retained' }));
    await h.publish([
      ...fresh.slice(0, 5),
      testEvent(100, { source: 'urn:test:detached-month', time: dayTwo(detached) }),
      testEvent(101, { source: 'urn:test:never-created', time: dayTwo(addMonths(detached, -1)) }),
      testEvent(102, { source: 'urn:test:kept-month', time: dayTwo(kept) }),
      testEvent(103, { source: 'urn:test:gap-month', time: dayTwo(addMonths(first, -1)) }),
      testEvent(104, { source: 'urn:test:gap-month', time: dayTwo(cutoff) }),
      ...fresh.slice(5),
    ]);

    await waitFor('10 retained rows', async () => (await h.count(`ce_source = 'urn:test:retained'`)) === 10);
    await waitFor('the kept month', async () => (await h.count(`ce_source = 'urn:test:kept-month'`)) === 1);
    await waitFor('the gap months', async () => (await defaultRows('urn:test:gap-month')) === 2);
    await waitFor('two past-retention dead letters', async () => (await pastRetentionLetters()).length === 2);

    expect(await h.count(`ce_source IN ('urn:test:detached-month', 'urn:test:never-created')`)).toBe(0);
    // sql-witness: reads where the rows landed (a partition, a detached table) in its own SQL, independently of the insert under test.
    const detachedTable = await h.db.query(
      `SELECT count(*)::int AS n FROM events.${monthPartitionName(detached)} WHERE ce_source = 'urn:test:detached-month'`,
    );
    expect(detachedTable.rows[0].n).toBe(0);
    expect(await defaultRows('urn:test:kept-month')).toBe(0);
    const details = await pastRetentionLetters();
    for (const [time, n] of [
      [dayTwo(detached), 100],
      [dayTwo(addMonths(detached, -1)), 101],
    ] as const) {
      expect(details, `evt-${n}`).toContain(
        `past retention: time ${time} is before ${cutoff.toISOString()}, the end of the newest month retention detached from the store`,
      );
    }
    expect(await metricSum(h, 'consume_records_past_retention_total')).toBe(2);
    expect(await metricSum(h, 'consume_records_poison_total', 'reason="unpersistable"')).toBe(
      poisonBefore + 2,
    );
    // sql-witness: clears the rows this test left in the default partition, which no store function removes.
    await h.db.query(`DELETE FROM events.cloud_event_default WHERE ce_source = 'urn:test:gap-month'`);
  });
});
