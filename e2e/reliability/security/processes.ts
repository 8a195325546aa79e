/**
 * Services as real processes (devstack's `startServiceProcess`, as `make dev` runs them,
 * configured only by environment, as a deployment runs them): their resident memory can be read
 * on its own, and everything they write to stdout and stderr is kept, so a suite can search it.
 */
import { readFileSync } from 'node:fs';
import { runServiceProcess, startServiceProcess, tempDataDir } from '@event-observatory/devstack';

export type ServiceName = 'ingest' | 'consumer' | 'search' | 'jobs';

/** Settings every spawned service gets: no exporter, no colours, UTC; nothing else inherited. */
const BASE_ENV = { OTEL_SDK_DISABLED: 'true', NO_COLOR: '1', TZ: 'UTC' };

let dataDir: string | undefined;
let started = 0;

/** What every process of these suites shares: its own log, BASE_ENV and `env`, nothing else inherited. */
function common(name: ServiceName, env: Record<string, string>) {
  dataDir ??= tempDataDir('security-services');
  return {
    name,
    instance: `${name}-${++started}`,
    dataDir,
    baseEnv: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '' },
    env: { ...BASE_ENV, ...env },
  };
}

export interface ServiceProcess {
  url: string;
  port: number;
  /** The metrics listener (`GET /metrics`). */
  metricsUrl: string;
  /** The consumer's admin listener (`/admin/...`). */
  adminUrl?: string;
  /** Everything written to stdout and stderr so far. */
  output(): string;
  /** Resident set size in bytes (`VmRSS` of /proc). */
  rssBytes(): number;
  /** SIGTERM, and the exit status once it is gone (SIGKILL after 45 s). */
  stop(): Promise<number | string>;
}

/** Starts a listening service on a free loopback port; resolves once `/health/live` answers 200. */
export async function spawnService(
  name: Exclude<ServiceName, 'jobs'>,
  env: Record<string, string>,
): Promise<ServiceProcess> {
  // The search service keeps the spec's Play-era names for its listener.
  const listen = name === 'search' ? { host: 'PLAY_HTTP_ADDRESS', port: 'PLAY_HTTP_PORT' } : undefined;
  let output = '';
  const service = await startServiceProcess({
    ...common(name, env),
    listen,
    onLine: (line) => {
      output += `${line}\n`;
    },
  });
  return {
    url: service.url,
    port: service.port,
    metricsUrl: service.metricsUrl,
    ...(service.adminUrl ? { adminUrl: service.adminUrl } : {}),
    output: () => output,
    rssBytes() {
      const status = readFileSync(`/proc/${service.pid()}/status`, 'utf8');
      return Number(/^VmRSS:\s+(\d+) kB/m.exec(status)![1]) * 1024;
    },
    async stop() {
      await service.stop();
      return service.exited();
    },
  };
}

/** Runs a maintenance job once (`observatory-jobs <job>`) and returns its exit status and output. */
export async function runJob(
  job: string,
  env: Record<string, string>,
): Promise<{ code: number | string; output: string }> {
  const { code, stdout, stderr } = await runServiceProcess({ ...common('jobs', env), args: [job] });
  return { code, output: stdout + stderr };
}
