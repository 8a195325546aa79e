import { defineConfig, mergeConfig } from 'vitest/config';
import { sharedConfig } from '../../vitest.shared.js';

export default mergeConfig(
  sharedConfig,
  defineConfig({
    test: {
      globalSetup: ['./src/vitest-setup.ts'],
      // The files start brokers and databases of their own: run them one after the other (2 cores).
      fileParallelism: false,
    },
  }),
);
