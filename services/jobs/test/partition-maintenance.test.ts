import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  attachedPartitions,
  type Harness,
  insertEvents,
  poll,
  sample,
  startHarness,
  whileHolding,
} from './harness.js';

let h: Harness;

beforeAll(async () => {
  h = await startHarness('partitions');
});

afterAll(async () => {
  await h?.close();
});

const HEADROOM = 'maintenance_partitions_headroom';
const BLOCKED = 'maintenance_partitions_blocked';

describe('partition-maintenance on real PostgreSQL', () => {
  it('creates the current month and three ahead with bounds at UTC month starts (+00), then nothing again', async () => {
    h.now = new Date('2031-11-30T23:30:00Z');
    const jobs = h.jobs();
    const first = await jobs.run('partition-maintenance');
    expect(first).toMatchObject({
      outcome: 'success',
      partitionsCreated: 4,
      partitionsBlocked: 0,
      headroomMonths: 3,
    });
    const parts = await attachedPartitions(h.db);
    expect(parts.get('cloud_event_2031_11')).toBe(
      "FOR VALUES FROM ('2031-11-01 00:00:00+00') TO ('2031-12-01 00:00:00+00')",
    );
    expect(parts.get('cloud_event_2031_12')).toBe(
      "FOR VALUES FROM ('2031-12-01 00:00:00+00') TO ('2032-01-01 00:00:00+00')",
    );
    expect(parts.get('cloud_event_2032_02')).toBe(
      "FOR VALUES FROM ('2032-02-01 00:00:00+00') TO ('2032-03-01 00:00:00+00')",
    );
    expect(parts.has('cloud_event_2032_03')).toBe(false);
    const { rows } = await h.db.query<{ reloptions: string[] }>(
      // sql-witness: checks partitions, rows and locks in its own SQL, independently of the job under test.
      `SELECT reloptions FROM pg_class WHERE oid = 'events.cloud_event_2032_01'::regclass`,
    );
    expect(rows[0]?.reloptions).toEqual([
      'autovacuum_vacuum_scale_factor=0.05',
      'autovacuum_analyze_scale_factor=0.02',
      'autovacuum_vacuum_insert_scale_factor=0.05',
    ]);

    const again = await jobs.run('partition-maintenance');
    expect(again).toMatchObject({ outcome: 'success', partitionsCreated: 0, headroomMonths: 3 });
    expect((await attachedPartitions(h.db)).size).toBe(parts.size);
  });

  it('goes through a whole outage: headroom runs out, rows wait in the default partition, the month is blocked until the logged statements move them', async () => {
    h.now = new Date('2040-01-15T12:00:00Z');
    const jobs = h.jobs();
    await jobs.run('partition-maintenance');
    expect(sample(await h.scrape(), HEADROOM)).toBe(3);

    // Maintenance stops; the clock runs on into April: one month of headroom left, then none.
    h.now = new Date('2040-03-20T00:00:00Z');
    expect(sample(await h.scrape(), HEADROOM)).toBe(1);
    h.now = new Date('2040-04-20T00:00:00Z');
    expect(sample(await h.scrape(), HEADROOM)).toBe(0);

    // Events for May arrive: stored in the default partition, none refused.
    const may = Array.from({ length: 25 }, (_, i) => ({
      at: new Date(Date.UTC(2040, 4, 1 + (i % 28), i % 24)),
      id: `may-${i}`,
      source: 'urn:test:outage',
    }));
    await insertEvents(h.db, may);
    const inDefault = await h.db.query(`SELECT count(*)::int AS n FROM events.cloud_event_default`);
    expect(inDefault.rows[0].n).toBe(25);

    // Maintenance resumes in May: May is blocked, June to August are created.
    h.now = new Date('2040-05-02T06:00:00Z');
    const logsBefore = h.logs.length;
    const resumed = await jobs.run('partition-maintenance');
    expect(resumed).toMatchObject({
      outcome: 'success',
      partitionsCreated: 3,
      partitionsBlocked: 1,
      headroomMonths: 0,
      defaultRows: 25,
    });
    expect((await attachedPartitions(h.db)).has('cloud_event_2040_05')).toBe(false);
    const scrape = await h.scrape();
    expect(sample(scrape, BLOCKED)).toBe(1);
    const warning = h.logs.slice(logsBefore).find((l) => l.partition === 'cloud_event_2040_05');
    expect(warning).toMatchObject({ level: 'warn', defaultRows: 25 });
    const statements = warning?.statements as string;
    expect(statements).toContain("SELECT events.create_month_partition('2040-05-01');");

    // A human runs the statements exactly as logged, one by one, while the consumer goes on
    // writing May: its insert waits for the script's lock, then lands in the new month.
    const lines = statements.split('\n');
    const human = await h.db.connect();
    try {
      for (const line of lines.slice(0, 3)) await human.query(line);
      const late = insertEvents(h.db, [
        { at: new Date(Date.UTC(2040, 4, 30)), id: 'may-late', source: 'urn:test:outage' },
      ]);
      await new Promise((r) => setTimeout(r, 300));
      for (const line of lines.slice(3)) await human.query(line);
      await late;
    } finally {
      human.release();
    }
    const { rows } = await h.db.query<{ part: string; n: number }>(
      `SELECT tableoid::regclass::text AS part, count(*)::int AS n FROM events.cloud_event
        WHERE ce_source = 'urn:test:outage' GROUP BY 1`,
    );
    expect(rows).toEqual([{ part: 'events.cloud_event_2040_05', n: 26 }]);
    const ids = await h.db.query(
      `SELECT count(DISTINCT ce_id)::int AS n FROM events.cloud_event WHERE ce_source = 'urn:test:outage'`,
    );
    expect(ids.rows[0].n).toBe(26);
    const emptied = await h.db.query(`SELECT count(*)::int AS n FROM events.cloud_event_default`);
    expect(emptied.rows[0].n).toBe(0);
    expect((await attachedPartitions(h.db)).get('cloud_event_2040_05')).toBe(
      "FOR VALUES FROM ('2040-05-01 00:00:00+00') TO ('2040-06-01 00:00:00+00')",
    );

    const cleared = await jobs.run('partition-maintenance');
    expect(cleared).toMatchObject({
      outcome: 'success',
      partitionsCreated: 0,
      partitionsBlocked: 0,
      headroomMonths: 3,
    });
    const after = await h.scrape();
    expect(sample(after, BLOCKED)).toBe(0);
    expect(sample(after, HEADROOM)).toBe(3);
  });

  it('detaches nothing without MAINTENANCE_RETAIN_MONTHS, and with it detaches (keeps) the months older than retained', async () => {
    h.now = new Date('2045-06-15T00:00:00Z');
    await h.db.query(
      `SELECT events.create_month_partition(d::date) FROM unnest('{2045-01-01,2045-02-01,2045-03-01}'::date[]) d`,
    );
    await insertEvents(h.db, [
      { at: '2045-02-10T00:00:00Z', id: 'kept-after-detach' },
      { at: '2045-02-10T00:10:00Z', id: 'kept-after-detach-2' },
      { at: '2045-02-10T00:20:00Z', id: 'kept-after-detach-3' },
    ]);
    await h.jobs().run('rollup-refresh');
    const keepAll = await h.jobs().run('partition-maintenance');
    expect(keepAll).toMatchObject({ outcome: 'success', partitionsDetached: 0 });
    const before = await attachedPartitions(h.db);
    expect(before.has('cloud_event_2045_01')).toBe(true);

    const retained = await h.jobs({ MAINTENANCE_RETAIN_MONTHS: '3' }).run('partition-maintenance');
    const expected = [...before.keys()].filter(
      (n) => /^cloud_event_\d{4}_\d{2}$/.test(n) && n < 'cloud_event_2045_03',
    );
    expect(retained).toMatchObject({ outcome: 'success', partitionsDetached: expected.length });
    const after = await attachedPartitions(h.db);
    expect(after.has('cloud_event_2045_01')).toBe(false);
    expect(after.has('cloud_event_2045_02')).toBe(false);
    expect(after.has('cloud_event_2045_03')).toBe(true);
    expect(after.get('cloud_event_default')).toBe('DEFAULT');
    const kept = await h.db.query(`SELECT ce_id FROM events.cloud_event_2045_02 ORDER BY ce_id`);
    expect(kept.rows.map((r) => r.ce_id)).toEqual([
      'kept-after-detach',
      'kept-after-detach-2',
      'kept-after-detach-3',
    ]);

    // A late event of the detached month lands in the default partition; the refresh keeps the
    // hour's history instead of recounting it from the one row left in the event table.
    const hourCount = async () =>
      (
        await h.db.query(
          `SELECT sum(event_count)::int AS n FROM events.event_rollup_hourly WHERE bucket_start = '2045-02-10T00:00:00Z'`,
        )
      ).rows[0].n;
    expect(await hourCount()).toBe(3);
    await insertEvents(h.db, [{ at: '2045-02-10T00:30:00Z', id: 'late-for-a-detached-month' }]);
    expect(await h.jobs().run('rollup-refresh')).toMatchObject({ outcome: 'success' });
    expect(await hourCount()).toBe(3);
  });

  it('gives up a detach that cannot get its lock within the timeout, keeps the rest of the run, and leaves the table usable', async () => {
    h.now = new Date('2050-06-15T00:00:00Z');
    await h.db.query(`SELECT events.create_month_partition('2050-01-01')`);
    await whileHolding(h.db, 'SELECT count(*) FROM events.cloud_event_2050_01', async () => {
      const started = Date.now();
      const report = await h
        .jobs({ MAINTENANCE_RETAIN_MONTHS: '3', MAINTENANCE_DETACH_LOCK_TIMEOUT: '300ms' })
        .run('partition-maintenance');
      expect(Date.now() - started).toBeLessThan(10_000);
      expect(report).toMatchObject({ outcome: 'failure', partitionsCreated: 4 });
      expect(report !== 'disabled' && report.error).toMatch(/detach cloud_event_2050_01: .*lock timeout/);
      await insertEvents(h.db, [{ at: '2050-06-01T00:00:00Z', id: 'after-failed-detach' }]);
    });
    const parts = await attachedPartitions(h.db);
    expect(parts.has('cloud_event_2050_01')).toBe(true);
    expect(parts.has('cloud_event_2050_09')).toBe(true);
    const row = await h.db.query(
      `SELECT tableoid::regclass::text AS part FROM events.cloud_event WHERE ce_id = 'after-failed-detach'`,
    );
    expect(row.rows).toEqual([{ part: 'events.cloud_event_2050_06' }]);
  });

  it('gives up creating a month whose locks are held past the timeout, and creates it on the next run', async () => {
    h.now = new Date('2055-02-10T00:00:00Z');
    const jobs = h.jobs({ MAINTENANCE_DETACH_LOCK_TIMEOUT: '300ms' });
    await whileHolding(h.db, 'SELECT count(*) FROM events.cloud_event_default', async () => {
      const report = await jobs.run('partition-maintenance');
      expect(report).toMatchObject({ outcome: 'failure', partitionsCreated: 0 });
      expect(report !== 'disabled' && report.error).toMatch(/create cloud_event_2055_02: .*lock timeout/);
      await insertEvents(h.db, [{ at: '2050-07-01T00:00:00Z', id: 'while-creation-waits' }]);
    });
    expect((await attachedPartitions(h.db)).has('cloud_event_2055_02')).toBe(false);
    expect(await jobs.run('partition-maintenance')).toMatchObject({
      outcome: 'success',
      partitionsCreated: 4,
    });
  });

  it('leaves nothing behind when a run is killed before it commits', async () => {
    h.now = new Date('2060-03-10T00:00:00Z');
    // The run creates its months, then waits to record itself; the test terminates its backend.
    await whileHolding(h.db, 'LOCK TABLE events.maintenance_run IN ACCESS EXCLUSIVE MODE', async () => {
      const run = h.jobs().run('partition-maintenance');
      const pid = await poll('the run waiting on events.maintenance_run', async () => {
        const { rows } = await h.db.query<{ pid: number }>(
          `SELECT pid FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query LIKE 'LOCK TABLE events.maintenance_run%'`,
        );
        return rows[0]?.pid;
      });
      await h.db.query('SELECT pg_terminate_backend($1)', [pid]);
      expect(await run).toMatchObject({ outcome: 'failure' });
    });
    const parts = await attachedPartitions(h.db);
    expect(parts.has('cloud_event_2060_03')).toBe(false);
    expect(parts.has('cloud_event_2060_06')).toBe(false);
  });
});
