/**
 * A Vitest global setup for suites that need Kafka and no PostgreSQL: one real broker for the run,
 * in a temporary folder on a free port, so the run does not pay for a database. Tests read
 * `inject('kafka').bootstrapServers`, and `inject('kafka').secured` for the broker's `SASL_SSL` and
 * `SSL` (mutual TLS) listeners (see `kafka-secured.ts`).
 *
 * @example
 * // test/kafka-setup.ts, named in vitest.config.ts `globalSetup`
 * export default kafkaGlobalSetup({ name: 'ingest', settings: { 'message.max.bytes': '2097152' } });
 */
import { rmSync } from 'node:fs';
import type {} from 'vitest';
import type { TestProject } from 'vitest/node';
import { startKafka } from './kafka.js';
import type { SecuredListeners } from './kafka-secured.js';
import { removeAbandonedTempDirs, tempDataDir } from './paths.js';

declare module 'vitest' {
  export interface ProvidedContext {
    kafka: { bootstrapServers: string; secured: SecuredListeners };
  }
}

export interface KafkaGlobalSetupOptions {
  /** Names the temporary folder. */
  name: string;
  /** Broker properties beyond devstack's defaults. */
  settings?: Record<string, string>;
}

/** The global setup function for `options`; the returned teardown stops the broker and removes its folder. */
export function kafkaGlobalSetup(options: KafkaGlobalSetupOptions) {
  return async (project: TestProject): Promise<() => Promise<void>> => {
    removeAbandonedTempDirs();
    const dataDir = tempDataDir(`${options.name}-kafka`);
    const kafka = await startKafka({
      dataDir,
      secured: {},
      ...(options.settings && { settings: options.settings }),
    });
    project.provide('kafka', { bootstrapServers: kafka.bootstrapServers, secured: kafka.secured! });
    return async () => {
      await kafka.stop();
      rmSync(dataDir, { recursive: true, force: true });
    };
  };
}
