/**
 * The histogram ladders of the metrics catalogue (README, "Metrics"), one place for every service.
 * Timer ladders are in seconds; `payloadBytes` in bytes; `timeSkew` in seconds; the others are
 * counts. Every ladder starts and ends exactly at the spec's bounds and steps 1-2.5-5 (or powers
 * of two for byte and batch ladders), so neighbouring buckets differ by a factor of 2 to 2.5.
 */
export const ladders = {
  /** http_server_requests_seconds: 5 ms to 10 s. */
  httpServer: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
  /** search_query_duration_seconds: 10 ms to 10 s. */
  searchQuery: [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
  /** broker_produce_latency_seconds: 1 ms to 2.5 s. */
  brokerProduce: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
  /** consume_batch_latency_seconds: 5 ms to 5 s. */
  consumeBatchLatency: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
  /** consume_decode_duration_seconds: 50 µs to 50 ms. */
  decode: [0.00005, 0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05],
  /** maintenance_job_duration_seconds: 100 ms to 15 min. */
  maintenanceJob: [0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 150, 300, 600, 900],
  /** controller_reconcile_duration_seconds (not in the spec, which shows no controller): 10 ms to 60 s. */
  reconcile: [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60],
  /** consume_batch_size: 1 to 1000 records. */
  batchSize: [1, 2, 5, 10, 25, 50, 100, 250, 500, 1000],
  /** ingest_payload_bytes: 256 B to 1 MiB, powers of two. */
  payloadBytes: [256, 512, 1024, 2048, 4096, 8192, 16384, 32768, 65536, 131072, 262144, 524288, 1048576],
  /** ingest_batch_events: 1 to 256 events, powers of two. */
  batchEvents: [1, 2, 4, 8, 16, 32, 64, 128, 256],
  /** ingest_time_skew: 1 s to 90 d, in seconds (1s 5s 15s 1m 5m 15m 1h 6h 1d 7d 30d 90d). */
  timeSkew: [1, 5, 15, 60, 300, 900, 3600, 21600, 86400, 604800, 2592000, 7776000],
  /** search_results_returned: 1 to 250 rows. */
  searchResults: [1, 5, 10, 25, 50, 100, 250],
} as const satisfies Record<string, readonly number[]>;

export type LadderName = keyof typeof ladders;
