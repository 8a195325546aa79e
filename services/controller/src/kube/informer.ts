/**
 * A cache of Pipelines kept by list + watch, written here rather than taken from client-node's
 * informer, whose watch can stop without a word (kubernetes-client/javascript#596, #364):
 *
 * - list, then watch from the list's resourceVersion (bookmarks on, server-side timeout);
 * - a watch the server ends normally is resumed from the last resourceVersion seen;
 * - `410 Gone` (that version is compacted away) or an error: list again;
 * - nothing at all (no event, no bookmark, no end) for `stallMs`: the connection is presumed
 *   dead (a half-open TCP connection never ends by itself), aborted, and listed again.
 *
 * Restarts after errors wait a backoff that resets once a watch worked.
 */

import { setTimeout as sleep } from 'node:timers/promises';
import type { Logger } from '@event-observatory/service-kit/logger';
import { type Backoff, backoffDelay } from '@event-observatory/service-kit/resilience';
import { keyOf, type Pipeline } from '../pipeline/types.js';
import type { PipelineApi, PipelineWatchEvent } from './api.js';

export type RestartReason = 'closed' | 'gone' | 'stalled' | 'error';

export interface InformerHandlers {
  /** A Pipeline appeared or changed (`old` absent when new to the cache). */
  upsert(pipeline: Pipeline, old: Pipeline | undefined): void;
  deleted(pipeline: Pipeline): void;
}

export interface InformerOptions {
  api: PipelineApi;
  /** Empty: every namespace. */
  namespace: string;
  /** Server-side timeout of one watch request. */
  watchTimeoutMs: number;
  /** Silence after which a watch is presumed dead. */
  stallMs: number;
  /** Wait before listing again after a failure. */
  backoff: Backoff;
  handlers: InformerHandlers;
  onRestart?: (reason: RestartReason) => void;
  log: Logger;
}

export class PipelineInformer {
  readonly cache = new Map<string, Pipeline>();
  /** True once the first list has filled the cache. */
  synced = false;
  private resourceVersion = '';
  private markSynced: () => void = () => {};
  /** Resolves once the first list has filled the cache (`synced`). */
  readonly firstSync = new Promise<void>((resolve) => {
    this.markSynced = resolve;
  });

  constructor(private readonly opts: InformerOptions) {}

  /** Lists and watches until `signal` aborts. */
  async run(signal: AbortSignal): Promise<void> {
    let failures = 0;
    while (!signal.aborted) {
      let reason: RestartReason;
      try {
        await this.list();
        do {
          reason = await this.watchOnce(signal);
          if (reason === 'closed') failures = 0;
        } while (reason === 'closed' && !signal.aborted);
      } catch (error) {
        this.opts.log.warn({ err: (error as Error).message }, 'listing pipelines failed');
        reason = 'error';
      }
      if (signal.aborted) return;
      this.opts.onRestart?.(reason);
      if (reason === 'gone') continue; // the list is fine, only our version is too old
      const delay = backoffDelay(this.opts.backoff, failures++);
      this.opts.log.warn({ reason, delayMs: delay }, 'pipeline watch ended; listing again');
      await sleep(delay, undefined, { signal }).catch(() => {});
    }
  }

  /** Replaces the cache with a fresh list, telling the handlers what changed. */
  private async list(): Promise<void> {
    const { items, resourceVersion } = await this.opts.api.listPipelines(this.opts.namespace);
    const seen = new Set<string>();
    for (const item of items) {
      const key = keyOf(item.metadata);
      seen.add(key);
      const old = this.cache.get(key);
      this.cache.set(key, item);
      if (old?.metadata.resourceVersion !== item.metadata.resourceVersion)
        this.opts.handlers.upsert(item, old);
    }
    for (const [key, old] of this.cache) {
      if (seen.has(key)) continue;
      this.cache.delete(key);
      this.opts.handlers.deleted(old);
    }
    this.resourceVersion = resourceVersion;
    this.synced = true;
    this.markSynced();
  }

  private apply(event: PipelineWatchEvent): void {
    const pipeline = event.object;
    if (pipeline.metadata?.resourceVersion) this.resourceVersion = pipeline.metadata.resourceVersion;
    if (event.type === 'BOOKMARK') return;
    const key = keyOf(pipeline.metadata);
    const old = this.cache.get(key);
    if (event.type === 'DELETED') {
      this.cache.delete(key);
      this.opts.handlers.deleted(pipeline);
      return;
    }
    this.cache.set(key, pipeline);
    this.opts.handlers.upsert(pipeline, old);
  }

  /** One watch request; resolves with why it ended. */
  private watchOnce(signal: AbortSignal): Promise<RestartReason> {
    return new Promise((resolve) => {
      let request: AbortController | undefined;
      let stall: NodeJS.Timeout | undefined;
      let ended = false;
      const end = (reason: RestartReason) => {
        if (ended) return;
        ended = true;
        clearTimeout(stall);
        signal.removeEventListener('abort', onAbort);
        request?.abort();
        resolve(reason);
      };
      const onAbort = () => end('closed');
      const arm = () => {
        clearTimeout(stall);
        stall = setTimeout(() => end('stalled'), this.opts.stallMs);
      };
      signal.addEventListener('abort', onAbort, { once: true });
      arm();
      const query = {
        resourceVersion: this.resourceVersion,
        allowWatchBookmarks: true,
        timeoutSeconds: Math.max(1, Math.round(this.opts.watchTimeoutMs / 1000)),
      };
      this.opts.api
        .watchPipelines(
          this.opts.namespace,
          query,
          (event) => {
            if (ended) return;
            arm();
            if (event.type === 'ERROR') {
              end(event.object?.code === 410 ? 'gone' : 'error');
              return;
            }
            this.apply(event);
          },
          (err) => end(err ? 'error' : 'closed'),
        )
        .then(
          (controller) => {
            request = controller;
            if (ended) controller.abort();
          },
          () => end('error'),
        );
    });
  }
}
