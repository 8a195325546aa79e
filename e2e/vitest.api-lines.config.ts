import { defineConfig, mergeConfig } from 'vitest/config';
import { sharedConfig } from '../vitest.shared.js';

/**
 * The chart against the API server of each older supported Kubernetes line (api-lines/; `make
 * test-api-lines`, part of `make soak`), one line after the other.
 */
export default mergeConfig(
  sharedConfig,
  defineConfig({
    test: {
      include: ['api-lines/**/*.test.ts'],
      testTimeout: 60_000,
      // A line's API server is built from source in its beforeAll: minutes apiece on a cold machine.
      hookTimeout: 40 * 60_000,
    },
  }),
);
