import { availableParallelism } from 'node:os';
import { defineConfig } from 'vitest/config';

// The brokers the tests start (devstack's startKafka, in global setups and in tests) use only the
// quick JIT: a start takes about half the CPU, an idle broker about a third less, and no test needs
// C2's peak throughput (the benchmarks, which do, run outside vitest). Set before the global setups
// run, in the main process whose environment the workers inherit.
process.env.OBSERVATORY_KAFKA_JVM_OPTS ??= '-XX:TieredStopAtLevel=1';

/**
 * For a workspace whose test files leave no process-wide state behind (environment variables,
 * global providers, fake timers, open servers): its files share their worker process, and so the
 * modules it has already loaded, where vitest's default gives each file a fresh one that loads
 * them all again. Used where that pays: the workspaces whose many files import a service with its
 * store and Kafka client (search, consumer, store, ingest) spend a fifth to two fifths less CPU.
 * Elsewhere the default stays: service-kit's tracing tests and the controller's suites change such
 * state, and in the other workspaces the loading costs little beside what their files run.
 */
export const sharedWorkers = { isolate: false } as const;

/**
 * Shared vitest settings for every workspace of the tree. The `source` export condition makes
 * workspace packages resolve to their TypeScript sources, so tests never need a prior build.
 */
export const sharedConfig = defineConfig({
  resolve: { conditions: ['source', 'module', 'node', 'default'] },
  ssr: { resolve: { conditions: ['source', 'node', 'default'], externalConditions: ['source'] } },
  test: {
    include: ['src/**/*.test.ts', 'test/**/*.test.ts'],
    // At least two files at a time, where vitest's default is one less than the cores (one, on 2
    // cores): the suites mostly wait on their Kafka, PostgreSQL, browser and child processes, about
    // half a core each. A workspace whose files must not overlap says `fileParallelism: false`.
    maxWorkers: Math.max(2, availableParallelism() - 1),
    testTimeout: 30_000,
    hookTimeout: 180_000,
    reporters: ['default', new URL('./scripts/test/tally-reporter.ts', import.meta.url).pathname],
  },
});
