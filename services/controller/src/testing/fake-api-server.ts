/**
 * An in-memory Kubernetes API server for Pipelines behind the controller's `PipelineApi`: the
 * stand-in for the real one in the fast tier and the benchmark (the cluster suite runs on the
 * real one). Imported as `@event-observatory/controller/testing`; the build leaves `src/testing/`
 * out, so it never reaches `dist/` or the image. It keeps the rules the controller relies on:
 *
 * - one resourceVersion sequence for every change; `generation` rises with the spec only (and at
 *   deletion), never with status or metadata;
 * - optimistic concurrency: a finalizer, annotation or status patch naming a stale resourceVersion
 *   fails with 409;
 * - status is a subresource, written by JSON merge patch (lists replaced whole); a patch that
 *   changes nothing changes no resourceVersion and sends no event;
 * - deletion waits for the finalizers: it sets `deletionTimestamp`, the object goes once the last
 *   finalizer is removed;
 * - a watch starts at a resourceVersion and replays what came after it; once that history is
 *   compacted away it answers one ERROR event with code 410 (Gone) and ends, as the real server
 *   does; it ends by itself after `timeoutSeconds`;
 * - empty finalizer lists and annotation maps read back as absent (`omitempty`);
 * - every call answers after a turn of the event loop; Events are recorded; any call can be made
 *   to fail once with an injected error.
 *
 * Objects cross it as JSON, as over the wire, so neither side can change the other's copy.
 */
import { isDeepStrictEqual } from 'node:util';
import { ApiException } from '@kubernetes/client-node';
import type {
  PipelineApi,
  PipelineList,
  PipelineWatchEvent,
  SecretContent,
  WatchQuery,
} from '../kube/api.js';
import type { EventType } from '../model/events.js';
import { keyOf, type ObjectMeta, type Pipeline, type PipelineStatus } from '../pipeline/types.js';

export type ApiCall = keyof PipelineApi;

export interface RecordedEvent {
  /** `namespace/name` of the Pipeline. */
  object: string;
  type: EventType;
  reason: string;
  message: string;
}

interface Watcher {
  namespace: string;
  /** Frozen: the connection stays open but delivers nothing (a half-open TCP connection). */
  frozen: boolean;
  end(error?: unknown): void;
  send(event: PipelineWatchEvent): void;
}

/** A failed API call as client-node reports it. */
export function apiError(code: number, message: string): ApiException<unknown> {
  return new ApiException(code, message, { kind: 'Status', code, message }, {});
}

const wire = <T>(value: T): T => JSON.parse(JSON.stringify(value)) as T;

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** RFC 7386: objects merge key by key, `null` removes a key, anything else replaces. */
function mergePatch(target: unknown, patch: unknown): unknown {
  if (!isObject(patch)) return patch;
  const merged: Record<string, unknown> = isObject(target) ? { ...target } : {};
  for (const [key, value] of Object.entries(patch)) {
    if (value === null) delete merged[key];
    else merged[key] = mergePatch(merged[key], value);
  }
  return merged;
}

export class FakeApiServer implements PipelineApi {
  /** Events recorded by `event`, oldest first. */
  readonly events: RecordedEvent[] = [];
  private readonly objects = new Map<string, Pipeline>();
  private readonly secrets = new Map<string, SecretContent>();
  /** Every change with its resourceVersion, for watches to replay. */
  private history: Array<{ version: number; event: PipelineWatchEvent }> = [];
  /** Watches from a version older than this are answered 410. */
  private compactedBefore = 0;
  private version = 0;
  private uids = 0;
  private watches = 0;
  private readonly watchers = new Set<Watcher>();
  private readonly failures: Array<{ call: ApiCall; error: Error }> = [];

  // The controller's side.

  async listPipelines(namespace: string): Promise<PipelineList> {
    await this.enter('listPipelines');
    const items = [...this.objects.values()].filter((p) => !namespace || p.metadata.namespace === namespace);
    return wire({ items, resourceVersion: String(this.version) });
  }

