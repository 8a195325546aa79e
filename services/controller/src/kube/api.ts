/**
 * Every call the controller makes to the API server, in one place (README's RBAC table lists
 * exactly these): list and watch Pipelines, patch their finalizers and status, create Events,
 * and get / create / update the leader-election Lease.
 */
import {
  ApiException,
  CoordinationV1Api,
  CoreV1Api,
  CustomObjectsApi,
  type KubeConfig,
  PatchStrategy,
  setHeaderOptions,
  type V1Lease,
} from '@kubernetes/client-node';
import { GROUP, type Pipeline, type PipelineStatus, PLURAL, VERSION } from '../pipeline/types.js';

const MERGE_PATCH = setHeaderOptions('Content-Type', PatchStrategy.MergePatch);

/** The HTTP status of a failed API call, if it was one. */
export function statusCode(error: unknown): number | undefined {
  return error instanceof ApiException ? error.code : undefined;
}

export interface PipelineList {
  items: Pipeline[];
  resourceVersion: string;
}

export type EventType = 'Normal' | 'Warning';

export class KubeApi {
  private readonly custom: CustomObjectsApi;
  private readonly core: CoreV1Api;
  private readonly coordination: CoordinationV1Api;

  constructor(
    readonly config: KubeConfig,
    /** The Events' `reportingInstance` (the pod name). */
    private readonly instance: string,
  ) {
    this.custom = config.makeApiClient(CustomObjectsApi);
    this.core = config.makeApiClient(CoreV1Api);
    this.coordination = config.makeApiClient(CoordinationV1Api);
  }

  /** Pipelines of `namespace`, or of every namespace when it is empty. */
  async listPipelines(namespace: string): Promise<PipelineList> {
    const base = { group: GROUP, version: VERSION, plural: PLURAL };
    const list = namespace
      ? await this.custom.listNamespacedCustomObject({ ...base, namespace })
      : await this.custom.listClusterCustomObject(base);
    return { items: list.items as Pipeline[], resourceVersion: list.metadata.resourceVersion as string };
  }

  /** The watch path for `Watch.watch` (same scope as `listPipelines`). */
  pipelinesPath(namespace: string): string {
    return namespace
      ? `/apis/${GROUP}/${VERSION}/namespaces/${encodeURIComponent(namespace)}/${PLURAL}`
      : `/apis/${GROUP}/${VERSION}/${PLURAL}`;
  }

  /** Sets `metadata.finalizers`; fails with 409 if the object changed since `resourceVersion`. */
  async setFinalizers(pipeline: Pipeline, finalizers: string[]): Promise<Pipeline> {
    const { name, namespace, resourceVersion } = pipeline.metadata;
    return this.custom.patchNamespacedCustomObject(
      {
        group: GROUP,
        version: VERSION,
        plural: PLURAL,
        namespace,
        name,
        body: { metadata: { finalizers, resourceVersion } },
      },
      MERGE_PATCH,
    );
  }

  /** Writes `status` (a merge patch of the status subresource; lists such as conditions are replaced whole). */
  async patchStatus(pipeline: Pipeline, status: PipelineStatus): Promise<Pipeline> {
    const { name, namespace } = pipeline.metadata;
    return this.custom.patchNamespacedCustomObjectStatus(
      {
        group: GROUP,
        version: VERSION,
        plural: PLURAL,
        namespace,
        name,
        body: { status },
      },
      MERGE_PATCH,
    );
  }

  /** A core/v1 Event about `pipeline`, shown by `kubectl describe`. */
  async event(pipeline: Pipeline, type: EventType, reason: string, message: string): Promise<void> {
    const { name, namespace, uid, resourceVersion } = pipeline.metadata;
    const now = new Date();
    await this.core.createNamespacedEvent({
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
    });
  }

  /** The Lease, or undefined when it does not exist. */
  async readLease(namespace: string, name: string): Promise<V1Lease | undefined> {
    try {
      return await this.coordination.readNamespacedLease({ namespace, name });
    } catch (error) {
      if (statusCode(error) === 404) return undefined;
      throw error;
    }
  }

  createLease(namespace: string, lease: V1Lease): Promise<V1Lease> {
    return this.coordination.createNamespacedLease({ namespace, body: lease });
  }

  /** Fails with 409 when the Lease changed since `lease.metadata.resourceVersion`. */
  replaceLease(namespace: string, lease: V1Lease): Promise<V1Lease> {
    return this.coordination.replaceNamespacedLease({
      namespace,
      name: lease.metadata?.name ?? '',
      body: lease,
    });
  }
}
