/** Runs the Helm built by scripts/install/helm.sh against the chart folder. */
import { execFileSync, spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { parseAllDocuments } from 'yaml';
import { CHART_DIR, REPO_ROOT } from '../src/paths.js';

const helmPath = execFileSync(join(REPO_ROOT, 'scripts/install/helm.sh'), { encoding: 'utf8' }).trim();

/** The values every install must give (a Secret name for each secret, Kafka, PostgreSQL). */
export const REQUIRED_VALUES = {
  'kafka.bootstrapServers': 'kafka:9092',
  'database.url': 'postgres://postgres:5432/observatory',
  'secrets.store.name': 'observatory-store',
  'secrets.auth.name': 'observatory-auth',
  'secrets.admin.name': 'observatory-admin',
  'secrets.application.name': 'observatory-search',
};

export function helm(args: string[]): { status: number; stdout: string; stderr: string } {
  const res = spawnSync(helmPath, args, { encoding: 'utf8' });
  return { status: res.status ?? -1, stdout: res.stdout, stderr: res.stderr };
}

const setArgs = (values: Record<string, string | number | boolean>) =>
  Object.entries(values).flatMap(([k, v]) => [typeof v === 'string' ? '--set-string' : '--set', `${k}=${v}`]);

export interface K8sObject {
  apiVersion: string;
  kind: string;
  metadata: {
    name: string;
    namespace?: string;
    labels?: Record<string, string>;
    annotations?: Record<string, string>;
  };
  // biome-ignore lint/suspicious/noExplicitAny: rendered objects of many kinds, read by the assertions
  spec?: any;
  data?: Record<string, string>;
  // biome-ignore lint/suspicious/noExplicitAny: as above
  [key: string]: any;
}

/** `--set-json` of each value (lists, maps). */
export const jsonArgs = (values: Record<string, unknown>) =>
  Object.entries(values).flatMap(([k, v]) => ['--set-json', `${k}=${JSON.stringify(v)}`]);

/**
 * `helm template` of the chart with the required values plus `values` (and `opts.json`, given
 * with --set-json); throws on a failure.
 */
export function render(
  values: Record<string, string | number | boolean> = {},
  opts: { release?: string; namespace?: string; json?: Record<string, unknown> } = {},
): K8sObject[] {
  const res = helm([
    'template',
    opts.release ?? 'obs',
    CHART_DIR,
    '--namespace',
    opts.namespace ?? 'observatory',
    ...setArgs({ ...REQUIRED_VALUES, ...values }),
    ...jsonArgs(opts.json ?? {}),
  ]);
  if (res.status !== 0) throw new Error(`helm template failed: ${res.stderr}`);
  return parseAllDocuments(res.stdout)
    .map((d) => d.toJS() as K8sObject | null)
    .filter((o): o is K8sObject => o !== null);
}

/** `helm template` expected to fail: its error text. */
export function renderError(args: string[]): string {
  const res = helm(['template', 'obs', CHART_DIR, ...args]);
  if (res.status === 0) throw new Error('helm template succeeded, a failure was expected');
  return res.stderr;
}

export { setArgs };
