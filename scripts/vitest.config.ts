import { defineConfig, mergeConfig } from 'vitest/config';
import { sharedConfig } from '../vitest.shared.js';

/** The tests of the repository's own tools (`make test` runs them after the workspaces' suites). */
export default mergeConfig(
  sharedConfig,
  defineConfig({ root: import.meta.dirname, test: { include: ['**/*.test.ts'] } }),
);
