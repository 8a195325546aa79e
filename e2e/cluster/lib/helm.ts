/** Helm (built by scripts/install-helm.sh, cached) against the suite's cluster. */
import { execFile, execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { REPO_ROOT } from './cluster.js';

const run = promisify(execFile);

export const CHART = join(REPO_ROOT, 'charts/observatory');

export class Helm {
  readonly bin = execFileSync(join(REPO_ROOT, 'scripts/install-helm.sh'), { encoding: 'utf8' }).trim();

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
}

/** `--set`/`--set-string` arguments: strings stay strings whatever they look like. */
export function setArgs(values: Record<string, string | number | boolean>): string[] {
  return Object.entries(values).flatMap(([k, v]) => [
    typeof v === 'string' ? '--set-string' : '--set',
    `${k}=${v}`,
  ]);
}
