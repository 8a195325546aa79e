/**
 * What the controller's cluster suites share: the Pipeline CRD applied from crds/ (cluster-wide,
 * left installed), a controller service run in the test process on a given kubeconfig and
 * environment, and the cleanup of a namespace whose Pipelines may still hold a finalizer.
 */
import { resolve } from 'node:path';
import { createControllerService, readControllerConfig } from '@event-observatory/controller';
import { createLogger, createMetrics } from '@event-observatory/service-kit';
import type { KubeConfig } from '@kubernetes/client-node';
import { REPO_ROOT } from './cluster.js';
import type { Kube, TestNamespace } from './kube.js';

export async function applyPipelineCrd(kube: Kube): Promise<void> {
  await kube.kubectl([
    'apply',
    '--server-side',
    '--force-conflicts',
    '-f',
    resolve(REPO_ROOT, 'crds/pipeline.yaml'),
  ]);
  await kube.kubectl([
    'wait',
    '--for=condition=Established',
    'crd/pipelines.observatory.dev',
    '--timeout=60s',
  ]);
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
