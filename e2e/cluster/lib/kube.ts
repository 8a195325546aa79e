/**
 * What the cluster suites do with a cluster, through kubectl: apply manifests into a namespace of
 * their own, wait for rollouts and conditions, run a one-off pod, read logs, delete it all.
 */
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { kubectlPath } from './cluster.js';
import { untilAccepting } from './http.js';

/** A Kubernetes object as plain data (what `kubectl apply` takes). */
export type Manifest = Record<string, unknown> & { apiVersion: string; kind: string };

export class KubectlError extends Error {}

export class Kube {
  constructor(
    readonly kubeconfig: string,
    readonly kubectlBin: string = kubectlPath(),
  ) {}

  /** Runs kubectl; resolves with stdout, rejects with stderr on a non-zero exit or after timeoutMs. */
  kubectl(args: string[], opts: { input?: string; timeoutMs?: number } = {}): Promise<string> {
    return new Promise((done, fail) => {
      const child = spawn(this.kubectlBin, ['--kubeconfig', this.kubeconfig, ...args], {
        stdio: ['pipe', 'pipe', 'pipe'],
      });
      let stdout = '';
      let stderr = '';
      child.stdout.on('data', (c: Buffer) => {
        stdout += c.toString();
      });
      child.stderr.on('data', (c: Buffer) => {
        stderr += c.toString();
      });
      const timer = setTimeout(() => child.kill('SIGKILL'), opts.timeoutMs ?? 120_000);
      child.once('error', (e) => {
        clearTimeout(timer);
        fail(e);
      });
      child.once('close', (code, signal) => {
        clearTimeout(timer);
        if (code === 0) done(stdout);
        else
          fail(new KubectlError(`kubectl ${args.join(' ')}: ${signal ?? `exit ${code}`}: ${stderr.trim()}`));
      });
      child.stdin.end(opts.input ?? '');
    });
  }

  async getJson<T = Record<string, unknown>>(args: string[]): Promise<T> {
    return JSON.parse(await this.kubectl(['get', ...args, '-o', 'json'])) as T;
  }

  /**
   * `clusterIP:port` of Service `name` in `namespace` (this machine reaches ClusterIPs through
   * kube-proxy), once it accepts a connection: pods just turned Ready are behind it only from
   * kube-proxy's next sync, and until then a connection is refused.
   */
  async serviceAddress(namespace: string, name: string, port: number): Promise<string> {
    const svc = await this.getJson<{ spec: { clusterIP: string } }>([
      'service',
      name,
      '--namespace',
      namespace,
    ]);
    const address = `${svc.spec.clusterIP}:${port}`;
    await untilAccepting(address);
    return address;
  }

  /** A fresh namespace `<prefix>-<random>`; delete it with `TestNamespace.delete()`. */
  async createNamespace(prefix: string): Promise<TestNamespace> {
    const name = `${prefix}-${randomUUID().slice(0, 6)}`;
    await this.kubectl(['create', 'namespace', name]);
    await this.kubectl(['label', 'namespace', name, 'observatory.test/suite=true']);
    return new TestNamespace(this, name);
  }
}

interface PodJson {
  metadata: { name: string; deletionTimestamp?: string };
  status: { phase: string; conditions?: { type: string; status: string }[] };
}

export class TestNamespace {
  constructor(
    readonly kube: Kube,
    readonly name: string,
  ) {}

  kubectl(args: string[], opts?: { input?: string; timeoutMs?: number }): Promise<string> {
    return this.kube.kubectl(['--namespace', this.name, ...args], opts);
  }

  async apply(...manifests: Manifest[]): Promise<void> {
    const list = { apiVersion: 'v1', kind: 'List', items: manifests };
    await this.kubectl(['apply', '-f', '-'], { input: JSON.stringify(list) });
  }

  async rolloutStatus(deployment: string, timeoutMs = 120_000): Promise<void> {
    await this.kubectl(['rollout', 'status', `deployment/${deployment}`, `--timeout=${timeoutMs / 1000}s`], {
      timeoutMs: timeoutMs + 10_000,
    });
  }

  /** A token of one of the namespace's service accounts for `audience`, valid 10 minutes (`kubectl create token`). */
  async serviceAccountToken(serviceAccount: string, audience: string): Promise<string> {
    return (
      await this.kubectl(['create', 'token', serviceAccount, '--audience', audience, '--duration', '10m'])
    ).trim();
  }

  /** `kubectl wait --for=<condition> <resource>`. */
  async waitFor(resource: string, condition: string, timeoutMs = 120_000): Promise<void> {
    await this.kubectl(['wait', `--for=${condition}`, resource, `--timeout=${timeoutMs / 1000}s`], {
      timeoutMs: timeoutMs + 10_000,
    });
  }

  /** Pods matching a label selector, without those being deleted. */
  async pods(selector: string): Promise<PodJson[]> {
    const list = await this.kube.getJson<{ items: PodJson[] }>([
      'pods',
      '--namespace',
      this.name,
      '-l',
      selector,
    ]);
    return list.items.filter((p) => !p.metadata.deletionTimestamp);
  }

  async readyPods(selector: string): Promise<string[]> {
    return (await this.pods(selector))
      .filter((p) => p.status.conditions?.some((c) => c.type === 'Ready' && c.status === 'True'))
      .map((p) => p.metadata.name);
  }

  logs(pod: string, container?: string): Promise<string> {
    return this.kubectl(['logs', pod, ...(container ? ['-c', container] : [])]);
  }

  /**
   * Runs a pod to completion (restartPolicy Never) and returns its phase and logs. The pod is
   * deleted afterwards.
   */
  async runPod(
    name: string,
    spec: { image: string; command: string[]; env?: Record<string, string>; labels?: Record<string, string> },
    timeoutMs = 90_000,
  ): Promise<{ phase: string; logs: string }> {
    await this.apply({
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name, labels: spec.labels ?? {} },
      spec: {
        restartPolicy: 'Never',
        securityContext: { runAsNonRoot: true, runAsUser: 1000 },
        containers: [
          {
            name: 'main',
            image: spec.image,
            imagePullPolicy: 'IfNotPresent',
            command: spec.command,
            env: Object.entries(spec.env ?? {}).map(([k, v]) => ({ name: k, value: v })),
          },
        ],
      },
    });
    try {
      const deadline = Date.now() + timeoutMs;
      let phase = 'Pending';
      while (phase !== 'Succeeded' && phase !== 'Failed' && Date.now() < deadline) {
        await new Promise((r) => setTimeout(r, 1000));
        phase = (await this.kube.getJson<PodJson>(['pod', name, '--namespace', this.name])).status.phase;
      }
      return { phase, logs: await this.logs(name).catch((e: Error) => e.message) };
    } finally {
      await this.kubectl(['delete', 'pod', name, '--wait=false']).catch(() => {});
    }
  }

  /** Deletes the namespace and everything in it, and waits until it is gone. */
  async delete(timeoutMs = 120_000): Promise<void> {
    await this.kube.kubectl(
      ['delete', 'namespace', this.name, '--wait=true', `--timeout=${timeoutMs / 1000}s`],
      {
        timeoutMs: timeoutMs + 10_000,
      },
    );
  }
}