  async watchPipelines(
    namespace: string,
    query: WatchQuery,
    onEvent: (event: PipelineWatchEvent) => void,
    onEnd: (error?: unknown) => void,
  ): Promise<AbortController> {
    await this.enter('watchPipelines');
    this.watches++;
    const request = new AbortController();
    // Delivered one by one after the caller returns, in order, as a stream would.
    let ended = false;
    const later = (work: () => void) =>
      setImmediate(() => {
        if (!ended) work();
      });
    const watcher: Watcher = {
      namespace,
      frozen: false,
      send: (event) => later(() => onEvent(wire(event))),
      end: (error) => {
        later(() => {
          ended = true;
          clearTimeout(timeout);
          this.watchers.delete(watcher);
          onEnd(error);
        });
      },
    };
    // A frozen connection does not even bring the end.
    const timeout = setTimeout(() => watcher.frozen || watcher.end(), query.timeoutSeconds * 1000);
    timeout.unref();
    request.signal.addEventListener('abort', () => watcher.end(new Error('The operation was aborted')), {
      once: true,
    });
    const from = query.resourceVersion === '' ? this.version : Number(query.resourceVersion);
    if (from < this.compactedBefore) {
      const message = `too old resource version: ${from} (${this.compactedBefore})`;
      const gone = { kind: 'Status', status: 'Failure', reason: 'Expired', code: 410, message };
      watcher.send({ type: 'ERROR', object: gone as unknown as PipelineWatchEvent['object'] });
      watcher.end();
      return request;
    }
    for (const { version, event } of this.history) {
      if (version > from && this.sees(watcher, event.object)) watcher.send(event);
    }
    this.watchers.add(watcher);
    return request;
  }

  async setFinalizers(pipeline: Pipeline, finalizers: string[]): Promise<Pipeline> {
    await this.enter('setFinalizers');
    const stored = this.fresh(pipeline);
    return this.write({ ...stored, metadata: { ...stored.metadata, finalizers: wire(finalizers) } });
  }

  async setAnnotations(
    pipeline: Pipeline,
    annotations: Record<string, string>,
    { ifUnchanged = true }: { ifUnchanged?: boolean } = {},
  ): Promise<Pipeline> {
    await this.enter('setAnnotations');
    const stored = ifUnchanged ? this.fresh(pipeline) : this.stored(pipeline.metadata);
    const merged = { ...stored.metadata.annotations, ...wire(annotations) };
    return this.write({ ...stored, metadata: { ...stored.metadata, annotations: merged } });
  }

  async patchStatus(pipeline: Pipeline, status: PipelineStatus): Promise<Pipeline> {
    await this.enter('patchStatus');
    const stored = this.fresh(pipeline);
    return this.write({ ...stored, status: mergePatch(stored.status, wire(status)) as PipelineStatus });
  }

  async event(pipeline: Pipeline, type: EventType, reason: string, message: string): Promise<void> {
    await this.enter('event');
    this.events.push({ object: keyOf(pipeline.metadata), type, reason, message: message.slice(0, 1024) });
  }

  async readSecret(namespace: string, name: string): Promise<SecretContent> {
    await this.enter('readSecret');
    const secret = this.secrets.get(`${namespace}/${name}`);
    if (!secret) throw apiError(404, `secrets "${name}" not found`);
    return wire(secret);
  }

  // The test's side: what kubectl and the cluster would do.

  /** Creates or replaces a Secret (`kubectl create secret generic`, then `kubectl label`). */
  putSecret(
    namespace: string,
    name: string,
    data: Record<string, string>,
    labels: Record<string, string> = {},
  ): void {
    this.secrets.set(`${namespace}/${name}`, wire({ labels, data }));
  }

  /** Creates a Pipeline (`kubectl create`): the server sets uid, versions and creation time. */
  create(pipeline: Omit<Pipeline, 'status'>): Pipeline {
    const key = keyOf(pipeline.metadata);
    if (this.objects.has(key)) throw apiError(409, `pipelines.observatory.dev "${key}" already exists`);
    const { metadata } = pipeline;
    return this.write({
      ...wire(pipeline),
      metadata: {
        ...wire(metadata),
        uid: `uid-${++this.uids}`,
        generation: 1,
        creationTimestamp: new Date().toISOString().replace(/\.\d+Z$/, 'Z'),
      },
    });
  }

  /** Changes spec or metadata (`kubectl patch`); status stays the controller's. */
  update(meta: { namespace: string; name: string }, change: (pipeline: Pipeline) => void): Pipeline {
    const stored = this.stored(meta);
    const next = wire(stored);
    change(next);
    const specChanged = JSON.stringify(next.spec) !== JSON.stringify(stored.spec);
    const generation = (stored.metadata.generation ?? 1) + (specChanged ? 1 : 0);
    return this.write({
      ...next,
      metadata: { ...next.metadata, uid: stored.metadata.uid, generation },
      ...(stored.status ? { status: stored.status } : {}),
    } as Pipeline);
  }

  /** Deletes a Pipeline (`kubectl delete`): at once, or once its finalizers are gone. */
  delete(meta: { namespace: string; name: string }): void {
    const stored = this.stored(meta);
    if (stored.metadata.deletionTimestamp) return;
    const metadata = {
      ...stored.metadata,
      deletionTimestamp: new Date().toISOString(),
      generation: (stored.metadata.generation ?? 1) + 1,
    };
    this.write({ ...stored, metadata });
  }

