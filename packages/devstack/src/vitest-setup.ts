/**
 * Vitest global setup: one Kafka and one PostgreSQL for the whole test run, in a temporary folder on
 * free ports, with the spec's topics. Tests read the connection settings with `inject('stack')`.
 *
 * @example
 * // vitest.config.ts
 * test: { globalSetup: ['@event-observatory/devstack/vitest-setup'] }
 * // a test
 * import { inject } from 'vitest';
 * const { bootstrapServers, databaseUrl } = inject('stack');
 *
 * Set OBSERVATORY_KEEP_STACK=1 to keep the folder (logs, data) after the run.
 */
import { readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type {} from 'vitest';
import type { TestProject } from 'vitest/node';
import { tempDataDir } from './paths.js';
import { type Stack, startStack } from './stack.js';
import { isAlive } from './supervise.js';

export interface ProvidedStack {
  /** `127.0.0.1:<port>` of the run's Kafka broker. */
  bootstrapServers: string;
  /** Superuser URL of the run's PostgreSQL (`postgres` database). Use createDatabase for your own. */
  databaseUrl: string;
}

declare module 'vitest' {
  export interface ProvidedContext {
    stack: ProvidedStack;
  }
}

const PREFIX = 'event-observatory-stack-';

/** Removes stack folders of earlier runs whose process is gone (a run killed before its teardown). */
function removeAbandonedFolders(): void {
  for (const entry of readdirSync(tmpdir())) {
    if (!entry.startsWith(PREFIX)) continue;
    const dir = join(tmpdir(), entry);
    let owner = Number.NaN;
    try {
      owner = Number.parseInt(readFileSync(join(dir, 'owner.pid'), 'utf8'), 10);
    } catch {
      // no owner file: created by a run that died at once; remove
    }
    if (Number.isInteger(owner) && isAlive(owner)) continue;
    rmSync(dir, { recursive: true, force: true });
  }
}

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  removeAbandonedFolders();
  const dir = tempDataDir(PREFIX);
  writeFileSync(join(dir, 'owner.pid'), `${process.pid}\n`);
  let stack: Stack | undefined;
  try {
    stack = await startStack({ dataDir: dir, log: (line) => console.log(line) });
  } catch (error) {
    rmSync(dir, { recursive: true, force: true });
    throw error;
  }
  project.provide('stack', { bootstrapServers: stack.bootstrapServers, databaseUrl: stack.databaseUrl });
  let tornDown = false;
  return async () => {
    if (tornDown) return;
    tornDown = true;
    await stack?.stop();
    if (!process.env.OBSERVATORY_KEEP_STACK) rmSync(dir, { recursive: true, force: true });
  };
}
