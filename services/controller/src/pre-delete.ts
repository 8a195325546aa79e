/**
 * The chart's pre-delete hook: `helm uninstall` runs this before it removes the controller, so the
 * Pipelines whose `deletionPolicy` is `Delete` are deleted while a controller still runs to
 * finalize them (their topics deleted, or given up after `CONTROLLER_DELETION_TIMEOUT` with an
 * Event). It waits until they are gone, at most `CONTROLLER_PRE_DELETE_WAIT`, then exits 0 either
 * way: an uninstall is never blocked by it. Retain Pipelines are left to the chart's own removal.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { createLogger, runMain } from '@event-observatory/service-kit';
import { duration, list, readConfig } from '@event-observatory/service-kit/config';
import { KubeApi } from './kube/api.js';
import { loadKubeConfig } from './kube/install.js';
import { keyOf } from './pipeline/types.js';

await runMain(async () => {
  const config = readConfig(process.env, {
    namespaces: list('CONTROLLER_WATCH_NAMESPACE').default([]),
    waitMs: duration('CONTROLLER_PRE_DELETE_WAIT', { min: 0 }).default('4m'),
    apiTimeoutMs: duration('CONTROLLER_API_TIMEOUT', { min: 100 }).default('30s'),
  });
  const logger = createLogger({ service: 'controller-pre-delete', level: 'info' });
  const api = new KubeApi(loadKubeConfig(), 'pre-delete', config.apiTimeoutMs);
  const scopes = config.namespaces.length > 0 ? config.namespaces : [''];
  const deletable = async () =>
    (await Promise.all(scopes.map((ns) => api.listPipelines(ns)))).flatMap((l) =>
      l.items.filter((p) => p.spec.deletionPolicy === 'Delete'),
    );
  const first = await deletable();
  for (const p of first) await api.deletePipeline(p.metadata.namespace, p.metadata.name);
  logger.info(
    { pipelines: first.map((p) => keyOf(p.metadata)) },
    'deleting the Pipelines of deletionPolicy Delete',
  );
  const deadline = Date.now() + config.waitMs;
  for (let left = first; left.length > 0; left = await deletable()) {
    if (Date.now() >= deadline) {
      logger.warn({ pipelines: left.map((p) => keyOf(p.metadata)) }, 'still finalizing; uninstall goes on');
      return;
    }
    await sleep(2_000);
  }
  logger.info({}, 'every Pipeline of deletionPolicy Delete is gone');
});
