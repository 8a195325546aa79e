/**
 * Vitest global setup of the ingest suite: one real Kafka broker (devstack's `startKafka`) in a
 * temporary folder on a free port. The suite needs no PostgreSQL, so it does not pay for one.
 * Tests read `inject('kafka').bootstrapServers`.
 */
import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startKafka } from '@event-observatory/devstack';
import type { TestProject } from 'vitest/node';

declare module 'vitest' {
  export interface ProvidedContext {
    kafka: { bootstrapServers: string };
  }
}

/** Broker settings the ingest tests need: a 1 MiB event plus headers must fit in one record. */
export const INGEST_BROKER_SETTINGS = { 'message.max.bytes': '2097152' };

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const dir = mkdtempSync(join(tmpdir(), 'ingest-kafka-'));
  chmodSync(dir, 0o755);
  const kafka = await startKafka({ dataDir: dir, settings: INGEST_BROKER_SETTINGS });
  project.provide('kafka', { bootstrapServers: kafka.bootstrapServers });
  return async () => {
    await kafka.stop();
    rmSync(dir, { recursive: true, force: true });
  };
}
