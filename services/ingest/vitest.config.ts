import { defineConfig, mergeConfig } from 'vitest/config';
import { sharedConfig, sharedWorkers } from '../../vitest.shared.js';

// Integration tests run against a real Kafka broker started once for the run (test/kafka-setup.ts).
export default mergeConfig(
  sharedConfig,
  defineConfig({ test: { ...sharedWorkers, globalSetup: ['./test/kafka-setup.ts'], fileParallelism: true } }),
);
