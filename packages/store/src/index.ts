export {
  type Checkpoint,
  deleteCheckpoints,
  type Queryable,
  readCheckpoints,
  upsertCheckpoints,
} from './checkpoints.js';
export {
  DatabaseConfigError,
  DEFAULT_DATABASE_URL,
  databaseUrlFromEnv,
  redactDatabaseUrl,
} from './config.js';
export { deviceIdOf, tagsOf } from './derive.js';
export * from './event-search.js';
export {
  DEFAULT_MIGRATIONS_DIR,
  MIGRATION_LOCK_KEY,
  type MigrateOptions,
  type MigrateResult,
  MigrationError,
  type MigrationFile,
  migrate,
  readMigrations,
} from './migrate.js';
export { monthPartitionBounds, monthPartitionName } from './partitions.js';
export {
  CONNECTION_TIMEOUT_MS,
  createReadPool,
  createWritePool,
  isAcquireTimeout,
  type PoolName,
  type PoolOptions,
  READ_POOL_SIZE,
  READ_STATEMENT_TIMEOUT_MS,
  registerPoolMetrics,
  WRITE_POOL_SIZE,
} from './pools.js';
export * from './rollup.js';
export * from './schema.js';
export {
  SEVERE_RANK,
  SEVERITY,
  SEVERITY_ALIASES,
  type SeverityName,
  severityName,
  severityRank,
  severityRankOfNumber,
} from './severity.js';
