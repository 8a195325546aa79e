import { defineConfig } from 'vitest/config';

/**
 * Standalone on purpose (this package is published and imports nothing from the monorepo root).
 * Two projects: `unit` (src/, no server) and `integration` (test/, against a real Gitea that the
 * global setup builds from the Go module proxy, caches, starts and stops).
 */
const shared = {
  resolve: { conditions: ['source', 'module', 'node', 'default'] },
  ssr: { resolve: { conditions: ['source', 'node', 'default'], externalConditions: ['source'] } },
};

export default defineConfig({
  ...shared,
  test: {
    reporters: ['default', new URL('./test/tally-reporter.ts', import.meta.url).pathname],
    projects: [
      {
        ...shared,
        test: { name: 'unit', include: ['src/**/*.test.ts'], testTimeout: 20_000 },
      },
      {
        ...shared,
        test: {
          name: 'integration',
          include: ['test/**/*.test.ts'],
          globalSetup: ['./test/global-setup.ts'],
          // A cold Gitea build from the module proxy takes minutes; warm starts take seconds.
          hookTimeout: 40 * 60_000,
          testTimeout: 60_000,
          // The files share one server and one seeded repository per file; run them one by one.
          fileParallelism: false,
        },
      },
    ],
  },
});
