export { type JobsConfig, readJobsConfig } from './config.js';
export type { Clock, RunReport } from './run-job.js';
export { createJobsService, type JobsService, type JobsServiceOptions } from './service.js';
