/**
 * Debian's Prometheus and postgres_exporter (scripts/install/prometheus.sh installs both) on free
 * ports of 127.0.0.1, supervised like Kafka and PostgreSQL: for the monitoring tests and the
 * observability suite. Prometheus keeps its TSDB in `dataDir` (empty at first start).
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { freePort } from './ports.js';
import { pollReady, type Supervised, supervisedService } from './supervise.js';

export interface ScrapeTarget {
  /** The scrape job, e.g. `ingest`. */
  job: string;
  /** `host:port` serving /metrics. */
  address: string;
  /**
   * The `service` target label, as the Prometheus Operator sets it from the Kubernetes Service;
   * it makes a service's own `service` tag appear as `exported_service`, as the alerts expect.
   */
  service?: string;
}

export interface PrometheusOptions {
  /** Folder of the configuration, the TSDB, the log and the pid file. */
  dataDir: string;
  targets?: ScrapeTarget[];
  /** Rule files to load and evaluate (absolute paths). */
  ruleFiles?: string[];
  /** Scrape and rule evaluation interval; default `1s` so tests see data quickly. */
  interval?: string;
  /** Port on 127.0.0.1; default (or 0) a free one. */
  port?: number;
  startTimeoutMs?: number;
}

export interface PrometheusHandle {
  url: string;
  logFile: string;
  /** GET /api/v1/query: the HTTP status and the decoded body. */
  query(expr: string): Promise<{ status: number; body: PromQueryResponse }>;
  stop(): Promise<void>;
}

export interface PromQueryResponse {
  status: 'success' | 'error';
  errorType?: string;
  error?: string;
  data?: { resultType: string; result: { metric: Record<string, string>; value: [number, string] }[] };
}

/**
 * Starts Prometheus scraping `targets` and evaluating `ruleFiles`.
 *
 * @example
 * const prom = await startPrometheus({ dataDir, targets: [{ job: 'ingest', address: '127.0.0.1:8081', service: 'ingest' }] });
 * const { body } = await prom.query('up');
 * await prom.stop();
 */
export async function startPrometheus(opts: PrometheusOptions): Promise<PrometheusHandle> {
  const port = opts.port || (await freePort());
  const interval = opts.interval ?? '1s';
  const configFile = join(opts.dataDir, 'prometheus.yml');
  // JSON is YAML: no YAML writer needed.
  const config = {
    global: { scrape_interval: interval, evaluation_interval: interval },
    rule_files: opts.ruleFiles ?? [],
    scrape_configs: (opts.targets ?? []).map((t) => ({
      job_name: t.job,
      static_configs: [{ targets: [t.address], labels: t.service ? { service: t.service } : {} }],
    })),
  };
  writeFileSync(configFile, JSON.stringify(config, null, 2));
  const url = `http://127.0.0.1:${port}`;
  const service = supervisedService({
    name: 'prometheus',
    command: 'prometheus',
    args: [
      `--config.file=${configFile}`,
      `--storage.tsdb.path=${join(opts.dataDir, 'tsdb')}`,
      // The platform's metrics retention (30 days), as the chart README asks of the operator's.
      '--storage.tsdb.retention.time=30d',
      `--web.listen-address=127.0.0.1:${port}`,
    ],
    dataDir: opts.dataDir,
    marker: configFile,
    logFile: join(opts.dataDir, 'prometheus.log'),
    banner: () => `--- devstack: starting Prometheus at ${new Date().toISOString()}`,
    waitReady: (proc) => waitHttpOk(proc, `${url}/-/ready`, opts.startTimeoutMs ?? 30_000, 'Prometheus'),
    stopSignal: 'SIGTERM',
    stopGraceMs: 10_000,
  });
  await service.start();
  return {
    url,
    logFile: join(opts.dataDir, 'prometheus.log'),
    async query(expr) {
      const res = await fetch(`${url}/api/v1/query?${new URLSearchParams({ query: expr })}`);
      return { status: res.status, body: (await res.json()) as PromQueryResponse };
    },
    stop: service.stop,
  };
}

export interface ExporterHandle {
  /** `127.0.0.1:<port>`, a scrape target. */
  address: string;
  stop(): Promise<void>;
}

/**
 * Starts postgres_exporter for the database at `databaseUrl` (a `postgres://` URL); its `pg_up`
 * is what PostgresDown watches.
 */
export async function startPostgresExporter(opts: {
  dataDir: string;
  databaseUrl: string;
  startTimeoutMs?: number;
}): Promise<ExporterHandle> {
  const port = await freePort();
  const address = `127.0.0.1:${port}`;
  const dsn = new URL(opts.databaseUrl);
  if (!dsn.searchParams.has('sslmode')) dsn.searchParams.set('sslmode', 'disable');
  const service = supervisedService({
    name: 'postgres-exporter',
    command: 'prometheus-postgres-exporter',
    args: [`--web.listen-address=${address}`],
    env: { ...process.env, DATA_SOURCE_NAME: dsn.toString() },
    dataDir: opts.dataDir,
    marker: address,
    logFile: join(opts.dataDir, 'postgres-exporter.log'),
    banner: () => `--- devstack: starting postgres_exporter at ${new Date().toISOString()}`,
    waitReady: (proc) =>
      waitHttpOk(proc, `http://${address}/metrics`, opts.startTimeoutMs ?? 30_000, 'postgres_exporter'),
    stopSignal: 'SIGTERM',
    stopGraceMs: 5_000,
  });
  await service.start();
  return { address, stop: service.stop };
}

function waitHttpOk(proc: Supervised, url: string, timeoutMs: number, what: string): Promise<void> {
  return pollReady(proc, timeoutMs, 100, async () => (await fetch(url)).ok, what);
}
