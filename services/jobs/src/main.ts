#!/usr/bin/env node
/**
 * `observatory-jobs partition-maintenance | rollup-refresh`: runs the job once and exits, as a
 * Kubernetes CronJob expects: status 0 for success or skipped (and when MAINTENANCE_ENABLED=false),
 * 1 for a failed run or a bad argument or configuration (one line on stderr). Wiring only.
 */
import { createLogger, runMain } from '@event-observatory/service-kit';
import { databaseUrlFromEnv, MAINTENANCE_JOBS, type MaintenanceJob } from '@event-observatory/store';
import { readJobsConfig } from './config.js';
import { createJobsService } from './service.js';

await runMain(async () => {
  const job = process.argv[2];
  if (!MAINTENANCE_JOBS.includes(job as MaintenanceJob)) {
    throw new Error(
      `usage: observatory-jobs ${MAINTENANCE_JOBS.join(' | ')} (got ${JSON.stringify(job ?? '')})`,
    );
  }
  const config = readJobsConfig(process.env);
  const databaseUrl = databaseUrlFromEnv(process.env);
  const logger = createLogger({ service: 'jobs', level: config.logLevel });
  const service = createJobsService({ config, databaseUrl, logger });
  try {
    const report = await service.run(job as MaintenanceJob);
    process.exitCode = report !== 'disabled' && report.outcome === 'failure' ? 1 : 0;
  } finally {
    await service.close();
  }
});
