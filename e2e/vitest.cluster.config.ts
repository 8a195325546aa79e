import { defineConfig, mergeConfig } from 'vitest/config';
import { BaseSequencer, type TestSpecification } from 'vitest/node';
import { sharedConfig } from '../vitest.shared.js';

/**
 * The files that take longest (minutes each, mostly waiting for Prometheus to scrape and for
 * the HPA to act) start first: on a fresh clone vitest has no durations cached and would start
 * the largest files, leaving the longest one to run alone at the end.
 */
const LONGEST = ['cluster/monitoring.test.ts', 'cluster/autoscaling.test.ts'];

class LongestFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const rank = (file: TestSpecification) => {
      const i = LONGEST.findIndex((name) => file.moduleId.endsWith(`/${name}`));
      return i === -1 ? LONGEST.length : i;
    };
    return (await super.sort(files)).sort((a, b) => rank(a) - rank(b));
  }
}

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
      sequence: { sequencer: LongestFirst },
      testTimeout: 240_000,
      hookTimeout: 300_000,
    },
  }),
);
