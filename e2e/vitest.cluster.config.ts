import { defineConfig, mergeConfig } from 'vitest/config';
import { sharedConfig } from '../vitest.shared.js';

/**
 * The cluster suites (cluster/): a cluster of their own unless KUBECONFIG is set (see
 * cluster/README.md). Three files at a time: the suites mostly wait for the API server, the
 * kubelet and rollouts (each works in a namespace, a database and topics of its own), so running
 * them one after the other left the node idle for most of their time.
 */
export default mergeConfig(
  sharedConfig,
  defineConfig({
    test: {
      include: ['cluster/**/*.test.ts'],
      globalSetup: ['./cluster/global-setup.ts'],
      maxWorkers: 3,
      testTimeout: 240_000,
      hookTimeout: 300_000,
    },
  }),
);
