/**
 * Vitest global setup of the controller's tests: one real Kafka broker (devstack's `startKafka`)
 * for the run, in a temporary folder on a free port. The controller needs no PostgreSQL, so the
 * run does not pay for one. Tests read `inject('kafka').bootstrapServers`.
 */
import { rmSync } from 'node:fs';
import { removeAbandonedTempDirs, startKafka, tempDataDir } from '@event-observatory/devstack';
import type { TestProject } from 'vitest/node';

declare module 'vitest' {
  export interface ProvidedContext {
    kafka: { bootstrapServers: string };
  }
}

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  removeAbandonedTempDirs();
  const dataDir = tempDataDir('controller-kafka');
  const kafka = await startKafka({ dataDir });
  project.provide('kafka', { bootstrapServers: kafka.bootstrapServers });
  return async () => {
    await kafka.stop();
    rmSync(dataDir, { recursive: true, force: true });
  };
}
