/**
 * What the controller's cluster suites share: their fixture (`controllerSuite()`: a ClusterSuite
 * whose namespaces are released of their Pipelines' finalizers before they go, with a Kafka client
 * and admin, and the Pipeline CRD applied in `start()`); a controller service run in the test
 * process on a given kubeconfig and environment; reading a Pipeline and its conditions and Events.
 */
import { createControllerService, type Pipeline, readControllerConfig } from '@event-observatory/controller';
import { kafkaClient } from '@event-observatory/devstack';
import { createLogger, createMetrics } from '@event-observatory/service-kit';
import { KubeConfig } from '@kubernetes/client-node';
import type { TestNamespace } from './kube.js';
import { ClusterSuite } from './suite.js';

/** The suite's fixture: call at module level; `start()` in beforeAll (its afterAll undoes it). */
export function controllerSuite(clientId: string) {
  const suite = new ClusterSuite(clientId, { deleteNamespace: releaseAndDelete });
  const { cluster, podStack } = suite;
  const kafka = kafkaClient(podStack.bootstrapServers, { clientId });
  const admin = kafka.admin();
  return Object.assign(suite, {
    kafka,
    admin,
    /** The cluster's kubeconfig, loaded (a suite may point it at a proxy). */
    kubeConfig(): KubeConfig {
      const config = new KubeConfig();
      config.loadFromFile(cluster.kubeconfig);
      return config;
    },
    /** The CRD, and the admin connected (disconnected in afterAll, after everything else). */
    async start(): Promise<void> {
      await suite.pipelineCrd();
      await admin.connect();
      suite.onCleanup(() => admin.disconnect());
    },
  });
}

/** A started controller (leader election included) with its metrics registry. */
export function startInProcessController(kubeConfig: KubeConfig, env: Record<string, string | undefined>) {
  const config = readControllerConfig(env);
  const logger = createLogger({
    service: 'controller',
    level: process.env.CONTROLLER_TEST_LOG_LEVEL ?? 'warn',
  });
  const { registry } = createMetrics({ service: 'controller', defaultMetrics: false });
  const service = createControllerService({ config, kubeConfig, registry, logger });
  service.start();
  return { service, registry };
}

/** The Pipeline `name` as the API server has it. */
export async function getPipeline(namespace: TestNamespace, name: string): Promise<Pipeline> {
  return JSON.parse(await namespace.kubectl(['get', 'pipeline', name, '-o', 'json'])) as Pipeline;
}

/** The Pipeline's condition of this type, if it has one. */
export function condition(p: Pipeline, type: string) {
  return p.status?.conditions?.find((c) => c.type === type);
}

/** Pipelines keep a finalizer: once no controller runs, remove it so the namespace can go. */
export async function releaseAndDelete(namespace: TestNamespace): Promise<void> {
  const names = (await namespace.kubectl(['get', 'pipelines', '-o', 'name'])).split('\n').filter(Boolean);
  for (const name of names) {
    await namespace.kubectl(['patch', name, '--type=merge', '-p', '{"metadata":{"finalizers":null}}']);
  }
  await namespace.delete();
}

/** The reasons of the Events about the Pipeline `name`. */
export async function pipelineEventReasons(namespace: TestNamespace, name: string): Promise<string[]> {
  const out = await namespace.kubectl([
    'get',
    'events',
    '--field-selector',
    `involvedObject.name=${name}`,
    '-o',
    'json',
  ]);
  return (JSON.parse(out) as { items: Array<{ reason: string }> }).items.map((e) => e.reason);
}
