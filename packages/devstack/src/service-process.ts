/**
 * The one way a service of services/ is started as its own Node.js process on this machine:
 * `make dev`, the tests, e2e and the benchmarks all come through `startServiceProcess`, so each
 * runs the service as its image does (configuration from the environment, its own telemetry
 * setup, the node flags of its `start:prod`, which the image's launcher also reads, and the
 * variables its image sets), supervised (pid file, watchdog, SIGTERM then SIGKILL) and listening
 * on 127.0.0.1.
 */
import { join } from 'node:path';
import { PRODUCTION_ENV, productionNodeArgs } from './node-args.js';
import { repoRoot } from './paths.js';
import { freePort } from './ports.js';
import { pollReady, supervisedService } from './supervise.js';

export interface ServiceProcessOptions {
  /** Folder under services/, e.g. `ingest`. */
  name: string;
  /** The service's folder; default `services/<name>` of this checkout (a benchmark compares another's). */
  dir?: string;
  /** Variables on top of `baseEnv`; the listen address and port are set here. */
  env: Record<string, string>;
  /**
   * The environment `env` goes on top of; default this process's. A suite that must see the
   * service with nothing inherited passes e.g. `{ PATH: process.env.PATH }`.
   */
  baseEnv?: NodeJS.ProcessEnv;
  /** Arguments after the entry point (a job's name). */
  args?: string[];
  /**
   * The service's listen variables, set to 127.0.0.1 and `port`; default `HTTP_HOST` and
   * `HTTP_PORT`. `false` for a process that serves nothing (a job, a start that must fail): it is
   * started without waiting for `/health/live`.
   */
  listen?: { host: string; port: string } | false;
  /** Default a free port. */
  port?: number;
  /** The metrics listener's (`METRICS_PORT`), set with the listen variables; default a free port. */
  metricsPort?: number;
  /** The consumer's admin listener's (`ADMIN_PORT`); default a free port for the consumer. */
  adminPort?: number;
  /** `source` (tsx on `src/main.ts`, the default) or `dist` (`dist/main.js` after `tsc -b`, as the image). */
  build?: 'source' | 'dist';
  /** Node flags instead of those of `start:prod` (a benchmark's variants). */
  nodeArgs?: string[];
  /** Folder of the log (`<instance>.log`) and the pid file. */
  dataDir: string;
  /** Name of the log and pid file; default `name`. Distinct when one service runs twice at once. */
  instance?: string;
  /** Each line the process writes, and where, besides the log file. */
  onLine?: (line: string, stream: 'stdout' | 'stderr') => void;
  startTimeoutMs?: number;
}

export interface ServiceProcess {
  url: string;
  port: number;
  /** The metrics listener (`GET /metrics`); empty for a process that serves nothing. */
  metricsUrl: string;
  /** The admin listener (`/admin/...`) of a service that has one (the consumer). */
  adminUrl?: string;
  logFile: string;
  /** The process id while it runs (e.g. to read its memory from /proc). */
  pid(): number | undefined;
  /** The exit code (or signal name) of the current or last run. */
  exited(): Promise<number | string>;
  /** SIGTERM (the service's graceful shutdown, telemetry flushed last), SIGKILL after 45 s. */
  stop(): Promise<void>;
  /** SIGKILL at once, as a crash would. */
  kill(): Promise<void>;
  /** Starts it again on the same port after `stop` or `kill` (or its own exit). */
  restart(): Promise<void>;
}

/**
 * Starts `services/<name>` and, when it listens, waits for `/health/live`.
 *
 * @example
 * const ingest = await startServiceProcess({ name: 'ingest', dataDir, env: { BROKER_BOOTSTRAP_SERVERS } });
 * await fetch(`${ingest.url}/v1/events`, ...);
 * await ingest.stop();
 */
