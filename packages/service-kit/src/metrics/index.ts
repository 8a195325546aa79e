/**
 * Metrics: the registry with the common tags, `GET /metrics` and the metrics listener's app, the
 * HTTP server timer, capped tags, Micrometer-style timers and distributions, and the spec's bucket
 * ladders.
 * @module
 */
export { type CappedLabel, cappedLabel } from './capped-label.js';
export {
  HTTP_SERVER_REQUESTS,
  type HttpOutcome,
  type HttpServerTimerOptions,
  httpServerTimer,
  isUntimedPath,
  outcomeOf,
  UNMATCHED_URI,
  uriTemplate,
} from './http-timer.js';
export { type LadderName, ladders } from './ladders.js';
export {
  type Clock,
  createDistribution,
  createTimer,
  type Distribution,
  type DistributionOptions,
  type Timer,
  WindowMax,
} from './meters.js';
export {
  createMetrics,
  METRICS_CONTENT_TYPE,
  type Metrics,
  type MetricsOptions,
  metricsApp,
  metricsHandler,
  UNKNOWN_VERSION,
} from './registry.js';
