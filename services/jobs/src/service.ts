/**
 * Builds the jobs from configuration: the write pool and the two jobs. `main.ts` runs one job and
 * exits; tests, `make dev` and the benchmark call this directly.
 */
import type { Logger } from '@event-observatory/service-kit';
import { createWritePool, type MaintenanceJob } from '@event-observatory/store';
import type { JobsConfig } from './config.js';
import { partitionMaintenance } from './partition-maintenance.js';
import { rollupRefresh } from './rollup-refresh.js';
import { type Clock, RUN_QUERY_TIMEOUT_MS, type RunReport, runJob } from './run-job.js';

export interface JobsServiceOptions {
  config: JobsConfig;
  databaseUrl: string;
  logger: Logger;
  /** Default: the wall clock. */
  clock?: Clock;
}

export type JobsService = ReturnType<typeof createJobsService>;

export function createJobsService(opts: JobsServiceOptions) {
  const { config, logger } = opts;
  const clock = opts.clock ?? (() => new Date());
  // A run uses one connection from start to end. Its transaction raises the statement timeout to
  // RUN_STATEMENT_TIMEOUT, so the client waits that long (and a little more) for an answer.
  const pool = createWritePool({
    url: opts.databaseUrl,
    max: 1,
    ...config.writePool,
    queryTimeoutMs: RUN_QUERY_TIMEOUT_MS,
  });
  const works = {
    'partition-maintenance': () => partitionMaintenance(config, logger),
    'rollup-refresh': () => rollupRefresh(),
  } satisfies Record<MaintenanceJob, unknown>;
  return {
    pool,
    /** Runs the job once. `MAINTENANCE_ENABLED=false`: nothing runs and nothing is recorded. */
    async run(job: MaintenanceJob): Promise<RunReport | 'disabled'> {
      if (!config.enabled) {
        logger.info({ job }, 'MAINTENANCE_ENABLED=false: nothing to do');
        return 'disabled';
      }
      return runJob(pool, works[job](), clock, logger);
    },
    close(): Promise<void> {
      return pool.end();
    },
  };
}
