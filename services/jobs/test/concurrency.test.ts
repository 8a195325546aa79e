import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Harness, poll, sample, startHarness, whileHolding } from './harness.js';

let h: Harness;

beforeAll(async () => {
  h = await startHarness('concurrency');
});

afterAll(async () => {
  await h?.close();
});

describe('two runs of one job at once', () => {
  it('give one success and one skipped, both recorded and exported', async () => {
    h.now = new Date();
    // The first run takes the advisory lock, then waits on the watermark table held by the test.
    const { first, second } = await whileHolding(
      h.db,
      // sql-witness: holds a table lock and reads pg_locks to pin the jobs' interleaving.
      'LOCK TABLE events.event_rollup_watermark IN ACCESS EXCLUSIVE MODE',
      async () => {
        const first = h.jobs().run('rollup-refresh');
        await poll('the first run holding its advisory lock', async () => {
          const { rows } = await h.db.query(
            `SELECT 1 FROM pg_locks WHERE locktype = 'advisory' AND granted
                AND database = (SELECT oid FROM pg_database WHERE datname = current_database())`,
          );
          return rows[0];
        });
        return { first, second: await h.jobs().run('rollup-refresh') };
      },
    );
    expect(second).toMatchObject({ outcome: 'skipped' });
    expect(await first).toMatchObject({ outcome: 'success' });

    const scrape = await h.scrape();
    const count = (outcome: string) =>
      sample(scrape, `maintenance_job_duration_seconds_count{job="rollup-refresh",outcome="${outcome}"}`);
    expect([count('success'), count('skipped'), count('failure')]).toEqual([1, 1, 0]);
  });

  it('do not skip each other across the two jobs', async () => {
    const jobs = h.jobs();
    const [a, b] = await Promise.all([jobs.run('partition-maintenance'), h.jobs().run('rollup-refresh')]);
    expect([a, b]).toMatchObject([{ outcome: 'success' }, { outcome: 'success' }]);
    expect(sample(await h.scrape(), 'maintenance_partitions_headroom')).toBe(3);
  });
});
