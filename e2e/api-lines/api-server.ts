/**
 * The API server of one Kubernetes line alone, on loopback: the line's `kube-apiserver`
 * (scripts/cluster/build-apiserver.sh) over an etcd of its own (the cluster's etcd binary), with the
 * cluster's certificates (scripts/cluster/gen-certs.sh) and its admin as the client. No controller,
 * scheduler or kubelet: objects are stored and validated as that line's API does, and nothing runs.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync, rmSync } from 'node:fs';
import { request } from 'node:https';
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

export interface ApiResponse {
  status: number;
  body: Record<string, unknown>;
}

export interface ApiServer {
  /** `gitVersion` of the server's `/version`. */
  version: string;
  /** One request as the cluster's admin; a JSON body is sent as such. */
  call(method: string, path: string, body?: unknown): Promise<ApiResponse>;
  stop(): Promise<void>;
}

const script = (name: string) => join(REPO_ROOT, 'scripts/cluster', name);

/** Builds (once) and starts the API server of `line` (v1.N.x); `stop` ends both processes and removes their folder. */
export async function startApiServer(line: string): Promise<ApiServer> {
  const env = { ...process.env, OBSERVATORY_CACHE: cacheDir() };
  const apiserver = join(
    execFileSync(script('build-apiserver.sh'), [line], { encoding: 'utf8', env }).trim(),
    'kube-apiserver',
  );
  // The cluster's etcd: built with the cluster's binaries, which it checks first (free when built).
  execFileSync(script('build-binaries.sh'), { stdio: 'ignore', env });
  const etcd = join(cacheDir(), 'kubernetes', clusterSetting('K8S_VERSION'), 'bin', 'etcd');

  const dir = tempDataDir(`api-${line}`);
  const pki = join(dir, 'pki');
  execFileSync(script('gen-certs.sh'), [pki, '127.0.0.1'], { stdio: 'ignore', env });
  const [etcdPort, peerPort, apiPort] = [await freePort(), await freePort(), await freePort()];
  // Supervised: stopped with this process however it ends (devstack's watchdog), never left behind.
  const children: Supervised[] = [];
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

  const tls = {
    ca: readFileSync(join(pki, 'ca.crt')),
    cert: readFileSync(join(pki, 'admin.crt')),
    key: readFileSync(join(pki, 'admin.key')),
  };
  const call = (method: string, path: string, body?: unknown) =>
    new Promise<ApiResponse>((resolve, reject) => {
      const payload = body === undefined ? undefined : JSON.stringify(body);
      const req = request(
        {
          host: '127.0.0.1',
          port: apiPort,
          method,
          path,
          ...tls,
          headers: payload ? { 'content-type': 'application/json' } : {},
          timeout: 30_000,
        },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('end', () => {
            const text = Buffer.concat(chunks).toString('utf8');
            let parsed: Record<string, unknown>;
            try {
              parsed = JSON.parse(text) as Record<string, unknown>;
            } catch {
              parsed = { text };
            }
            resolve({ status: res.statusCode ?? 0, body: parsed });
          });
        },
      );
      req.on('timeout', () => req.destroy(new Error(`${method} ${path}: no answer in 30 s`)));
      req.on('error', reject);
      req.end(payload);
    });

  const stop = async () => {
    await Promise.all(children.map((child) => stopChild(child, 'SIGTERM', 10_000)));
    rmSync(dir, { recursive: true, force: true });
  };

  // Ready once every post-start hook has run (RBAC's roles, the CRD controllers), within a minute.
  const deadline = Date.now() + 60_000;
  for (;;) {
    const ready = await call('GET', '/readyz').catch(() => undefined);
    if (ready?.status === 200) break;
    if (Date.now() > deadline || children.some((c) => c.hasExited())) {
      const log = tailOf(join(dir, 'kube-apiserver.log'));
      await stop();
      throw new Error(`the API server of ${line} did not get ready in 60 s:\n${log}`);
    }
    await new Promise((r) => setTimeout(r, 500));
  }
  const version = String((await call('GET', '/version')).body.gitVersion);
  return { version, call, stop };
}
