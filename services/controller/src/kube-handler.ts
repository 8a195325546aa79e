/**
 * The reconciler's side of the API server: every Kubernetes call a reconcile makes (the finalizer,
 * status writes, Events, the Secrets `spec.kafka` names), as `kafka-handler.ts` is for Kafka. No
 * decisions here: the reconciler says what to write, this module writes it.
 */
import type { BrokerSecurity } from '@event-observatory/broker';
import type { Logger } from '@event-observatory/service-kit/logger';
import { pipelineSecurity } from './kafka-access.js';
import type { PipelineApi } from './kube/api.js';
import type { PipelineEvent } from './model/events.js';
import {
  CONTROLLER_ANNOTATION,
  FINALIZER,
  keyOf,
  type Pipeline,
  type PipelineStatus,
} from './pipeline/types.js';

/** Why a status is written: a reconcile, or a flow reading queued by the flow observer. */
export type StatusWriteCause = 'reconcile' | 'flow';

export interface KubeHandlerOptions {
  api: PipelineApi;
  /** Told of each status write (the controller_status_writes_total meter). */
  onStatusWrite?: (cause: StatusWriteCause) => void;
  log: Logger;
}

export class KubeHandler {
  constructor(private readonly opts: KubeHandlerOptions) {}

  /**
   * Adds the controller's finalizer (`wanted`) or removes it; the Pipeline as written, or
   * undefined when it already was so. The patch names the Pipeline's resourceVersion: a stale
   * object fails with 409 before anything else is done.
   */
  async setFinalizer(pipeline: Pipeline, wanted: boolean): Promise<Pipeline | undefined> {
    const finalizers = pipeline.metadata.finalizers ?? [];
    if (wanted === finalizers.includes(FINALIZER)) return undefined;
    return this.opts.api.setFinalizers(
      pipeline,
      wanted ? [...finalizers, FINALIZER] : finalizers.filter((f) => f !== FINALIZER),
    );
  }

  /**
   * Stamps the Pipeline as the controller `name`'s; the Pipeline as written. Names the
   * resourceVersion: when another controller stamped it first, 409, and the retry sees its stamp
   * (and leaves the Pipeline to it).
   */
  stamp(pipeline: Pipeline, name: string): Promise<Pipeline> {
    return this.opts.api.setAnnotations(pipeline, { [CONTROLLER_ANNOTATION]: name });
  }

  /**
   * Writes `status` unless the Pipeline has it already (compared with keys in a canonical order,
   * so a reconcile never triggers itself); the Pipeline as written, or undefined when nothing was.
   * The write names the resourceVersion it was computed from: from a stale cached object it fails
   * with 409 and the key is retried, never undoing a newer `Ready` or `topics[].managed`.
   */
  async writeStatus(
    pipeline: Pipeline,
    status: PipelineStatus,
    cause: StatusWriteCause,
  ): Promise<Pipeline | undefined> {
    if (canonical(status) === canonical(pipeline.status ?? {})) return undefined;
    const written = await this.opts.api.patchStatus(pipeline, status);
    this.opts.onStatusWrite?.(cause);
    return written;
  }

  /** Records an Event about `pipeline`, and logs it; failing to record one fails nothing. */
  async event(pipeline: Pipeline, { type, reason, message }: PipelineEvent): Promise<void> {
    this.opts.log.info({ pipeline: keyOf(pipeline.metadata), type, reason, message }, 'event');
    await this.opts.api.event(pipeline, type, reason, message).catch((error: Error) => {
      // An Event is information: it never fails the reconcile.
      this.opts.log.warn({ err: error.message, reason }, 'recording an event failed');
    });
  }

  /** The security of `spec.kafka`, its Secrets read from the Pipeline's namespace (kafka-access.ts). */
  kafkaSecurity(pipeline: Pipeline): Promise<BrokerSecurity | undefined> {
    return pipelineSecurity(this.opts.api, pipeline);
  }
}

/**
 * JSON with object keys sorted, so equal values compare equal whatever order the API server used;
 * null members left out (a merge patch's null removes the member, so the stored object lacks it).
 */
function canonical(value: unknown): string {
  return JSON.stringify(value, (_key, v: unknown) =>
    v && typeof v === 'object' && !Array.isArray(v)
      ? Object.fromEntries(
          Object.entries(v)
            .filter(([, member]) => member !== null)
            .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)),
        )
      : v,
  );
}