  /** `delete` as the pre-delete hook calls it (KubeApi's `deletePipeline`). */
  async deletePipeline(namespace: string, name: string): Promise<void> {
    await new Promise((resolve) => setImmediate(resolve));
    if (this.objects.has(keyOf({ namespace, name }))) this.delete({ namespace, name });
  }

  /** The Pipeline as stored now, or undefined when it is gone. */
  get(meta: { namespace: string; name: string }): Pipeline | undefined {
    const stored = this.objects.get(keyOf(meta));
    return stored ? wire(stored) : undefined;
  }

  /** The next call `call` fails with `error` (a 500 unless given). */
  failNext(call: ApiCall, error: Error = apiError(500, `injected failure of ${call}`)): void {
    this.failures.push({ call, error });
  }

  /** Forgets the history up to now: a watch from any older resourceVersion gets 410 Gone. */
  compact(): void {
    this.history = [];
    this.compactedBefore = this.version;
  }

  /** Open watches stop delivering without ending (a connection gone silent). */
  freezeWatches(): number {
    for (const watcher of this.watchers) watcher.frozen = true;
    return this.watchers.size;
  }

  /** Ends every open watch normally (as at its timeout, or when the API server restarts). */
  endWatches(): number {
    const open = [...this.watchers];
    for (const watcher of open) {
      this.watchers.delete(watcher);
      watcher.end();
    }
    return open.length;
  }

  /** Watch requests answered so far. */
  get watchesStarted(): number {
    return this.watches;
  }

  /** Watches open now. */
  get openWatches(): number {
    return this.watchers.size;
  }

  /** Every call answers after a turn of the event loop, as over a connection. */
  private async enter(call: ApiCall): Promise<void> {
    await new Promise((resolve) => setImmediate(resolve));
    const index = this.failures.findIndex((f) => f.call === call);
    if (index < 0) return;
    const [failure] = this.failures.splice(index, 1);
    throw failure?.error;
  }

  /** The stored object, if `pipeline` names its resourceVersion; 409 otherwise (optimistic concurrency). */
  private fresh(pipeline: Pipeline): Pipeline {
    const stored = this.stored(pipeline.metadata);
    if (pipeline.metadata.resourceVersion !== stored.metadata.resourceVersion) {
      throw apiError(
        409,
        `Operation cannot be fulfilled on pipelines.observatory.dev "${stored.metadata.name}": the object has been modified; please apply your changes to the latest version and try again`,
      );
    }
    return stored;
  }

  private stored(meta: { namespace: string; name: string }): Pipeline {
    const stored = this.objects.get(keyOf(meta));
    if (!stored) throw apiError(404, `pipelines.observatory.dev "${meta.name}" not found`);
    return stored;
  }

  private sees(watcher: Watcher, pipeline: Pipeline): boolean {
    return !watcher.namespace || pipeline.metadata.namespace === watcher.namespace;
  }

  /**
   * Stores `next` under a new resourceVersion and tells the watches, unless nothing changed; an
   * object being deleted goes once its finalizers are gone.
   */
  private write(next: Pipeline): Pipeline {
    const key = keyOf(next.metadata);
    const before = this.objects.get(key);
    const meta = omitEmpty(withoutVersion(next).metadata);
    if (before && isDeepStrictEqual(wire({ ...next, metadata: meta }), withoutVersion(before)))
      return wire(before);
    const stored = wire({ ...next, metadata: { ...meta, resourceVersion: String(++this.version) } });
    const gone = stored.metadata.deletionTimestamp && (stored.metadata.finalizers ?? []).length === 0;
    if (gone) this.objects.delete(key);
    else this.objects.set(key, stored);
    const event: PipelineWatchEvent = {
      type: gone ? 'DELETED' : before ? 'MODIFIED' : 'ADDED',
      object: stored,
    };
    this.history.push({ version: this.version, event });
    for (const watcher of this.watchers) {
      if (!watcher.frozen && this.sees(watcher, stored)) watcher.send(event);
    }
    return wire(stored);
  }
}

/** Empty lists and maps are not kept (`omitempty` in ObjectMeta), so `[]` reads back as absent. */
function omitEmpty(metadata: ObjectMeta): ObjectMeta {
  const kept = Object.entries(metadata).filter(
    ([, value]) => !(typeof value === 'object' && value !== null && Object.keys(value).length === 0),
  );
  return Object.fromEntries(kept) as unknown as ObjectMeta;
}

function withoutVersion(pipeline: Pipeline): Pipeline {
  const { resourceVersion: _, ...metadata } = pipeline.metadata;
  return { ...pipeline, metadata };
}
