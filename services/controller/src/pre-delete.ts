/**
 * The chart's pre-delete hook: `helm uninstall` runs this before it removes the controller, so the
 * release's Pipelines whose `deletionPolicy` is `Delete` are deleted while a controller still runs
 * to finalize them (uninstall.ts). It waits until they are gone, at most
 * `CONTROLLER_PRE_DELETE_WAIT` and a minute, then exits 0 either way: an uninstall is never blocked by it.
 * Retain Pipelines are left to the chart's own removal.
 */
import { createLogger, runMain } from '@event-observatory/service-kit';
import { bool, duration, list, readConfig, str } from '@event-observatory/service-kit/config';
import { KubeApi } from './kube/api.js';
import { loadKubeConfig } from './kube/install.js';
import { deleteOwnPipelines } from './uninstall.js';

/**
 * Waited past CONTROLLER_PRE_DELETE_WAIT: a reconcile of another Pipeline still running on the
 * single worker at the deadline, the Event and the finalizer patch, the hook's 2 s poll, clock skew.
 */
const PRE_DELETE_MARGIN_MS = 60_000;

await runMain(async () => {
  const config = readConfig(process.env, {
    controllerName: str('CONTROLLER_NAME'),
    namespaces: list('CONTROLLER_WATCH_NAMESPACE').default([]),
    deleteTopics: bool('CONTROLLER_PRE_DELETE_TOPICS').default(false),
    // The controller's CONTROLLER_DELETION_TIMEOUT (the chart passes its deletionTimeout): it lets a
    // Pipeline go at that deadline, then patches its finalizer, which the margin below waits for.
    waitMs: duration('CONTROLLER_PRE_DELETE_WAIT', { min: 0 }).default('5m'),
    apiTimeoutMs: duration('CONTROLLER_API_TIMEOUT', { min: 100 }).default('30s'),
  });
  const log = createLogger({ service: 'controller-pre-delete', level: 'info' });
  const api = new KubeApi(loadKubeConfig(), 'pre-delete', config.apiTimeoutMs);
  await deleteOwnPipelines({ api, log, ...config, waitMs: config.waitMs + PRE_DELETE_MARGIN_MS });
});
