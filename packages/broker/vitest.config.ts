import { defineConfig, mergeConfig } from 'vitest/config';
import { sharedConfig } from '../../vitest.shared.js';

// Integration tests run against one real Kafka (and PostgreSQL) started by the devstack for the run.
export default mergeConfig(
  sharedConfig,
  defineConfig({ test: { globalSetup: ['@event-observatory/devstack/vitest-setup'] } }),
);
