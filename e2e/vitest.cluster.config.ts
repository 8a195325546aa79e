import { configDefaults, defineConfig, mergeConfig } from 'vitest/config';
import { BaseSequencer, type TestSpecification } from 'vitest/node';
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
 * The files that take longest (about 2 to 4 minutes each in `make test`: Prometheus scraping, the
 * HPA acting, probes waiting for the policy enforcer, installs and uninstalls) start first, about
 * longest first: on a fresh clone vitest has no durations cached and would start the largest
 * files, leaving a long one to run alone at the end. The shorter files follow, in vitest's order,
 * and fill the gaps. The autoscaling suite stays second: it starts before the node is at its
 * busiest, where its load has always moved the HPA within the suite's bounds.
 */
const LONGEST = [
  'cluster/monitoring.test.ts',
  'cluster/autoscaling.test.ts',
  'cluster/network-policies.test.ts',
  'cluster/tenants.test.ts',
  'cluster/chart.test.ts',
  'cluster/controller.test.ts',
  'cluster/evaluation.test.ts',
  'cluster/consumer-scaling.test.ts',
  'cluster/production-install.test.ts',
];

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
      exclude: [...configDefaults.exclude, ...SOAK_SUITES],
      sequence: { sequencer: LongestFirst },
      ...clusterTest,
    },
  }),
);
