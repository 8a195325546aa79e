/**
 * The loop the leader runs: the Pipeline cache (list + watch) feeds one work queue of keys; one
 * worker reconciles a key at a time (Kafka admin calls are few and ordered this way, as in
 * Strimzi's topic operator); every resync period every Pipeline is queued again, so drift made
 * directly in Kafka is corrected without any watch event.
 */
import type { Logger } from '@event-observatory/service-kit/logger';
import type { Backoff } from '@event-observatory/service-kit/resilience';
import type { PipelineApi } from './kube/api.js';
import { PipelineInformer } from './kube/informer.js';
import type { ControllerMetrics } from './metrics.js';
import { sharingPipelines } from './model/ownership.js';
import { keyOf, type Pipeline } from './pipeline/types.js';
import { WorkQueue } from './queue.js';
import type { Reconciler } from './reconciler.js';

export interface ControllerOptions {
  api: PipelineApi;
  reconciler: Reconciler;
  metrics: ControllerMetrics;
  /** Empty: every namespace. */
  namespace: string;
  defaultServers: string[];
  resyncMs: number;
  watchTimeoutMs: number;
  stallMs: number;
  /** Per-key retry backoff; also the informer's between failed lists. */
  backoff: Backoff;
  log: Logger;
}

/** Whether a change is one the controller acts on: not its own status writes. */
function specOrMetaChanged(now: Pipeline, old: Pipeline | undefined): boolean {
  if (!old) return true;
  const watched = (p: Pipeline) =>
    JSON.stringify([
      p.metadata.generation,
      p.metadata.annotations ?? {},
      p.metadata.deletionTimestamp ?? '',
      p.metadata.finalizers ?? [],
    ]);
  return watched(now) !== watched(old);
}

export class Controller {
  constructor(private readonly opts: ControllerOptions) {}

  /** Runs until `signal` aborts (leadership lost or shutdown). */
  async run(signal: AbortSignal): Promise<void> {
    const { metrics, log } = this.opts;
    const queue = new WorkQueue({ backoff: this.opts.backoff, onDepth: metrics.queueDepth });
    const informer = new PipelineInformer({
      api: this.opts.api,
      namespace: this.opts.namespace,
      watchTimeoutMs: this.opts.watchTimeoutMs,
      stallMs: this.opts.stallMs,
      backoff: this.opts.backoff,
      log,
      onRestart: metrics.watchRestart,
      handlers: {
        upsert: (pipeline, old) => {
          if (!specOrMetaChanged(pipeline, old)) return;
          queue.add(keyOf(pipeline.metadata));
          this.requeueSharing(queue, informer.cache, pipeline, old);
        },
        deleted: (pipeline) => {
          metrics.topicsManaged(keyOf(pipeline.metadata), 0);
          this.requeueSharing(queue, informer.cache, pipeline, undefined);
        },
      },
    });
    const resync = setInterval(() => {
      for (const key of informer.cache.keys()) queue.add(key);
    }, this.opts.resyncMs);
    const worker = this.work(queue, informer.cache);
    log.info(
      { namespace: this.opts.namespace || '(all)', resyncMs: this.opts.resyncMs },
      'controller started',
    );
    try {
      await informer.run(signal);
    } finally {
      clearInterval(resync);
      queue.shutDown();
      await worker;
      log.info({}, 'controller stopped');
    }
  }

  /** A topic changing hands: the other claimants of the Pipeline's topics must look again. */
  private requeueSharing(
    queue: WorkQueue,
    cache: Map<string, Pipeline>,
    now: Pipeline,
    old: Pipeline | undefined,
  ) {
    const all = [...cache.values()];
    for (const p of [now, old]) {
      if (!p) continue;
      for (const key of sharingPipelines(p, all, this.opts.defaultServers)) queue.add(key);
    }
  }

  private async work(queue: WorkQueue, cache: Map<string, Pipeline>): Promise<void> {
    for (let key = await queue.get(); key !== undefined; key = await queue.get()) {
      const pipeline = cache.get(key);
      const stop = this.opts.metrics.startReconcile();
      try {
        if (!pipeline) {
          stop('skipped');
          queue.forget(key);
          continue;
        }
        const result = await this.opts.reconciler.reconcile(pipeline, [...cache.values()]);
        stop(result.outcome);
        this.opts.metrics.topicsManaged(key, result.managed);
        queue.forget(key);
      } catch (error) {
        stop('failure');
        const delayMs = queue.addRateLimited(key);
        this.opts.log.warn(
          { pipeline: key, err: (error as Error).message, retryInMs: delayMs },
          'reconcile failed',
        );
      } finally {
        queue.done(key);
      }
    }
  }
}
