/**
 * Start or reuse a Kubernetes cluster for a test run.
 *
 * - `KUBECONFIG` set: that cluster is used as it is (kind in a user's CI, after
 *   `kind load docker-image ...`); nothing is built or started, nothing is stopped.
 * - otherwise, when a cluster of this tree already runs (`.dev/kubeconfig` answers: `make cluster`,
 *   or the one `make test` starts beside its fault suites): it is reused and left running.
 * - otherwise `scripts/cluster/up.sh` is started (building what is missing, cached) and stopped
 *   again, with everything it created, by `stop()`.
 */
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { existsSync, mkdirSync, openSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

export const REPO_ROOT = resolve(import.meta.dirname, '../../..');
/**
 * Bound on an add-on script that builds what it deploys (Traefik, metrics-server, the Prometheus
 * Operator, oauth2-proxy; KEDA in the soak). On a cold machine that build waits for `make test`'s
 * prebuild, which builds every add-on one after the other, so the bound covers that whole queue, not
 * one build (KEDA, not in prebuild, builds alone in about half an hour).
 */
export const ADDON_DEPLOY_TIMEOUT_MS = 40 * 60_000;
/** Bound on the setup of a suite that deploys an add-on: the deploy's, then the suite's own. */
export const ADDON_SUITE_SETUP_MS = ADDON_DEPLOY_TIMEOUT_MS + 5 * 60_000;
/** The cluster's settings, then the pinned versions (scripts/versions.sh, which config.sh sources). */
const SETTINGS = ['scripts/cluster/config.sh', 'scripts/versions.sh'].map((f) => join(REPO_ROOT, f));

/** A `NAME=value` line of scripts/cluster/config.sh or scripts/versions.sh (ranges, names, versions). */
export function clusterSetting(name: string): string {
  for (const file of SETTINGS) {
    const line = readFileSync(file, 'utf8')
      .split('\n')
      .find((l) => l.startsWith(`${name}=`));
    if (line) return (line.slice(name.length + 1).split(/\s+#/)[0] ?? '').trim();
  }
  throw new Error(`${name} is not set in ${SETTINGS.join(' or ')}`);
}

/** scripts/cluster/config.sh's CLUSTER_DIR and KUBECONFIG_OUT, which the environment may override there too. */
const CLUSTER_DIR = process.env.CLUSTER_DIR ?? join(REPO_ROOT, '.dev/cluster');
const KUBECONFIG_OUT = process.env.KUBECONFIG_OUT ?? join(REPO_ROOT, '.dev/kubeconfig');

export function cacheDir(): string {
  return process.env.OBSERVATORY_CACHE ?? join(REPO_ROOT, '.cache');
}

/** The kubectl built with the cluster when there is one, else `kubectl` from the PATH. */
export function kubectlPath(): string {
  const built = join(cacheDir(), 'kubernetes', clusterSetting('K8S_VERSION'), 'bin', 'kubectl');
  return process.env.OBSERVATORY_KUBECTL ?? (existsSync(built) ? built : 'kubectl');
}

/** This machine's own address (the global address of its default route's interface); pods can reach it. */
export async function hostAddress(): Promise<string> {
  const route = (await run('ip', ['-4', 'route', 'show', 'default'])).stdout;
  const dev = /\bdev (\S+)/.exec(route)?.[1];
  if (!dev) throw new Error(`no default route in: ${route}`);
  const addr = (await run('ip', ['-4', '-o', 'addr', 'show', 'dev', dev, 'scope', 'global'])).stdout;
  const match = /\binet (\d+\.\d+\.\d+\.\d+)\//.exec(addr);
  if (!match?.[1]) throw new Error(`cannot find this machine's address in: ${addr}`);
  return match[1];
}

export interface ClusterHandle {
  kubeconfig: string;
  /** `kubeconfig`: KUBECONFIG was given; `running`: a cluster of this tree was reused; `started`: ours. */
  origin: 'kubeconfig' | 'running' | 'started';
  /** True when this cluster is the one of scripts/cluster (images are built and imported here). */
  local: boolean;
  /** Stops the cluster when this handle started it; otherwise does nothing. */
  stop(): Promise<void>;
}

async function answers(kubeconfig: string): Promise<boolean> {
  try {
    await run(kubectlPath(), [
      '--kubeconfig',
      kubeconfig,
      '--request-timeout',
      '5s',
      'get',
      '--raw',
      '/readyz',
    ]);
    return true;
  } catch {
    return false;
  }
}

async function waitFor(
  what: string,
  timeoutMs: number,
  check: () => Promise<boolean> | boolean,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs / 1000}s waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 1000));
  }
}

