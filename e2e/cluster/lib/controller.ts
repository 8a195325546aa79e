/**
 * What the controller's cluster suites share: the cluster, the devstack's Kafka and PostgreSQL
 * (`inject`), a kubectl and a run id; the Pipeline CRD applied from crds/ (cluster-wide, left
 * installed) and a Kafka admin, in one `controllerSuite()` for beforeAll; a controller service run
 * in the test process on a given kubeconfig and environment; reading a Pipeline and its
 * conditions and Events; the cleanup of a namespace whose Pipelines may still hold a finalizer.
 */
import { randomUUID } from 'node:crypto';
import { resolve } from 'node:path';
import { createControllerService, type Pipeline, readControllerConfig } from '@event-observatory/controller';
import { kafkaClient } from '@event-observatory/devstack';
import { createLogger, createMetrics } from '@event-observatory/service-kit';
import { KubeConfig } from '@kubernetes/client-node';
import { inject, vi } from 'vitest';
import { REPO_ROOT } from './cluster.js';
import { Kube, type TestNamespace } from './kube.js';

/** The suite's handles: call at module level; `start()` in beforeAll, `stop()` in afterAll. */
export function controllerSuite(clientId: string) {
  const cluster = inject('cluster');
  const podStack = inject('podStack');
  const kube = new Kube(cluster.kubeconfig);
  const kafka = kafkaClient(podStack.bootstrapServers, { clientId });
  const admin = kafka.admin();
  return {
    cluster,
    podStack,
    kube,
    kafka,
    admin,
    /** Lowercase and short: goes into topic, group and namespace names. */
    run: randomUUID().slice(0, 6),
    /** The cluster's kubeconfig, loaded (a suite may point it at a proxy). */
    kubeConfig(): KubeConfig {
      const config = new KubeConfig();
      config.loadFromFile(cluster.kubeconfig);
      return config;
    },
    async start(): Promise<void> {
      await applyPipelineCrd(kube);
      await admin.connect();
    },
    async stop(): Promise<void> {
      await admin.disconnect();
    },
  };
}

export async function applyPipelineCrd(kube: Kube): Promise<void> {
  await kube.kubectl([
    'apply',
    '--server-side',
    '--force-conflicts',
    '-f',
    resolve(REPO_ROOT, 'crds/pipeline.yaml'),
  ]);
  // `kubectl wait` fails at once ("accessor error: <nil>") instead of waiting while a CRD just
  // created (here by two suites at once) has no status yet: retried until it has one.
  await vi.waitFor(
    () =>
      kube.kubectl(['wait', '--for=condition=Established', 'crd/pipelines.observatory.dev', '--timeout=60s']),
    { timeout: 70_000, interval: 500 },
  );
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
