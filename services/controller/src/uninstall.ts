/**
 * What the chart's pre-delete hook does (pre-delete.ts wires it): deletes this controller's
 * Pipelines of deletionPolicy `Delete` (stamped with its `CONTROLLER_NAME`; another release's are
 * never touched) while the controller still runs to finalize them, and waits until they are gone.
 * Their topics are deleted only when `deleteTopics` says so; otherwise each is first annotated
 * `force-delete`, so the controller lets it go and keeps its topics, as `Retain` would.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type { Logger } from '@event-observatory/service-kit/logger';
import type { PipelineApi } from './kube/api.js';
import { controlOf } from './model/ownership.js';
import { FORCE_DELETE_ANNOTATION, keyOf, type Pipeline } from './pipeline/types.js';

export interface UninstallOptions {
  api: Pick<PipelineApi, 'listPipelines' | 'setAnnotations'> & {
    deletePipeline(namespace: string, name: string): Promise<void>;
  };
  /** `CONTROLLER_NAME` of the release being uninstalled. */
  controllerName: string;
  /** The namespaces it watches; empty: every namespace. */
  namespaces: string[];
  /** `CONTROLLER_PRE_DELETE_TOPICS`: delete the topics too (the chart's controller.deleteTopicsOnUninstall). */
  deleteTopics: boolean;
  /** How long to wait for the Pipelines to go; then the uninstall goes on. */
  waitMs: number;
  pollMs?: number;
  log: Logger;
}

/** Deletes the release's `Delete` Pipelines and waits for them; true when all are gone in time. */
export async function deleteOwnPipelines(opts: UninstallOptions): Promise<boolean> {
  const { api, log } = opts;
  const scopes = opts.namespaces.length > 0 ? opts.namespaces : [''];
  const deletable = async (): Promise<Pipeline[]> =>
    (await Promise.all(scopes.map((ns) => api.listPipelines(ns)))).flatMap((l) =>
      l.items.filter(
        (p) => p.spec.deletionPolicy === 'Delete' && controlOf(p, opts.controllerName) === 'own',
      ),
    );
  const first = await deletable();
  for (const p of first) {
    // Whatever changed since the list (status writes do): the annotation must land before the delete.
    if (!opts.deleteTopics)
      await api.setAnnotations(p, { [FORCE_DELETE_ANNOTATION]: 'true' }, { ifUnchanged: false });
    await api.deletePipeline(p.metadata.namespace, p.metadata.name);
  }
  log.info(
    { pipelines: first.map((p) => keyOf(p.metadata)), deleteTopics: opts.deleteTopics },
    'deleting the Pipelines of deletionPolicy Delete',
  );
  const deadline = Date.now() + opts.waitMs;
  for (let left = first; left.length > 0; left = await deletable()) {
    if (Date.now() >= deadline) {
      log.warn({ pipelines: left.map((p) => keyOf(p.metadata)) }, 'still finalizing; uninstall goes on');
      return false;
    }
    await sleep(opts.pollMs ?? 2_000);
  }
  log.info({}, 'every Pipeline of deletionPolicy Delete is gone');
  return true;
}
