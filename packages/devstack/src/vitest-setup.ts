/**
 * Vitest global setup: one Kafka and one PostgreSQL for the whole test run, in a temporary folder on
 * free ports, with the spec's topics. Tests read the connection settings with `inject('stack')`;
 * the broker also has the secured listeners (`stack.secured`, see `kafka-secured.ts`).
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
import { rmSync } from 'node:fs';
import type {} from 'vitest';
import type { TestProject } from 'vitest/node';
import type { SecuredListeners } from './kafka-secured.js';
import { removeAbandonedTempDirs, tempDataDir } from './paths.js';
import { type Stack, startStack } from './stack.js';

export interface ProvidedStack {
  /** `127.0.0.1:<port>` of the run's Kafka broker. */
  bootstrapServers: string;
  /** Superuser URL of the run's PostgreSQL (`postgres` database). Use createDatabase for your own. */
  databaseUrl: string;
  /** That PostgreSQL's folder (`startReplica` copies it). */
  postgresDataDir: string;
  /** The broker's `SASL_SSL` and `SSL` (mutual TLS) listeners, their CA, client certificate and users. */
  secured: SecuredListeners;
}

declare module 'vitest' {
  export interface ProvidedContext {
    stack: ProvidedStack;
  }
}

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  removeAbandonedTempDirs();
  const dir = tempDataDir('stack');
  let stack: Stack | undefined;
  try {
    stack = await startStack({ dataDir: dir, kafka: { secured: {} }, log: (line) => console.log(line) });
  } catch (error) {
    rmSync(dir, { recursive: true, force: true });
    throw error;
  }
  project.provide('stack', {
    bootstrapServers: stack.bootstrapServers,
    databaseUrl: stack.databaseUrl,
    postgresDataDir: stack.postgres.dataDir,
    secured: stack.kafka.secured!,
  });
  let tornDown = false;
  return async () => {
    if (tornDown) return;
    tornDown = true;
    await stack?.stop();
    if (!process.env.OBSERVATORY_KEEP_STACK) rmSync(dir, { recursive: true, force: true });
  };
}
