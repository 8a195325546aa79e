/**
 * Every call the controller makes to the API server, in one place (README's RBAC table lists
 * exactly these): list and watch Pipelines, patch their finalizers, annotations (the controller's
 * stamp) and status, create Events,
 * get the Secrets a Pipeline's `spec.kafka` names, and get / create / update the leader-election
 * Lease.
 *
 * `PipelineApi` is the part the controller loop and the Kubernetes handler use: this class in
 * the service, an in-memory API server in the tests (src/testing/fake-api-server.ts).
 */

import { withTimeout } from '@event-observatory/service-kit/resilience';
import {
  ApiException,
  CoordinationV1Api,
  CoreV1Api,
  CustomObjectsApi,
  type KubeConfig,
  PatchStrategy,
  setHeaderOptions,
  type V1Lease,
  Watch,
} from '@kubernetes/client-node';
import type { EventType } from '../model/events.js';
import {
  GROUP,
  type ObjectMeta,
  type Pipeline,
  type PipelineStatus,
  PLURAL,
  VERSION,
} from '../pipeline/types.js';

const MERGE_PATCH = setHeaderOptions('Content-Type', PatchStrategy.MergePatch);

/** The HTTP status of a failed API call, if it was one. */
export function statusCode(error: unknown): number | undefined {
  return error instanceof ApiException ? error.code : undefined;
}

export interface PipelineList {
  items: Pipeline[];
  resourceVersion: string;
}

/** One event of a Pipeline watch; `ERROR` carries a Status (`code` 410: the version is gone). */
export interface PipelineWatchEvent {
  type: 'ADDED' | 'MODIFIED' | 'DELETED' | 'BOOKMARK' | 'ERROR';
  object: Pipeline & { code?: number; message?: string };
}

/** The query of one watch request, as the API server takes it. */
export interface WatchQuery {
  resourceVersion: string;
  allowWatchBookmarks: boolean;
  timeoutSeconds: number;
}

/** A Secret as the controller uses it. */
export interface SecretContent {
  labels: Record<string, string>;
  data: Record<string, string>;
}

/** What the controller loop and the reconciler need of the API server. */
export interface PipelineApi {
  /** Pipelines of `namespace`, or of every namespace when it is empty. */
  listPipelines(namespace: string): Promise<PipelineList>;
  /**
   * One watch request (same scope as `listPipelines`): `onEvent` for each event, then `onEnd`
   * once (with the error, if it failed). Abort the returned controller to end it.
   */
  watchPipelines(
    namespace: string,
    query: WatchQuery,
    onEvent: (event: PipelineWatchEvent) => void,
    onEnd: (error?: unknown) => void,
  ): Promise<AbortController>;
  /** Sets `metadata.finalizers`; fails with 409 if the object changed since `resourceVersion`. */
  setFinalizers(pipeline: Pipeline, finalizers: string[]): Promise<Pipeline>;
  /**
   * Merges `annotations` into `metadata.annotations`. With `ifUnchanged` (the default), fails with
   * 409 if the object changed since its `resourceVersion`.
   */
  setAnnotations(
    pipeline: Pipeline,
    annotations: Record<string, string>,
    options?: { ifUnchanged?: boolean },
  ): Promise<Pipeline>;
  /**
   * Writes `status` (a merge patch of the status subresource; lists such as conditions are
   * replaced whole). Fails with 409 if the object changed since its `resourceVersion`: a status is
   * computed from a cached object that may be stale.
   */
  patchStatus(pipeline: Pipeline, status: PipelineStatus): Promise<Pipeline>;
  /** A core/v1 Event about `pipeline`, shown by `kubectl describe`. */
  event(pipeline: Pipeline, type: EventType, reason: string, message: string): Promise<void>;
  /** The labels and decoded data of a Secret (the Kafka credentials a Pipeline names); rejects when it is missing. */
  readSecret(namespace: string, name: string): Promise<SecretContent>;
}

export class KubeApi implements PipelineApi {
  private readonly custom: CustomObjectsApi;
  private readonly core: CoreV1Api;
  private readonly coordination: CoordinationV1Api;
  private readonly watch: Watch;

  constructor(
    config: KubeConfig,
    /** The Events' `reportingInstance` (the pod name). */
    private readonly instance: string,
    /**
     * Bound on one call. client-node sets none, and a call on a connection that died silently
     * would otherwise hang its reconcile (or the list) for good.
     */
    private readonly timeoutMs: number,
  ) {
    this.custom = config.makeApiClient(CustomObjectsApi);
    this.core = config.makeApiClient(CoreV1Api);
    this.coordination = config.makeApiClient(CoordinationV1Api);
    this.watch = new Watch(config);
  }

  async listPipelines(namespace: string): Promise<PipelineList> {
    const base = { group: GROUP, version: VERSION, plural: PLURAL };
    const list = await this.bounded(
      'list pipelines',
      namespace
        ? this.custom.listNamespacedCustomObject({ ...base, namespace })
        : this.custom.listClusterCustomObject(base),
    );
    return { items: list.items as Pipeline[], resourceVersion: list.metadata.resourceVersion as string };
  }

