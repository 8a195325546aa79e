/**
 * The fixture every cluster suite starts from: what the global setup provides (`cluster`,
 * `podStack`), kubectl and Helm on that cluster, the names of the run (a run id, the topic and
 * consumer group `<name>-e2e…`), and ONE afterAll that undoes what the suite made, last made first.
 *
 * Construct it at module level. In beforeAll, make things through its methods (a namespace, a
 * database and its pool, a Helm release, the Pipeline CRD): each registers its own undoing. The
 * suite adds its own steps with `onCleanup` (a process to stop, a controller to close, an add-on
 * to remove); they run in the same last-first order, so a step registered after the namespace
 * runs before the namespace is deleted. Every step runs even when one fails (each failure is
 * logged); afterAll then fails with the first.
 */
import { randomUUID } from 'node:crypto';
import { resolve } from 'node:path';
import { createDatabase } from '@event-observatory/devstack';
import pg from 'pg';
import { afterAll, inject, vi } from 'vitest';
import { REPO_ROOT } from './cluster.js';
import { Helm } from './helm.js';
import { Kube, type TestNamespace } from './kube.js';

type CleanupStep = () => unknown;

export class ClusterSuite {
  readonly cluster = inject('cluster');
  readonly podStack = inject('podStack');
  readonly kube = new Kube(this.cluster.kubeconfig);
  /** Lowercase, 8 characters: goes into the topic, group, database and pod names of this run. */
  readonly run = randomUUID().slice(0, 8);
  /** A topic of this run, `<name>-e2e.<run>`, and a consumer group, `<name>-e2e-<run>`. */
  readonly topic: string;
  readonly groupId: string;
  private readonly steps: CleanupStep[] = [];
  private readonly deleteNamespace: (ns: TestNamespace) => Promise<void>;
  private helmClient: Helm | undefined;

  /**
   * `name` prefixes the namespaces, topic, group and database, and labels the log lines.
   * `deleteNamespace`: how afterAll deletes the suite's namespaces (default: `TestNamespace.delete`);
   * `cleanupTimeoutMs` bounds afterAll (default: the configuration's hookTimeout).
   */
  constructor(
    readonly name: string,
    opts: { deleteNamespace?: (ns: TestNamespace) => Promise<void>; cleanupTimeoutMs?: number } = {},
  ) {
    this.topic = `${name}-e2e.${this.run}`;
    this.groupId = `${name}-e2e-${this.run}`;
    this.deleteNamespace = opts.deleteNamespace ?? ((ns) => ns.delete());
    afterAll(() => this.cleanup(), opts.cleanupTimeoutMs);
  }

  /** Helm on the suite's cluster; made on first use (it installs Helm when missing). */
  get helm(): Helm {
    this.helmClient ??= new Helm(this.cluster.kubeconfig);
    return this.helmClient;
  }

  log(line: string): void {
    process.stderr.write(`[${this.name}] ${line}\n`);
  }

  /** Runs `step` in afterAll, before every step registered earlier. */
  onCleanup(step: CleanupStep): void {
    this.steps.push(step);
  }

  /** A namespace `<prefix>-<random>` (prefix: the suite's name), deleted in afterAll. */
  async namespace(prefix = this.name): Promise<TestNamespace> {
    const [ns] = await this.namespaces(prefix);
    return ns;
  }

  /** One namespace per prefix, made at once and deleted at once in afterAll (one step). */
  async namespaces<const P extends readonly string[]>(
    ...prefixes: P
  ): Promise<{ -readonly [K in keyof P]: TestNamespace }> {
    const made = await Promise.allSettled(prefixes.map((p) => this.kube.createNamespace(p)));
    const namespaces = made.flatMap((r) => (r.status === 'fulfilled' ? [r.value] : []));
    this.onCleanup(() => Promise.all(namespaces.map((ns) => this.deleteNamespace(ns))));
    for (const r of made) if (r.status === 'rejected') throw r.reason;
    return namespaces as { -readonly [K in keyof P]: TestNamespace };
  }

  /** A database of the devstack PostgreSQL for this run, `<name>_<run><suffix>`: its URL. */
  database(suffix = ''): Promise<string> {
    return createDatabase(this.podStack.databaseUrl, `${this.name.replace(/-/g, '_')}_${this.run}${suffix}`);
  }

  /** A pool on `url` of `max` connections (few: the suites only read and seed), ended in afterAll. */
  pool(url: string, max = 2): pg.Pool {
    const pool = new pg.Pool({ connectionString: url, max });
    this.onCleanup(() => pool.end());
    return pool;
  }

  /**
   * `helm install --wait` of the chart (Helm.install) as `release` in `ns`; once installed,
   * `helm uninstall --wait` in afterAll, before the namespace goes. Returns stdout (the NOTES).
   * On failure, logs the release's pods and their last log lines first (afterAll deletes them).
   */
  async helmInstall(release: string, ns: TestNamespace, args: string[]): Promise<string> {
    const notes = await this.helm.install(release, ns.name, args).catch(async (error: Error) => {
      await this.logRelease(release, ns);
      throw error;
    });
    this.onCleanup(() =>
      this.helm.run(['uninstall', release, '--namespace', ns.name, '--wait']).catch(() => {}),
    );
    return notes;
  }

  /** Logs the namespace's pods and the last lines of each pod of `release` (a failed install's). */
  async logRelease(release: string, ns: TestNamespace): Promise<void> {
    this.log(await ns.kubectl(['get', 'pods', '-o', 'wide']).catch((e: Error) => e.message));
    const pods = await ns.pods(`app.kubernetes.io/instance=${release}`).catch(() => []);
    for (const { metadata } of pods)
      this.log(
        `${metadata.name}: ${(await ns.logs(metadata.name).catch((e: Error) => e.message)).slice(-1500)}`,
      );
  }

  /** The Pipeline CRD from crds/ (cluster-wide, shared by the suites and left installed), Established. */
  async pipelineCrd(): Promise<void> {
    await this.kube.kubectl([
      'apply',
      '--server-side',
      '--force-conflicts',
      '-f',
      resolve(REPO_ROOT, 'crds/pipeline.yaml'),
    ]);
    // `kubectl wait` fails at once ("accessor error: <nil>") instead of waiting while a CRD just
    // created (here by two suites at once) has no status yet: retried until it has one.
    await vi.waitFor(
      () =>
        this.kube.kubectl([
          'wait',
          '--for=condition=Established',
          'crd/pipelines.observatory.dev',
          '--timeout=60s',
        ]),
      { timeout: 70_000, interval: 500 },
    );
  }

  private async cleanup(): Promise<void> {
    if (this.steps.length === 0) return;
    const t0 = Date.now();
    const errors: unknown[] = [];
    for (const step of this.steps.splice(0).reverse()) {
      try {
        await step();
      } catch (error) {
        this.log(`cleanup: ${(error as Error).message}`);
        errors.push(error);
      }
    }
    this.log(`cleaned up in ${Math.round((Date.now() - t0) / 1000)} s`);
    if (errors.length > 0) throw errors[0];
  }
}
