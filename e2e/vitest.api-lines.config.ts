import { defineConfig, mergeConfig } from 'vitest/config';
import { sharedConfig } from '../vitest.shared.js';

/**
 * The chart against the API server of each older supported Kubernetes line (api-lines/; `make
 * test-api-lines`, part of `make soak`): each line's API server is built from source, minutes apiece
 * on a cold machine. One line at a time (its build and its server use both cores).
 */
export default mergeConfig(
  sharedConfig,
  defineConfig({
    test: {
      include: ['api-lines/**/*.test.ts'],
      fileParallelism: false,
      testTimeout: 60_000,
      // A cold build of a line's API server, in its beforeAll.
      hookTimeout: 40 * 60_000,
    },
  }),
);
