/**
 * Services as real processes (`src/main.ts` under tsx, configured only by environment, as a
 * deployment runs them): their resident memory can be read on its own, and everything they write
 * to stdout and stderr is kept, so a suite can search it.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { freePort } from '@event-observatory/devstack';
import { retry, withTimeout } from '@event-observatory/service-kit/resilience';

export type ServiceName = 'ingest' | 'consumer' | 'search' | 'jobs';

const serviceDir = (name: ServiceName) =>
  fileURLToPath(new URL(`../../../services/${name}/`, import.meta.url));

/** Settings every spawned service gets: no exporter, no colours, UTC. */
const BASE_ENV = { OTEL_SDK_DISABLED: 'true', NO_COLOR: '1', TZ: 'UTC' };

function start(name: ServiceName, env: Record<string, string>, args: string[]) {
  const child = spawn(process.execPath, ['--conditions=source', '--import', 'tsx', 'src/main.ts', ...args], {
    cwd: serviceDir(name),
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', ...BASE_ENV, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout!.setEncoding('utf8').on('data', (d: string) => {
    output += d;
  });
  child.stderr!.setEncoding('utf8').on('data', (d: string) => {
    output += d;
  });
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return { child, exited, output: () => output };
}

export interface ServiceProcess {
  url: string;
  port: number;
  child: ChildProcess;
  /** Everything written to stdout and stderr so far. */
  output(): string;
  /** Resident set size in bytes (`VmRSS` of /proc). */
  rssBytes(): number;
  /** SIGTERM, and the exit status once it is gone (SIGKILL after 30 s). */
  stop(): Promise<number | null>;
}

/** Starts a listening service on a free loopback port; resolves once `/health/live` answers 200. */
export async function spawnService(
  name: Exclude<ServiceName, 'jobs'>,
  env: Record<string, string>,
): Promise<ServiceProcess> {
  const port = await freePort();
  // The search service keeps the spec's Play-era names for its listener.
  const listener: Record<string, string> =
    name === 'search'
      ? { PLAY_HTTP_ADDRESS: '127.0.0.1', PLAY_HTTP_PORT: String(port) }
      : { HTTP_HOST: '127.0.0.1', HTTP_PORT: String(port) };
  const proc = start(name, { ...listener, ...env }, []);
  const url = `http://127.0.0.1:${port}`;
  const exitedEarly = proc.exited.then((code) => {
    throw new Error(`${name} exited (${code}) before it listened:\n${proc.output()}`);
  });
  exitedEarly.catch(() => {});
  const live = retry(
    async () => {
      const res = await fetch(`${url}/health/live`);
      if (res.status !== 200) throw new Error(`${name} /health/live answered ${res.status}`);
    },
    { attempts: 300, backoff: { initialMs: 200, maxMs: 500 } },
  );
  await Promise.race([live, exitedEarly]).catch((err: Error) => {
    proc.child.kill('SIGKILL');
    throw new Error(`${name} did not come up: ${err.message}\n${proc.output()}`);
  });
  return {
    url,
    port,
    child: proc.child,
    output: proc.output,
    rssBytes() {
      const status = readFileSync(`/proc/${proc.child.pid}/status`, 'utf8');
      return Number(/^VmRSS:\s+(\d+) kB/m.exec(status)![1]) * 1024;
    },
    async stop() {
      if (proc.child.exitCode !== null) return proc.child.exitCode;
      proc.child.kill('SIGTERM');
      return withTimeout(proc.exited, 30_000, 'service stop').catch(() => {
        proc.child.kill('SIGKILL');
        return proc.exited;
      });
    },
  };
}

/** Runs a maintenance job once (`observatory-jobs <job>`) and returns its exit status and output. */
export async function runJob(
  job: string,
  env: Record<string, string>,
): Promise<{ code: number | null; output: string }> {
  const proc = start('jobs', env, [job]);
  const code = await withTimeout(proc.exited, 120_000, `job ${job}`);
  return { code, output: proc.output() };
}
