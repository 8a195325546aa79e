import { defineConfig, mergeConfig } from 'vitest/config';
import { sharedConfig } from '../vitest.shared.js';
import { clusterTest, SOAK_SUITES } from './vitest.cluster.config.js';

/** The cluster suites of `make soak` (`make test-keda`): the same setup as vitest.cluster.config.ts. */
export default mergeConfig(
  sharedConfig,
  defineConfig({
    test: { include: SOAK_SUITES, ...clusterTest },
  }),
);