  watchPipelines(
    namespace: string,
    query: WatchQuery,
    onEvent: (event: PipelineWatchEvent) => void,
    onEnd: (error?: unknown) => void,
  ): Promise<AbortController> {
    const path = namespace
      ? `/apis/${GROUP}/${VERSION}/namespaces/${encodeURIComponent(namespace)}/${PLURAL}`
      : `/apis/${GROUP}/${VERSION}/${PLURAL}`;
    return this.watch.watch(
      path,
      { ...query },
      (type, object) => onEvent({ type, object } as PipelineWatchEvent),
      onEnd,
    );
  }

  setFinalizers(pipeline: Pipeline, finalizers: string[]): Promise<Pipeline> {
    return this.patchMetadata(pipeline, 'patch finalizers', { finalizers });
  }

  setAnnotations(
    pipeline: Pipeline,
    annotations: Record<string, string>,
    { ifUnchanged = true }: { ifUnchanged?: boolean } = {},
  ): Promise<Pipeline> {
    return this.patchMetadata(pipeline, 'patch annotations', { annotations }, ifUnchanged);
  }

  /** A merge patch of `metadata`, naming the Pipeline's resourceVersion `ifUnchanged` (409 when it is stale). */
  private patchMetadata(
    pipeline: Pipeline,
    what: string,
    metadata: Partial<ObjectMeta>,
    ifUnchanged = true,
  ): Promise<Pipeline> {
    const { name, namespace } = pipeline.metadata;
    const resourceVersion = ifUnchanged ? pipeline.metadata.resourceVersion : undefined;
    return this.bounded(
      what,
      this.custom.patchNamespacedCustomObject(
        {
          group: GROUP,
          version: VERSION,
          plural: PLURAL,
          namespace,
          name,
          body: { metadata: { ...metadata, ...(resourceVersion ? { resourceVersion } : {}) } },
        },
        MERGE_PATCH,
      ),
    );
  }

  async patchStatus(pipeline: Pipeline, status: PipelineStatus): Promise<Pipeline> {
    const { name, namespace, resourceVersion } = pipeline.metadata;
    return this.bounded(
      'patch status',
      this.custom.patchNamespacedCustomObjectStatus(
        {
          group: GROUP,
          version: VERSION,
          plural: PLURAL,
          namespace,
          name,
          body: { metadata: { resourceVersion }, status },
        },
        MERGE_PATCH,
      ),
    );
  }

  async event(pipeline: Pipeline, type: EventType, reason: string, message: string): Promise<void> {
    const { name, namespace, uid, resourceVersion } = pipeline.metadata;
    const now = new Date();
    await this.bounded(
      'create event',
      this.core.createNamespacedEvent({
        namespace,
        body: {
          metadata: { generateName: `${name}.`, namespace },
          involvedObject: {
            apiVersion: pipeline.apiVersion,
            kind: pipeline.kind,
            name,
            namespace,
            uid,
            resourceVersion,
          },
          type,
          reason,
          message: message.slice(0, 1024),
          count: 1,
          firstTimestamp: now,
          lastTimestamp: now,
          source: { component: 'observatory-controller' },
          reportingComponent: 'observatory.dev/controller',
          reportingInstance: this.instance,
        },
      }),
    );
  }

  async readSecret(namespace: string, name: string): Promise<SecretContent> {
    const secret = await this.bounded('get secret', this.core.readNamespacedSecret({ namespace, name }));
    const data = Object.fromEntries(
      Object.entries(secret.data ?? {}).map(([key, b64]) => [
        key,
        Buffer.from(b64, 'base64').toString('utf8'),
      ]),
    );
    return { labels: secret.metadata?.labels ?? {}, data };
  }

  /** Deletes a Pipeline (the chart's pre-delete hook); a Pipeline already gone is fine. */
  async deletePipeline(namespace: string, name: string): Promise<void> {
    try {
      await this.bounded(
        'delete pipeline',
        this.custom.deleteNamespacedCustomObject({
          group: GROUP,
          version: VERSION,
          plural: PLURAL,
          namespace,
          name,
        }),
      );
    } catch (error) {
      if (statusCode(error) !== 404) throw error;
    }
  }

  /** The Lease, or undefined when it does not exist. */
  async readLease(namespace: string, name: string): Promise<V1Lease | undefined> {
    try {
      return await this.bounded('read lease', this.coordination.readNamespacedLease({ namespace, name }));
    } catch (error) {
      if (statusCode(error) === 404) return undefined;
      throw error;
    }
  }

  createLease(namespace: string, lease: V1Lease): Promise<V1Lease> {
    return this.bounded('create lease', this.coordination.createNamespacedLease({ namespace, body: lease }));
  }

  /** Fails with 409 when the Lease changed since `lease.metadata.resourceVersion`. */
  replaceLease(namespace: string, lease: V1Lease): Promise<V1Lease> {
    return this.bounded(
      'replace lease',
      this.coordination.replaceNamespacedLease({ namespace, name: lease.metadata?.name ?? '', body: lease }),
    );
  }

  private bounded<T>(what: string, call: Promise<T>): Promise<T> {
    return withTimeout(call, this.timeoutMs, `API server: ${what}`);
  }
}
