import { configDefaults, defineConfig, mergeConfig } from 'vitest/config';
import { sharedConfig } from '../vitest.shared.js';

/**
 * Cluster suites too long for `make test`: `make test-keda` runs them (vitest.cluster-soak.config.ts),
 * from `make soak`. keda.test.ts needs KEDA, whose cold build takes about half an hour on 2 cores.
 */
export const SOAK_SUITES = ['cluster/keda.test.ts'];

/** What both cluster configurations share: the global setup and the timeouts. */
export const clusterTest = {
  globalSetup: ['./cluster/global-setup.ts'],
  maxWorkers: 3,
  testTimeout: 240_000,
  hookTimeout: 300_000,
};

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
      exclude: [...configDefaults.exclude, ...SOAK_SUITES],
      ...clusterTest,
    },
  }),
);
