/**
 * The chart's pre-delete hook: `helm uninstall` runs this before it removes the controller, so the
 * release's Pipelines whose `deletionPolicy` is `Delete` are deleted while a controller still runs
 * to finalize them (uninstall.ts). It waits until they are gone, at most
 * `CONTROLLER_PRE_DELETE_WAIT`, then exits 0 either way: an uninstall is never blocked by it.
 * Retain Pipelines are left to the chart's own removal.
 */
import { createLogger, runMain } from '@event-observatory/service-kit';
import { bool, duration, list, readConfig, str } from '@event-observatory/service-kit/config';
import { KubeApi } from './kube/api.js';
import { loadKubeConfig } from './kube/install.js';
import { deleteOwnPipelines } from './uninstall.js';

await runMain(async () => {
  const config = readConfig(process.env, {
    controllerName: str('CONTROLLER_NAME'),
    namespaces: list('CONTROLLER_WATCH_NAMESPACE').default([]),
    deleteTopics: bool('CONTROLLER_PRE_DELETE_TOPICS').default(false),
    waitMs: duration('CONTROLLER_PRE_DELETE_WAIT', { min: 0 }).default('4m'),
    apiTimeoutMs: duration('CONTROLLER_API_TIMEOUT', { min: 100 }).default('30s'),
  });
  const log = createLogger({ service: 'controller-pre-delete', level: 'info' });
  const api = new KubeApi(loadKubeConfig(), 'pre-delete', config.apiTimeoutMs);
  await deleteOwnPipelines({ api, log, ...config });
});
