import { defineConfig, mergeConfig } from 'vitest/config';
import { sharedConfig, sharedWorkers } from '../../vitest.shared.js';

export default mergeConfig(
  sharedConfig,
  defineConfig({
    test: {
      ...sharedWorkers,
      globalSetup: ['@event-observatory/devstack/vitest-setup'],
      testTimeout: 120_000,
    },
  }),
);
