/**
 * The API server of one Kubernetes line alone, on loopback: the line's `kube-apiserver`
 * (scripts/cluster/build-apiserver.sh) over an etcd of its own (scripts/cluster/build-etcd.sh, the
 * cluster's etcd), with the cluster's certificates (scripts/cluster/gen-certs.sh) and its admin as
 * the client. No controller, scheduler or kubelet: objects are stored and validated as that line's
 * API does, and nothing runs.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import {
  freePort,
  type Supervised,
  spawnSupervised,
  stopChild,
  tailOf,
  tempDataDir,
} from '@event-observatory/devstack';
import { cacheDir, clusterSetting, REPO_ROOT } from '../cluster/lib/cluster.js';
import { httpRequest } from '../cluster/lib/http.js';

export interface ApiResponse {
  status: number;
  body: Record<string, unknown>;
}

export interface ApiServer {
  /** The server's `/version`. */
  version: { gitVersion: string; emulationMinor?: string };
  /** One request as the cluster's admin; a JSON body is sent as such. */
  call(method: string, path: string, body?: unknown): Promise<ApiResponse>;
  stop(): Promise<void>;
}

const READY_MS = 60_000;

/**
 * Runs a build script of scripts/cluster and returns the folder it prints; its progress (a cold
 * build takes minutes) goes to this process's stderr.
 */
function built(name: string, args: string[] = []): string {
  return execFileSync(join(REPO_ROOT, 'scripts/cluster', name), args, {
    encoding: 'utf8',
    env: { ...process.env, OBSERVATORY_CACHE: cacheDir() },
    stdio: ['ignore', 'pipe', 'inherit'],
  }).trim();
}

/** Builds (once) and starts the API server of `line` (v1.N.x); `stop` ends it, then etcd, and removes their folder. */
export async function startApiServer(line: string): Promise<ApiServer> {
  const apiserver = join(built('build-apiserver.sh', [line]), 'kube-apiserver');
  const etcd = join(built('build-etcd.sh'), 'server');
  const dir = tempDataDir(`api-${line}`);
  // Supervised: stopped with this process however it ends (devstack's watchdog), never left behind.
  const children: Supervised[] = [];
  const stop = async () => {
    // The API server first: etcd stopping under it would only fill its log.
    for (const child of children.toReversed()) await stopChild(child, 'SIGTERM', 10_000);
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    const pki = join(dir, 'pki');
    built('gen-certs.sh', [pki, '127.0.0.1']);
    const [etcdPort, peerPort, apiPort] = [await freePort(), await freePort(), await freePort()];
    const start = (name: string, command: string, args: string[]) =>
      children.push(spawnSupervised({ name, command, args, pidDir: dir, logFile: join(dir, `${name}.log`) }));
    const etcdUrl = `http://127.0.0.1:${etcdPort}`;
    const peerUrl = `http://127.0.0.1:${peerPort}`;
    start('etcd', etcd, [
      '--name=lines',
      `--data-dir=${join(dir, 'etcd')}`,
      `--listen-client-urls=${etcdUrl}`,
      `--advertise-client-urls=${etcdUrl}`,
      `--listen-peer-urls=${peerUrl}`,
      `--initial-advertise-peer-urls=${peerUrl}`,
      `--initial-cluster=lines=${peerUrl}`,
      '--unsafe-no-fsync=true',
      '--log-level=warn',
    ]);
    start('kube-apiserver', apiserver, [
      `--etcd-servers=${etcdUrl}`,
      '--bind-address=127.0.0.1',
      '--advertise-address=127.0.0.1',
      `--secure-port=${apiPort}`,
      `--tls-cert-file=${pki}/apiserver.crt`,
      `--tls-private-key-file=${pki}/apiserver.key`,
      `--client-ca-file=${pki}/ca.crt`,
      `--service-cluster-ip-range=${clusterSetting('SERVICE_CIDR')}`,
      '--service-account-issuer=https://kubernetes.default.svc',
      `--service-account-key-file=${pki}/sa.pub`,
      `--service-account-signing-key-file=${pki}/sa.key`,
      '--authorization-mode=RBAC',
      '--profiling=false',
    ]);
    const call = caller(apiPort, {
      ca: readFileSync(join(pki, 'ca.crt')),
      cert: readFileSync(join(pki, 'admin.crt')),
      key: readFileSync(join(pki, 'admin.key')),
    });
    await untilReady(call, children, line);
    const version = (await call('GET', '/version')).body as ApiServer['version'];
    return { version, call, stop };
  } catch (error) {
    await stop();
    throw error;
  }
}

/** Ready once every post-start hook has run (RBAC's roles, the CRD controllers); a child that exits ends the wait with its log. */
async function untilReady(call: ApiServer['call'], children: Supervised[], line: string): Promise<void> {
  const deadline = Date.now() + READY_MS;
  for (;;) {
    if ((await call('GET', '/readyz').catch(() => undefined))?.status === 200) return;
    const exited = children.find((c) => c.hasExited());
    if (exited) throw new Error(`${exited.name} of ${line} exited:\n${tailOf(exited.logFile)}`);
    if (Date.now() > deadline) {
      const log = tailOf(children.at(-1)?.logFile ?? '');
      throw new Error(`the API server of ${line} was not ready within ${READY_MS / 1000} s:\n${log}`);
    }
    await new Promise((r) => setTimeout(r, 500));
  }
}

/** Requests over TLS with the admin's client certificate; the body parsed as JSON when it is. */
function caller(port: number, tls: { ca: Buffer; cert: Buffer; key: Buffer }): ApiServer['call'] {
  return async (method, path, body) => {
    const payload = body === undefined ? undefined : JSON.stringify(body);
    const headers: Record<string, string> = payload ? { 'content-type': 'application/json' } : {};
    const res = await httpRequest(`127.0.0.1:${port}`, path, { method, headers, body: payload, tls });
    return { status: res.status, body: jsonOrText(res.body) };
  };
}

function jsonOrText(text: string): Record<string, unknown> {
  try {
    return JSON.parse(text) as Record<string, unknown>;
  } catch {
    return { text };
  }
}
