/**
 * Configuration from environment variables: typed fields, durations, one-line errors.
 * @module
 */
export { formatDuration, parseDuration, tryParseDuration } from './duration.js';
export {
  checkListenerTimeouts,
  DEFAULT_METRICS_PORT,
  type ListenerTimeouts,
  metricsPort,
  readListenerTimeouts,
} from './listener.js';
export { describeFatal, fatal, type ProcessLike, runMain } from './main.js';
export {
  bool,
  ConfigError,
  type ConfigOf,
  configProblem,
  custom,
  duration,
  type Env,
  Field,
  int,
  list,
  num,
  oneOf,
  readConfig,
  type Schema,
  str,
  url,
} from './schema.js';
