/**
 * The loop the leader runs: the Pipeline caches (list + watch, one per watched namespace, or one
 * for all) feed one work queue of keys; one worker reconciles a key at a time (Kafka admin calls
 * are few and ordered this way, as in Strimzi's topic operator); every resync period every
 * Pipeline is queued again, so drift made directly in Kafka is corrected without any watch event.
 * Every flow period the flow observer reads the flow of all Pipelines at once and queues a
 * `flow:` key for each whose status is worth a write, so the same worker writes it.
 */
import type { Logger } from '@event-observatory/service-kit/logger';
import type { Backoff } from '@event-observatory/service-kit/resilience';
import type { FlowObserver } from './flow-observer.js';
import type { PipelineApi } from './kube/api.js';
import { PipelineInformer } from './kube/informer.js';
import type { ControllerMetrics } from './metrics.js';
import { sharingPipelines } from './model/ownership.js';
import { CONTROLLER_ANNOTATION, keyOf, type Pipeline } from './pipeline/types.js';
import { WorkQueue } from './queue.js';
import { DeletionRetry, type Reconciler } from './reconciler.js';

export interface ControllerOptions {
  api: PipelineApi;
  reconciler: Reconciler;
  metrics: ControllerMetrics;
  /** Empty: every namespace. */
  namespaces: string[];
  flow?: { observer: FlowObserver; periodMs: number };
  /** Not read: the reconciler's `clusters` tell which Pipelines share a cluster. */
  defaultServers?: string[];
  resyncMs: number;
  watchTimeoutMs: number;
  stallMs: number;
  /** Per-key retry backoff; also the informer's between failed lists. */
  backoff: Backoff;
  log: Logger;
}

/**
 * Whether a change is one the controller acts on: not its own status writes, nor a first stamp (the
 * controller that stamped is reconciling it already; any other leaves it alone).
 */
function specOrMetaChanged(now: Pipeline, old: Pipeline | undefined): boolean {
  if (!old) return true;
  const firstStamp = !old.metadata.annotations?.[CONTROLLER_ANNOTATION];
  const watched = (p: Pipeline) => {
    const { [CONTROLLER_ANNOTATION]: stamp, ...annotations } = p.metadata.annotations ?? {};
    return JSON.stringify([
      p.metadata.generation,
      annotations,
      firstStamp ? '' : stamp,
      p.metadata.deletionTimestamp ?? '',
      p.metadata.finalizers ?? [],
    ]);
  };
  return watched(now) !== watched(old);
}

/** Queue keys of flow writes: `flow:namespace/name`. */
const FLOW = 'flow:';

export class Controller {
  constructor(private readonly opts: ControllerOptions) {}

  /** Runs until `signal` aborts (leadership lost or shutdown). */
  async run(signal: AbortSignal): Promise<void> {
    const { metrics, log } = this.opts;
    const queue = new WorkQueue({ backoff: this.opts.backoff, onDepth: metrics.queueDepth });
    const namespaces = this.opts.namespaces.length > 0 ? this.opts.namespaces : [''];
    // Only the Pipelines this controller reconciles (its stamp, or none yet): another release's are
    // neither reconciled nor counted in ownership and flow.
    const cache = new MergedCache((p) => this.opts.reconciler.reconciles(p));
    const informers = namespaces.map((namespace) => {
      const informer: PipelineInformer = new PipelineInformer({
        api: this.opts.api,
        namespace,
        watchTimeoutMs: this.opts.watchTimeoutMs,
        stallMs: this.opts.stallMs,
        backoff: this.opts.backoff,
        log,
        onRestart: metrics.watchRestart,
        handlers: {
          upsert: (pipeline, old) => {
            if (!specOrMetaChanged(pipeline, old)) return;
            queue.add(keyOf(pipeline.metadata));
            this.requeueSharing(queue, cache, pipeline, old);
          },
          deleted: (pipeline) => {
            metrics.topicsManaged(keyOf(pipeline.metadata), 0);
            this.opts.reconciler.forget(pipeline);
            this.opts.flow?.observer.forget(keyOf(pipeline.metadata));
            this.requeueSharing(queue, cache, pipeline, undefined);
          },
        },
      });
      cache.parts.push(informer.cache);
      return informer;
    });
    const resync = setInterval(() => {
      for (const key of cache.keys()) queue.add(key);
    }, this.opts.resyncMs);
    const flowTimer = this.startFlow(queue, cache, informers);
    const worker = this.work(queue, cache, informers, signal);
    log.info(
      { namespaces: namespaces.map((n) => n || '(all)'), resyncMs: this.opts.resyncMs },
      'controller started',
    );
    try {
      await Promise.all(informers.map((informer) => informer.run(signal)));
    } finally {
      clearInterval(resync);
      if (flowTimer) clearInterval(flowTimer);
      queue.shutDown();
      await worker;
      log.info({}, 'controller stopped');
    }
  }

