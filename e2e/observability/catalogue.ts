/**
 * The metrics catalogue as data: the meters of ingest, the consumer, search, the maintenance jobs
 * and the pools, in Prometheus spelling. Tag names are the service's
 * own (`job`, not `exported_job`); `service` and `version` are on every meter and left out here.
 */
export type MeterType = 'counter' | 'gauge' | 'histogram' | 'summary';

export interface Meter {
  name: string;
  /** Exposition type: a timer or distribution with a ladder is a histogram, without one a summary. */
  type: MeterType;
  labels: string[];
  /** First and last bucket bound of the spec's ladder table. */
  ladder?: [number, number];
  /** Timers and distributions also publish `<name>_max`. */
  max?: boolean;
}

const counter = (name: string, ...labels: string[]): Meter => ({ name, type: 'counter', labels });
const gauge = (name: string, ...labels: string[]): Meter => ({ name, type: 'gauge', labels });
const withLadder = (name: string, ladder: [number, number], ...labels: string[]): Meter => ({
  name,
  type: 'histogram',
  labels,
  ladder,
  max: true,
});
const noLadder = (name: string, ...labels: string[]): Meter => ({ name, type: 'summary', labels, max: true });

/** `pool_connections_*`: the store's pool meters, tagged `pool`, in the consumer and search. */
const POOL_METERS: Meter[] = [
  gauge('pool_connections_active', 'pool'),
  gauge('pool_connections_idle', 'pool'),
  gauge('pool_connections_pending', 'pool'),
  gauge('pool_connections', 'pool'),
  gauge('pool_connections_max', 'pool'),
  gauge('pool_connections_min', 'pool'),
  noLadder('pool_connections_acquire_seconds', 'pool'),
  noLadder('pool_connections_usage_seconds', 'pool'),
  counter('pool_connections_timeout_total', 'pool'),
];

/** The HTTP server timer of ingest and search (the consumer has none). */
const HTTP_TIMER = withLadder(
  'http_server_requests_seconds',
  [0.005, 10],
  'method',
  'uri',
  'status',
  'outcome',
);

export const INGEST_METERS: Meter[] = [
  counter('ingest_events_received_total', 'type', 'mode'),
  counter('ingest_events_rejected_total', 'reason'),
  withLadder('ingest_payload_bytes', [256, 1048576], 'mode'),
  withLadder('ingest_batch_events', [1, 256]),
  withLadder('ingest_time_skew', [1, 90 * 86400], 'direction'),
  withLadder('broker_produce_latency_seconds', [0.001, 2.5], 'topic', 'outcome'),
  counter('event_unrecognised_total', 'type', 'reason'),
  HTTP_TIMER,
  counter('auth_decisions_total', 'reason', 'outcome'),
];

export const CONSUMER_METERS: Meter[] = [
  withLadder('consume_batch_size', [1, 1000]),
  counter('consume_records_persisted_total', 'type'),
  counter('consume_records_duplicate_total'),
  withLadder('consume_batch_latency_seconds', [0.005, 5], 'outcome'),
  withLadder('consume_decode_duration_seconds', [0.00005, 0.05]),
  counter('consume_records_poison_total', 'reason'),
  counter('consume_records_past_retention_total'),
  gauge('consume_group_lag', 'group', 'topic', 'partition'),
  gauge('consume_running'),
  counter('consume_lifecycle_commands_total', 'command', 'outcome'),
  gauge('consume_checkpoint_divergence'),
  gauge('dlq_depth'),
  gauge('dlq_oldest_age_seconds', 'partition'),
  counter('dlq_replay_operations_total', 'outcome'),
  counter('dlq_replay_records_total', 'outcome'),
  withLadder('maintenance_job_duration_seconds', [0.1, 900], 'job', 'outcome'),
  counter('maintenance_partitions_created_total'),
  counter('maintenance_partitions_detached_total'),
  gauge('maintenance_partitions_headroom'),
  gauge('maintenance_partitions_blocked'),
  gauge('partition_default_rows'),
  gauge('rollup_staleness'),
  ...POOL_METERS,
];

export const SEARCH_METERS: Meter[] = [
  withLadder('search_query_duration_seconds', [0.01, 10], 'shape'),
  withLadder('search_results_returned', [1, 250], 'shape'),
  counter('search_pages_total', 'page'),
  counter('search_facets_capped_total'),
  gauge('tail_connections'),
  counter('tail_events_delivered_total'),
  HTTP_TIMER,
  ...POOL_METERS,
];

/** The 11 meters of the ladder table: the only ones of the catalogue with `_bucket`. */
export const LADDER_METERS = [
  'http_server_requests_seconds',
  'search_query_duration_seconds',
  'broker_produce_latency_seconds',
  'consume_batch_latency_seconds',
  'consume_decode_duration_seconds',
  'maintenance_job_duration_seconds',
  'consume_batch_size',
  'ingest_payload_bytes',
  'ingest_batch_events',
  'ingest_time_skew',
  'search_results_returned',
];

/** time, text, payload, attrs joined by `+` in that order, or `none`: 16 values. */
const SHAPES = Array.from({ length: 16 }, (_, bits) => {
  const parts = ['time', 'text', 'payload', 'attrs'].filter((_, i) => bits & (1 << i));
  return parts.length ? parts.join('+') : 'none';
});

/** The closed tag-value sets: no other value of these tags is ever exported. */
export const CLOSED_VALUES: Record<string, string[]> = {
  outcome: ['success', 'failure', 'duplicate', 'skipped'],
  command: ['start', 'stop', 'pause', 'resume', 'restart', 'clear-checkpoints'],
  direction: ['future', 'past'],
  mode: ['binary', 'structured'],
  job: ['partition-maintenance', 'rollup-refresh'],
  pool: ['observatory-read', 'observatory-write'],
  page: ['first', 'continuation'],
  shape: SHAPES,
};

// The spec's sets are written out here on purpose, not imported from the code that emits them:
// the conformance test compares the code against the spec, not against itself.
const REJECTION_REASONS = [
  'malformed',
  'invalid-attributes',
  'invalid-payload',
  'unknown-type',
  'too-large',
  'unpersistable',
];
const AUTH_REASONS = [
  'absent',
  'malformed',
  'bad-signature',
  'expired',
  'not-yet-valid',
  'wrong-audience',
  'scope-missing',
  'accepted',
  'disabled',
];

/** `reason` per meter: the ingest/poison set, the unrecognised pair, or the authentication set. */
export const REASONS: Record<string, string[]> = {
  ingest_events_rejected_total: REJECTION_REASONS,
  consume_records_poison_total: REJECTION_REASONS,
  event_unrecognised_total: ['unknown-type', 'invalid-payload'],
  auth_decisions_total: AUTH_REASONS,
};
/** Runtime meters (prom-client defaults) are the JVM binders' replacement, outside the catalogue's ladder rule. */
export const isRuntimeMeter = (name: string): boolean =>
  name.startsWith('nodejs_') || name.startsWith('process_');
