import { defineConfig, mergeConfig } from 'vitest/config';
import { sharedConfig } from '../vitest.shared.js';

/**
 * The cluster suites (cluster/): a cluster of their own unless KUBECONFIG is set (see
 * cluster/README.md). One file at a time: they share one node of a 2-core machine.
 */
export default mergeConfig(
  sharedConfig,
  defineConfig({
    test: {
      include: ['cluster/**/*.test.ts'],
      globalSetup: ['./cluster/global-setup.ts'],
      fileParallelism: false,
      testTimeout: 240_000,
      hookTimeout: 300_000,
    },
  }),
);
