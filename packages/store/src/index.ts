export { ADVISORY_LOCKS, type AdvisoryLockKey } from './advisory-locks.js';
export {
  cancellablePool,
  type PlannedStatement,
  type PlannerSettings,
  scopedPool,
  scopeOf,
} from './cancellable-pool.js';
export {
  type Checkpoint,
  deleteCheckpoints,
  readCheckpoints,
  upsertCheckpoints,
} from './checkpoints.js';
export {
  DatabaseConfigError,
  type DatabaseTls,
  DEFAULT_DATABASE_URL,
  databaseTls,
  databaseUrlFromEnv,
  primaryDatabaseUrlFromEnv,
  redactDatabaseUrl,
  SSL_MODES,
  type SslMode,
  writePoolSettingsFromEnv,
} from './config.js';
export { type ConnectionConfig, connectionConfig } from './connection.js';
export { deviceIdOf, tagsOf } from './derive.js';
export { type EndedSession, readEndedSessions, recordEndedSession } from './ended-sessions.js';
export {
  classifyStoreError,
  describeStoreFailure,
  isAcquireTimeout,
  isConnectionFailure,
  isReadOnly,
  isStatementTimeout,
  mustDiscard,
  type StoreFailure,
  type StoreFailureKind,
} from './errors.js';
export * from './event-facets.js';
export * from './event-histogram.js';
export {
  binaryTextArray,
  EVENT_INSERT_FIELDS,
  type EventInsertResult,
  type EventInsertRow,
  insertEvents,
  insertEventsWithCheckpoints,
  TAG_SEPARATOR,
} from './event-insert.js';
export * from './event-receipt.js';
export * from './event-rollup.js';
export * from './event-search.js';
export { newestIngestedAt } from './freshness.js';
export { databaseAnswers } from './liveness.js';
export { type MaintenanceMetersOptions, registerMaintenanceMeters } from './maintenance-meters.js';
export {
  MAINTENANCE_JOBS,
  type MaintenanceJob,
  type MaintenanceRun,
  type RunOutcome,
  recordMaintenanceRun,
} from './maintenance-runs.js';
export {
  DEFAULT_MIGRATIONS_DIR,
  type MigrateOptions,
  type MigrateResult,
  MigrationError,
  type MigrationFile,
  migrate,
  readMigrations,
} from './migrate.js';
export * from './name-suggestions.js';
export {
  addMonths,
  countDefaultRows,
  createMonthPartition,
  detachPartition,
  headroomMonths,
  listPartitions,
  type MonthPartition,
  monthPartitionBounds,
  monthPartitionName,
  moveDefaultRowsStatements,
  retentionCutoff,
} from './partitions.js';
export {
  CONNECTION_TIMEOUT_MS,
  createReadPool,
  createWritePool,
  IDLE_IN_TRANSACTION_TIMEOUT_MS,
  KEEPALIVE_DELAY_MS,
  type PoolName,
  type PoolOptions,
  queryTimeoutMs,
  READ_POOL_SIZE,
  READ_STATEMENT_TIMEOUT_MS,
  registerPoolMetrics,
  WRITE_POOL_SIZE,
  WRITE_STATEMENT_TIMEOUT_MS,
  type WritePoolOptions,
} from './pools.js';
export type { DatabaseConnection, DatabasePool, PooledConnection, Queryable } from './queryable.js';
export {
  bypassesRowSecurity,
  EMPTY_SCOPE,
  type PartialScope,
  type ReadScope,
  rollupCovers,
  scopeSetting,
  WHOLE_SCOPE,
  type WholeScope,
} from './read-scope.js';
export {
  deleteSavedSearch,
  listSavedSearches,
  type RenameOutcome,
  renameSavedSearch,
  SAVED_SEARCH_LIMITS,
  type SavedSearch,
  type SaveOutcome,
  saveSearch,
} from './saved-searches.js';
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
export {
  beginLockedTransaction,
  commitTransaction,
  type IsolationLevel,
  inPooledTransaction,
  inTransaction,
  type LockedTransactionOptions,
  rollbackTransaction,
  stepUnderLockTimeout,
  withSessionLock,
} from './transactions.js';
