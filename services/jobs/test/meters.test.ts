import { ADVISORY_LOCKS, withSessionLock } from '@event-observatory/store';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Harness, sample, startHarness } from './harness.js';

let h: Harness;

beforeAll(async () => {
  h = await startHarness('meters');
});

afterAll(async () => {
  await h?.close();
});

const series = (job: string, outcome: string) => `{job="${job}",outcome="${outcome}"}`;

describe('maintenance meters exported from the recorded runs', () => {
  it('count every run by job and outcome with the 100 ms..15 min ladder, and continue in a new process', async () => {
    h.now = new Date('2070-01-10T00:00:00Z');
    const jobs = h.jobs();
    await jobs.run('partition-maintenance');
    await jobs.run('partition-maintenance');
    await jobs.run('rollup-refresh');

    const held = await withSessionLock(h.db, ADVISORY_LOCKS.rollupRefresh, () => jobs.run('rollup-refresh'));
    expect(held).toMatchObject({ taken: true, value: { outcome: 'skipped' } });

    // sql-witness: renames tables to make a run fail, a fault no store function would cause.
    await h.db.query('ALTER TABLE events.event_rollup_watermark RENAME TO event_rollup_watermark_away');
    expect(await jobs.run('rollup-refresh')).toMatchObject({ outcome: 'failure' });
    await h.db.query('ALTER TABLE events.event_rollup_watermark_away RENAME TO event_rollup_watermark');

    const scrape = await h.scrape();
    const d = 'maintenance_job_duration_seconds';
    expect(sample(scrape, `${d}_count${series('partition-maintenance', 'success')}`)).toBe(2);
    expect(sample(scrape, `${d}_count${series('rollup-refresh', 'success')}`)).toBe(1);
    expect(sample(scrape, `${d}_count${series('rollup-refresh', 'skipped')}`)).toBe(1);
    expect(sample(scrape, `${d}_count${series('rollup-refresh', 'failure')}`)).toBe(1);
    expect(sample(scrape, `${d}_count${series('partition-maintenance', 'failure')}`)).toBe(0);
    expect(sample(scrape, `${d}_bucket{le="900",job="partition-maintenance",outcome="success"}`)).toBe(2);
    expect(scrape).toContain(`${d}_bucket{le="0.1",job="partition-maintenance",outcome="success"}`);
    expect(sample(scrape, `${d}_sum${series('partition-maintenance', 'success')}`)).toBeGreaterThan(0);
    expect(sample(scrape, `${d}_max${series('partition-maintenance', 'success')}`)).toBeGreaterThan(0);
    expect(sample(scrape, 'maintenance_partitions_created_total')).toBe(4);
    expect(sample(scrape, 'maintenance_partitions_detached_total')).toBe(0);
    expect(sample(scrape, 'maintenance_partitions_headroom')).toBe(3);
    expect(sample(scrape, 'maintenance_partitions_blocked')).toBe(0);
    const lastSuccess = sample(scrape, 'maintenance_last_success_timestamp_seconds{job="rollup-refresh"}')!;
    expect(lastSuccess).toBeGreaterThanOrEqual(h.now.getTime() / 1000);
    expect(lastSuccess).toBeLessThan(h.now.getTime() / 1000 + 60);

    // A service that starts later (ten minutes on) reads the same totals; the 2-minute max is empty.
    h.now = new Date(h.now.getTime() + 600_000);
    const later = await h.scrape(h.newRegistry());
    expect(sample(later, `${d}_count${series('partition-maintenance', 'success')}`)).toBe(2);
    expect(sample(later, 'maintenance_partitions_created_total')).toBe(4);
    expect(sample(later, `${d}_max${series('partition-maintenance', 'success')}`)).toBe(0);
    expect(sample(later, 'maintenance_last_success_timestamp_seconds{job="rollup-refresh"}')).toBe(
      lastSuccess,
    );

    // Runs recorded after a scrape are added to what was exported, once.
    await jobs.run('partition-maintenance');
    const next = await h.scrape();
    expect(sample(next, `${d}_count${series('partition-maintenance', 'success')}`)).toBe(3);
    expect(sample(await h.scrape(), `${d}_count${series('partition-maintenance', 'success')}`)).toBe(3);
  });

  it('turns the gauges to NaN when the store cannot be read, keeping the counters', async () => {
    const registry = h.newRegistry();
    const before = await h.scrape(registry);
    await h.db.query('ALTER TABLE events.maintenance_run RENAME TO maintenance_run_away');
    try {
      const broken = await h.scrape(registry);
      expect(sample(broken, 'maintenance_partitions_headroom')).toBeNaN();
      expect(sample(broken, 'rollup_staleness')).toBeNaN();
      expect(sample(broken, 'maintenance_partitions_created_total')).toBe(
        sample(before, 'maintenance_partitions_created_total'),
      );
    } finally {
      await h.db.query('ALTER TABLE events.maintenance_run_away RENAME TO maintenance_run');
    }
  });
});
