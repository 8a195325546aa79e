/** Helm (built by scripts/install/helm.sh, cached) against the suite's cluster. */
import { execFile, execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { randomDevSecret } from '@event-observatory/service-kit';
import { REPO_ROOT } from './cluster.js';
import type { TestNamespace } from './kube.js';

const run = promisify(execFile);

export const CHART = join(REPO_ROOT, 'charts/observatory');

export class Helm {
  readonly bin = execFileSync(join(REPO_ROOT, 'scripts/install/helm.sh'), { encoding: 'utf8' }).trim();

  constructor(readonly kubeconfig: string) {}

  /** Runs helm; resolves with stdout, rejects with its stderr. */
  async run(args: string[], timeoutMs = 600_000): Promise<string> {
    try {
      const { stdout } = await run(this.bin, ['--kubeconfig', this.kubeconfig, ...args], {
        timeout: timeoutMs,
        maxBuffer: 32 * 1024 * 1024,
      });
      return stdout;
    } catch (error) {
      const { stderr, message } = error as { stderr?: string; message: string };
      throw new Error(`helm ${args.slice(0, 3).join(' ')}: ${stderr?.trim() || message}`);
    }
  }

  /**
   * `helm install <release> charts/observatory --wait` in `namespace` with `args`; stdout (NOTES).
   * `--skip-crds`: the Pipeline CRD is cluster-wide and the suites apply it with kubectl (another
   * field manager, which Helm 4's server-side apply of crds/ would conflict with).
   */
  install(release: string, namespace: string, args: string[]): Promise<string> {
    return this.run([
      'install',
      release,
      CHART,
      '--namespace',
      namespace,
      '--skip-crds',
      '--wait',
      '--timeout',
      '6m',
      ...args,
    ]);
  }
}

/** `--set`/`--set-string` arguments: strings stay strings whatever they look like. */
export function setArgs(values: Record<string, string | number | boolean>): string[] {
  return Object.entries(values).flatMap(([k, v]) => [
    typeof v === 'string' ? '--set-string' : '--set',
    `${k}=${v}`,
  ]);
}

export const COMPONENTS = ['ingest', 'consumer', 'search', 'jobs', 'controller'] as const;

/** Small requests for every component: a 2-core node shared with other suites. */
export const SMALL_RESOURCES = { requests: { cpu: '10m', memory: '64Mi' }, limits: { memory: '384Mi' } };

/** The release's Secret as an operator makes it: the store password (from the database URL), `AUTH_SECRET`, random admin and application keys, and `extra` keys. */
export interface ReleaseSecret {
  ns: TestNamespace;
  name: string;
  /** A database of the suite's PostgreSQL; its password goes into the Secret, not the values. */
  databaseUrl: string;
  authSecret: string;
  extra?: Record<string, string>;
}

export interface BaseInstall {
  /** `--set` values (setArgs): the images of `make images`; with a Secret, the database and the Secret's names. */
  values: Record<string, string | number | boolean>;
  /** `--set-json` arguments: SMALL_RESOURCES for every component. */
  resourceArgs: string[];
}

/**
 * What every install of the cluster suites starts from: the images of `make images`
 * (`inject('cluster').images`) and small requests; given `secret`, that Secret applied in its
 * namespace and the values naming it and the database.
 */
export async function baseInstall(images: { ingest: string }, secret?: ReleaseSecret): Promise<BaseInstall> {
  const [prefix, tag] = images.ingest.replace(/\/ingest:/, ' ').split(' ') as [string, string];
  const values: Record<string, string | number | boolean> = {
    'image.registry': prefix.split('/')[0] as string,
    'image.tag': tag,
    // The suites' external Kafka is one broker (the chart's default asks for 3 replicas there).
    'pipeline.replicationFactor': 1,
    ...Object.fromEntries(
      COMPONENTS.map((c) => [`${c}.image.repository`, `${prefix.split('/').slice(1).join('/')}/${c}`]),
    ),
  };
  if (secret) {
    const url = new URL(secret.databaseUrl);
    const password = decodeURIComponent(url.password);
    url.password = '';
    await secret.ns.apply({
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: secret.name },
      stringData: {
        STORE_PASSWORD: password,
        AUTH_SECRET: secret.authSecret,
        ADMIN_AUTH_SECRET: randomDevSecret(),
        APPLICATION_SECRET: randomDevSecret(),
        ...secret.extra,
      },
    });
    values['database.url'] = url.toString();
    values['database.user'] = decodeURIComponent(url.username);
    for (const s of ['store', 'auth', 'admin', 'application']) values[`secrets.${s}.name`] = secret.name;
  }
  const resourceArgs = COMPONENTS.flatMap((c) => [
    '--set-json',
    `${c}.resources=${JSON.stringify(SMALL_RESOURCES)}`,
  ]);
  return { values, resourceArgs };
}
