/**
 * A real Prometheus (Debian's, see scripts/install-prometheus.sh) for the tests: listens on a free
 * port of 127.0.0.1, keeps its TSDB in a scratch folder, loads the rule files, and scrapes the
 * given targets every second. `stop()` kills it and removes the folder.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { freePort, tempDataDir } from '@event-observatory/devstack';
import { retry } from '@event-observatory/service-kit';
import { stringify } from 'yaml';

export interface ScrapeTarget {
  /** The scrape job, e.g. `ingest`. */
  job: string;
  /** `host:port` serving /metrics. */
  address: string;
  /** Becomes the `service` target label, as the Prometheus Operator sets it from the Service. */
  service: string;
}

export interface PrometheusHandle {
  url: string;
  /** GET /api/v1/query: the HTTP status and the decoded body. */
  query(expr: string): Promise<{ status: number; body: QueryResponse }>;
  stop(): Promise<void>;
}

export interface QueryResponse {
  status: 'success' | 'error';
  errorType?: string;
  error?: string;
  data?: { resultType: string; result: unknown[] };
}

export async function startPrometheus(
  opts: { ruleFiles?: string[]; targets?: ScrapeTarget[] } = {},
): Promise<PrometheusHandle> {
  const dir = tempDataDir('prometheus');
  const port = await freePort();
  const config = {
    global: { scrape_interval: '1s', evaluation_interval: '1s' },
    rule_files: opts.ruleFiles ?? [],
    scrape_configs: (opts.targets ?? []).map((t) => ({
      job_name: t.job,
      static_configs: [{ targets: [t.address], labels: { service: t.service } }],
    })),
  };
  writeFileSync(join(dir, 'prometheus.yml'), stringify(config));
  const child = spawn(
    'prometheus',
    [
      `--config.file=${join(dir, 'prometheus.yml')}`,
      `--storage.tsdb.path=${join(dir, 'data')}`,
      `--web.listen-address=127.0.0.1:${port}`,
      '--log.level=warn',
    ],
    { stdio: ['ignore', 'ignore', 'pipe'] },
  );
  let stderr = '';
  child.stderr?.on('data', (chunk: Buffer) => {
    stderr = (stderr + chunk.toString()).slice(-4000);
  });
  const url = `http://127.0.0.1:${port}`;
  const stop = async () => {
    await kill(child);
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    await retry(
      async () => {
        if (child.exitCode !== null) throw new Error(`prometheus exited ${child.exitCode}: ${stderr}`);
        const res = await fetch(`${url}/-/ready`);
        if (!res.ok) throw new Error(`prometheus not ready: ${res.status}`);
      },
      { backoff: { initialMs: 100, maxMs: 1_000 }, attempts: 40, retryable: () => child.exitCode === null },
    );
  } catch (err) {
    await stop();
    throw err;
  }
  return {
    url,
    async query(expr) {
      const res = await fetch(`${url}/api/v1/query?${new URLSearchParams({ query: expr })}`);
      return { status: res.status, body: (await res.json()) as QueryResponse };
    },
    stop,
  };
}

function kill(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    child.once('exit', () => resolve());
    child.kill('SIGTERM');
  });
}