  /** Reads the flow every period (never two readings at once) once every cache is filled. */
  private startFlow(queue: WorkQueue, cache: MergedCache, informers: PipelineInformer[]) {
    const flow = this.opts.flow;
    if (!flow) return undefined;
    let reading = false;
    return setInterval(() => {
      if (reading || !informers.every((i) => i.synced)) return;
      reading = true;
      const pipelines = cache.values().map((p) => this.opts.reconciler.resolve(p));
      flow.observer
        .observe(pipelines, (key) => queue.add(FLOW + key))
        .catch((error: Error) => this.opts.log.warn({ err: error.message }, 'reading the flow failed'))
        .finally(() => {
          reading = false;
        });
    }, flow.periodMs);
  }

  /** A topic changing hands: the other claimants of the Pipeline's topics must look again. */
  private requeueSharing(queue: WorkQueue, cache: MergedCache, now: Pipeline, old: Pipeline | undefined) {
    const resolve = (p: Pipeline) => this.opts.reconciler.resolve(p);
    const all = cache.values().map(resolve);
    for (const p of [now, old]) {
      if (!p) continue;
      for (const key of sharingPipelines(resolve(p), all, this.opts.reconciler.clusters)) queue.add(key);
    }
  }

  /**
   * Queues `key` again after its backoff, and says why; a deletion is retried no later than its
   * deadline, so it is let go at the deadline, not at the first retry after it.
   */
  private retryLater(queue: WorkQueue, key: string, error: unknown, what: string): void {
    const delayMs = queue.addRateLimited(
      key,
      error instanceof DeletionRetry ? error.retryWithinMs : undefined,
    );
    this.opts.log.warn({ pipeline: key, err: (error as Error).message, retryInMs: delayMs }, what);
  }

  /** The flow status write of `flow:<key>`; a stale cached object (409) is retried with backoff. */
  private async writeFlow(queue: WorkQueue, cache: MergedCache, flowKey: string): Promise<void> {
    const pipeline = cache.get(flowKey.slice(FLOW.length));
    try {
      if (pipeline) await this.opts.reconciler.writeFlow(pipeline);
      queue.forget(flowKey);
    } catch (error) {
      this.retryLater(queue, flowKey, error, 'flow write failed');
    } finally {
      queue.done(flowKey);
    }
  }

  private async work(
    queue: WorkQueue,
    cache: MergedCache,
    informers: PipelineInformer[],
    signal: AbortSignal,
  ): Promise<void> {
    // Ownership, conflicts and the release namespace's topics are read from every watched
    // namespace's cache: nothing is reconciled before all were listed, or the order of the lists
    // would decide who gets a topic (client-go's WaitForCacheSync).
    const stopped = new Promise<void>((resolve) => {
      if (signal.aborted) resolve();
      else signal.addEventListener('abort', () => resolve(), { once: true });
    });
    await Promise.race([Promise.all(informers.map((i) => i.firstSync)), stopped]);
    for (let key = await queue.get(); key !== undefined; key = await queue.get()) {
      if (key.startsWith(FLOW)) {
        await this.writeFlow(queue, cache, key);
        continue;
      }
      const pipeline = cache.get(key);
      const stop = this.opts.metrics.startReconcile();
      try {
        if (!pipeline) {
          stop('skipped');
          this.opts.metrics.topicsManaged(key, 0); // gone, or stamped for another controller
          queue.forget(key);
          continue;
        }
        const result = await this.opts.reconciler.reconcile(pipeline, cache.values());
        stop(result.outcome);
        // A deletion seen while the reconcile ran has cleared the Pipeline's count: it stays cleared.
        const still = cache.get(key)?.metadata.uid === pipeline.metadata.uid;
        this.opts.metrics.topicsManaged(key, still ? result.managed : 0);
        queue.forget(key);
      } catch (error) {
        stop('failure');
        this.retryLater(queue, key, error, 'reconcile failed');
      } finally {
        queue.done(key);
      }
    }
  }
}

/**
 * The caches of all informers as one (a Pipeline is in exactly one: namespaces differ), showing only
 * the Pipelines `shown` lets through.
 */
class MergedCache {
  readonly parts: Array<Map<string, Pipeline>> = [];

  constructor(private readonly shown: (pipeline: Pipeline) => boolean) {}

  get(key: string): Pipeline | undefined {
    for (const part of this.parts) {
      const found = part.get(key);
      if (found) return this.shown(found) ? found : undefined;
    }
    return undefined;
  }

  keys(): string[] {
    return this.values().map((p) => keyOf(p.metadata));
  }

  values(): Pipeline[] {
    return this.parts.flatMap((part) => [...part.values()].filter(this.shown));
  }
}
