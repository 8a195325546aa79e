/**
 * A service of services/ run as its own Node.js process from `src/main.ts`, exactly as it boots in
 * its image (configuration from the environment, its own telemetry setup, the node flags of its
 * `start:prod`), on a free port of 127.0.0.1: for suites that must see what `main.ts` wires, e.g.
 * the traces each process exports or its memory under overload.
 */
import { join } from 'node:path';
import { productionNodeArgs } from './node-args.js';
import { repoRoot } from './paths.js';
import { freePort } from './ports.js';
import { pollReady, supervisedService } from './supervise.js';

export interface ServiceProcessOptions {
  /** Folder under services/, e.g. `ingest`. */
  name: string;
  /** Variables on top of this process's environment; the listen address and port are set here. */
  env: Record<string, string>;
  /** The service's listen variables; default `HTTP_HOST` and `HTTP_PORT`. */
  listen?: { host: string; port: string };
  /** Folder of the log (`<name>.log`) and the pid file. */
  dataDir: string;
  startTimeoutMs?: number;
}

export interface ServiceProcess {
  url: string;
  logFile: string;
  /** The process id while it runs (e.g. to read its memory from /proc). */
  pid(): number | undefined;
  /** SIGTERM (the service's graceful shutdown, telemetry flushed last), SIGKILL after 45 s. */
  stop(): Promise<void>;
}

/**
 * Starts `services/<name>/src/main.ts` and waits for `/health/live`.
 *
 * @example
 * const ingest = await startServiceProcess({ name: 'ingest', dataDir, env: { BROKER_BOOTSTRAP_SERVERS } });
 * await fetch(`${ingest.url}/v1/events`, ...);
 * await ingest.stop();
 */
export async function startServiceProcess(opts: ServiceProcessOptions): Promise<ServiceProcess> {
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const cwd = join(repoRoot(), 'services', opts.name);
  const logFile = join(opts.dataDir, `${opts.name}.log`);
  const listen = opts.listen ?? { host: 'HTTP_HOST', port: 'HTTP_PORT' };
  const service = supervisedService({
    name: opts.name,
    command: process.execPath,
    args: [...productionNodeArgs(cwd), '--conditions=source', '--import', 'tsx', join(cwd, 'src', 'main.ts')],
    cwd,
    env: { ...process.env, ...opts.env, [listen.host]: '127.0.0.1', [listen.port]: String(port) },
    dataDir: opts.dataDir,
    marker: join(cwd, 'src', 'main.ts'),
    logFile,
    banner: () => `--- ${opts.name} on ${url} ---`,
    waitReady: (proc) =>
      pollReady(
        proc,
        opts.startTimeoutMs ?? 120_000,
        250,
        async () => (await fetch(`${url}/health/live`)).ok,
        opts.name,
      ),
    stopSignal: 'SIGTERM',
    stopGraceMs: 45_000,
  });
  await service.start();
  return { url, logFile, pid: () => service.pid(), stop: () => service.stop() };
}