export async function startServiceProcess(opts: ServiceProcessOptions): Promise<ServiceProcess> {
  const port = opts.port ?? (await freePort());
  const url = `http://127.0.0.1:${port}`;
  const listen = opts.listen ?? { host: 'HTTP_HOST', port: 'HTTP_PORT' };
  // Every service serves its meters on a port of their own, the consumer its admin API too: both
  // get free ports here, or two services started side by side would collide on the defaults.
  const ports: Record<string, number> = listen
    ? {
        METRICS_PORT: opts.metricsPort ?? (await freePort()),
        ...(opts.adminPort !== undefined || opts.name === 'consumer'
          ? { ADMIN_PORT: opts.adminPort ?? (await freePort()) }
          : {}),
      }
    : {};
  const urlOf = (variable: string) =>
    ports[variable] === undefined ? undefined : `http://127.0.0.1:${ports[variable]}`;
  const cwd = opts.dir ?? join(repoRoot(), 'services', opts.name);
  const instance = opts.instance ?? opts.name;
  const logFile = join(opts.dataDir, `${instance}.log`);
  const entry =
    opts.build === 'dist'
      ? [join(cwd, 'dist', 'main.js')]
      : ['--conditions=source', '--import', 'tsx', join(cwd, 'src', 'main.ts')];
  const service = supervisedService({
    name: instance,
    command: process.execPath,
    args: [...(opts.nodeArgs ?? productionNodeArgs(cwd)), ...entry, ...(opts.args ?? [])],
    cwd,
    env: {
      ...PRODUCTION_ENV,
      ...(opts.baseEnv ?? process.env),
      ...opts.env,
      ...(listen ? { [listen.host]: '127.0.0.1', [listen.port]: String(port) } : {}),
      ...Object.fromEntries(Object.entries(ports).map(([variable, p]) => [variable, String(p)])),
    },
    dataDir: opts.dataDir,
    marker: entry.at(-1) as string,
    logFile,
    onLine: opts.onLine,
    // Its own process group: the caller decides when it stops (a terminal's Ctrl-C reaches `make
    // dev` only, which then sends exactly one SIGTERM).
    detached: true,
    banner: () => `--- ${instance} ${listen ? `on ${url}` : (opts.args ?? []).join(' ')} ---`,
    waitReady: (proc) =>
      listen
        ? pollReady(
            proc,
            opts.startTimeoutMs ?? 120_000,
            250,
            async () => (await fetch(`${url}/health/live`)).ok,
            instance,
          )
        : Promise.resolve(),
    stopSignal: 'SIGTERM',
    stopGraceMs: 45_000,
  });
  await service.start();
  const adminUrl = urlOf('ADMIN_PORT');
  return {
    url,
    port,
    metricsUrl: urlOf('METRICS_PORT') ?? '',
    ...(adminUrl ? { adminUrl } : {}),
    logFile,
    pid: () => service.pid(),
    exited: () => service.exited() as Promise<number | string>,
    stop: () => service.stop(),
    kill: () => service.kill(),
    restart: () => service.start(),
  };
}

export interface ServiceRun {
  /** The exit code, or the signal's name when one ended it. */
  code: number | string;
  stdout: string;
  stderr: string;
}

/**
 * Runs a process of a service that serves nothing (a job, a start that must fail) to its exit,
 * through `startServiceProcess`, with its output kept by stream; SIGKILL after `timeoutMs`.
 *
 * @example
 * const { code, stdout } = await runServiceProcess({ name: 'jobs', args: ['rollup-refresh'], dataDir, env });
 */
export async function runServiceProcess(
  opts: Omit<ServiceProcessOptions, 'listen' | 'port' | 'onLine'>,
  timeoutMs = 120_000,
): Promise<ServiceRun> {
  const output = { stdout: '', stderr: '' };
  const run = await startServiceProcess({
    ...opts,
    listen: false,
    onLine: (line, stream) => {
      output[stream] += `${line}\n`;
    },
  });
  const timer = setTimeout(() => void run.kill(), timeoutMs);
  const code = await run.exited();
  clearTimeout(timer);
  return { code, ...output };
}