/**
 * Returns a ready cluster (API answers, node Ready). A cold start builds Kubernetes (~10 min on 2
 * cores, longer on a busy machine) within `timeoutMs` (default 60 min); its output goes to `.dev/cluster-test.log`.
 */
export async function startOrReuseCluster(
  opts: { timeoutMs?: number; log?: (line: string) => void } = {},
): Promise<ClusterHandle> {
  const log = opts.log ?? (() => {});
  const given = process.env.KUBECONFIG;
  if (given) {
    if (!(await answers(given))) throw new Error(`KUBECONFIG=${given}: the cluster does not answer`);
    log(`using the cluster of KUBECONFIG=${given}`);
    return { kubeconfig: given, origin: 'kubeconfig', local: false, stop: async () => {} };
  }
  const kubeconfig = KUBECONFIG_OUT;
  if (existsSync(kubeconfig) && (await answers(kubeconfig))) {
    log(`reusing the running cluster of ${kubeconfig} (\`make cluster\`, or the one \`make test\` started)`);
    return { kubeconfig, origin: 'running', local: true, stop: async () => {} };
  }

  mkdirSync(join(REPO_ROOT, '.dev'), { recursive: true });
  const logFile = join(REPO_ROOT, '.dev/cluster-test.log');
  log(`starting the cluster (scripts/cluster/up.sh; output in ${logFile})`);
  const out = openSync(logFile, 'w');
  const child: ChildProcess = spawn(join(REPO_ROOT, 'scripts/cluster/up.sh'), [], {
    stdio: ['ignore', out, out],
    // up.sh stops the cluster by itself should this process die without stopping it.
    env: { ...process.env, OBSERVATORY_CACHE: cacheDir(), OBSERVATORY_CLUSTER_PARENT: String(process.pid) },
  });
  let exited = false;
  const exit = new Promise<void>((done) =>
    child.once('exit', () => {
      exited = true;
      done();
    }),
  );
  const ready = join(CLUSTER_DIR, 'ready');
  const stop = async () => {
    if (!exited) child.kill('SIGTERM');
    await exit; // up.sh has removed everything it created when it exits
  };
  try {
    await waitFor('the cluster (see .dev/cluster-test.log)', opts.timeoutMs ?? 60 * 60_000, () => {
      if (exited) throw new Error(`scripts/cluster/up.sh exited early; see ${logFile}`);
      return existsSync(ready);
    });
  } catch (error) {
    await stop();
    throw error;
  }
  return { kubeconfig, origin: 'started', local: true, stop };
}

/** `make images` (scripts/images/build.sh): builds every image and imports it into the local cluster. */
export async function buildImages(log: (line: string) => void = () => {}): Promise<void> {
  const child = spawn(join(REPO_ROOT, 'scripts/images/build.sh'), [], {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, OBSERVATORY_CACHE: cacheDir() },
  });
  let output = '';
  for (const stream of [child.stdout, child.stderr]) {
    stream?.on('data', (chunk: Buffer) => {
      output += chunk.toString();
      for (const line of chunk.toString().split('\n')) if (line.trim()) log(line);
    });
  }
  const code = await new Promise<number | null>((done) => child.once('exit', done));
  if (code !== 0) throw new Error(`scripts/images/build.sh failed (${code}):\n${output.slice(-3000)}`);
}
