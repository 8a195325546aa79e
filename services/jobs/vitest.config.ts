import { defineConfig, mergeConfig } from 'vitest/config';
import { sharedConfig } from '../../vitest.shared.js';

export default mergeConfig(
  sharedConfig,
  defineConfig({
    test: {
      globalSetup: ['@event-observatory/devstack/vitest-setup'],
      testTimeout: 60_000,
    },
  }),
);
