/**
 * The maintenance meters (services/jobs/README.md lists them), exported by a long-running service (the consumer) from
 * `events.maintenance_run`, because the jobs themselves are CronJob processes that live seconds
 * and are never scraped. Every scrape reads the runs recorded since the previous one (rows become
 * visible in id order) and feeds them to ordinary prom-client meters, so the duration histogram
 * and the counters keep their semantics across runs; a process that starts reads the whole table
 * once, so its values continue those of its predecessor instead of restarting at zero.
 *
 * - `maintenance_job_duration_seconds{job,outcome}` `_bucket` (100 ms..15 min), `_count`, `_sum`,
 *   and `_max`: the longest run that finished in the last 2 minutes.
 * - `maintenance_partitions_created_total`, `maintenance_partitions_detached_total`.
 * - `maintenance_partitions_headroom`: months of future partitions, read from the catalog at each
 *   scrape, so it falls when maintenance stops running.
 * - `maintenance_partitions_blocked`: months the last partition-maintenance run found blocked.
 * - `rollup_staleness`: seconds since the `ingested_at` of the newest event the rollup counts; -1
 *   when the rollup is empty.
 * - `maintenance_last_success_timestamp_seconds{job}`: end of the job's last successful run, for
 *   the "not running" alerts (absent until the job first succeeds).
 *
 * `partition_default_rows` is not here: the consumer's probe counts the default partition live.
 * A failed or slow (over `timeoutMs`) read turns the gauges to NaN and leaves the counters as they were.
 *
 * @example
 * registerMaintenanceMeters(registry, pool);
 */
import { withTimeout } from '@event-observatory/service-kit';
import { ladders, WindowMax } from '@event-observatory/service-kit/metrics';
import { Counter, Gauge, Histogram, type Registry } from 'prom-client';
import { rollupNewestIngestedAt } from './event-rollup.js';
import { MAINTENANCE_JOBS, RUN_OUTCOMES, readMaintenanceRunsAfter } from './maintenance-runs.js';
import { headroomMonths, listPartitions } from './partitions.js';
import type { DatabasePool } from './queryable.js';

export interface MaintenanceMetersOptions {
  /** Milliseconds clock; default `Date.now`. */
  clock?: () => number;
  /** Bound on the reads of one scrape; default 2 s. */
  timeoutMs?: number;
}

const MAX_WINDOW_MS = 120_000;

export function registerMaintenanceMeters(
  registry: Registry,
  pool: DatabasePool,
  opts: MaintenanceMetersOptions = {},
): void {
  const clock = opts.clock ?? Date.now;
  const timeoutMs = opts.timeoutMs ?? 2_000;
  let lastId = '0';
  let blockedMonths = 0;
  const successAt = new Map<string, number>();
  let syncing: Promise<void> | undefined;
  // Concurrent collects of one scrape share one read.
  const sync = (): Promise<void> => {
    syncing ??= withTimeout(read(), timeoutMs, 'maintenance meters read')
      .then(apply, () => {
        for (const g of [headroom, blocked, staleness]) g.set(Number.NaN);
      })
      .finally(() => {
        syncing = undefined;
      });
    return syncing;
  };
  const collect = async () => {
    await sync();
  };

  const duration = new Histogram({
    name: 'maintenance_job_duration_seconds',
    help: 'Run time of a maintenance job run, by job and outcome',
    labelNames: ['job', 'outcome'],
    buckets: [...ladders.maintenanceJob],
    registers: [registry],
    collect,
  });
  const maxima = new Map<string, { labels: { job: string; outcome: string }; max: WindowMax }>();
  new Gauge({
    name: 'maintenance_job_duration_seconds_max',
    help: 'Longest maintenance job run that finished in the last 2 minutes',
    labelNames: ['job', 'outcome'],
    registers: [registry],
    async collect() {
      await sync();
      for (const { labels, max } of maxima.values()) this.set(labels, max.poll());
    },
  });
  for (const job of MAINTENANCE_JOBS)
    for (const outcome of RUN_OUTCOMES) {
      duration.zero({ job, outcome });
      maxima.set(`${job}/${outcome}`, { labels: { job, outcome }, max: new WindowMax(clock) });
    }
  const created = new Counter({
    name: 'maintenance_partitions_created_total',
    help: 'Monthly partitions created by partition-maintenance',
    registers: [registry],
    collect,
  });
  const detached = new Counter({
    name: 'maintenance_partitions_detached_total',
    help: 'Monthly partitions detached (never dropped) by partition-maintenance',
    registers: [registry],
    collect,
  });
  const gauge = (name: string, help: string) => new Gauge({ name, help, registers: [registry], collect });
  const headroom = gauge('maintenance_partitions_headroom', 'Months of future partitions');
  const blocked = gauge(
    'maintenance_partitions_blocked',
    'Months not created because the default partition holds rows for them (last partition-maintenance run)',
  );
  const staleness = gauge(
    'rollup_staleness',
    'Seconds since the newest event counted by the hourly rollup; -1 when the rollup is empty',
  );
  const lastSuccess = new Gauge({
    name: 'maintenance_last_success_timestamp_seconds',
    help: 'End of the last successful run of the job (Unix seconds)',
    labelNames: ['job'],
    registers: [registry],
    collect,
  });

  async function read() {
    const [runs, partitions, newest] = await Promise.all([
      readMaintenanceRunsAfter(pool, lastId),
      listPartitions(pool),
      rollupNewestIngestedAt(pool),
    ]);
    return { runs, partitions, newest };
  }

  function apply({ runs, partitions, newest }: Awaited<ReturnType<typeof read>>): void {
    const now = clock();
    for (const run of runs) {
      const labels = { job: run.job, outcome: run.outcome };
      const finishedMs = run.startedAt.getTime() + run.durationSeconds * 1000;
      duration.observe(labels, run.durationSeconds);
      if (now - finishedMs <= MAX_WINDOW_MS)
        maxima.get(`${run.job}/${run.outcome}`)?.max.record(run.durationSeconds);
      if (run.partitionsCreated) created.inc(run.partitionsCreated);
      if (run.partitionsDetached) detached.inc(run.partitionsDetached);
      if (run.partitionsBlocked !== undefined) blockedMonths = run.partitionsBlocked;
      if (run.outcome === 'success')
        successAt.set(run.job, Math.max(successAt.get(run.job) ?? 0, finishedMs));
      lastId = run.id;
    }
    for (const [job, at] of successAt) lastSuccess.set({ job }, at / 1000);
    blocked.set(blockedMonths);
    headroom.set(headroomMonths(partitions, new Date(now)));
    staleness.set(newest ? (now - newest.getTime()) / 1000 : -1);
  }
}
