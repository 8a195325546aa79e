export { type JobsConfig, readJobsConfig } from './config.js';
export { PARTITION_MAINTENANCE_LOCK_KEY } from './partition-maintenance.js';
export { ROLLUP_REFRESH_LOCK_KEY } from './rollup-refresh.js';
export type { Clock, RunReport } from './run-job.js';
export { createJobsService, type JobsService, type JobsServiceOptions } from './service.js';
