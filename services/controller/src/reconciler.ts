/**
 * One reconcile of one Pipeline, level-based: from the Pipeline as cached and every other
 * Pipeline (for ownership), make Kafka match, then write what was found to `status` and tell
 * people through Events. Throws when Kafka or the API server failed, so the queue retries with
 * backoff; the status says so first. It decides, with the plain values of `model/`; the Kafka
 * handler and the Kubernetes handler carry out the calls.
 */

import type { Logger } from '@event-observatory/service-kit/logger';
import { KafkaAccessError } from './kafka-access.js';
import type { KafkaHandler, KafkaTarget } from './kafka-handler.js';
import type { PipelineApi } from './kube/api.js';
import { KubeHandler, type StatusWriteCause } from './kube-handler.js';
import type { ReconcileOutcome } from './metrics.js';
import { findCondition } from './model/conditions.js';
import { desiredTopics, isPaused } from './model/desired.js';
import { flowEvents, problemEvent, topicChangeEvents } from './model/events.js';
import { type FlowObservation, withFlowObservation } from './model/flow.js';
import { withKafkaNames } from './model/naming.js';
import { claimants, clusterOf, controlOf, topicOwners } from './model/ownership.js';
import {
  adoptionGranted,
  adopts,
  reservedBy,
  serversNotAllowed,
  type TopicRules,
  wasManaged,
} from './model/safety.js';
import {
  appliedResults,
  type BlockReason,
  creatingStatus,
  onlyDeclaredConfigs,
  pausedStatus,
  pendingStatus,
  reconciledStatus,
  type TopicResult,
  verdict,
} from './model/status.js';
import {
  ADOPT_TOPICS_ANNOTATION,
  FINALIZER,
  FORCE_DELETE_ANNOTATION,
  keyOf,
  type Pipeline,
  type PipelineStatus,
} from './pipeline/types.js';

export interface ReconcilerOptions {
  /** What the Kubernetes handler calls. */
  api: PipelineApi;
  kafka: KafkaHandler;
  /** Kafka of Pipelines that name none (`BROKER_BOOTSTRAP_SERVERS`). */
  defaultServers: string[];
  /**
   * `CONTROLLER_NAME`, `namespace/release`: the stamp of the Pipelines it reconciles (an unstamped
   * one gets it first).
   */
  controllerName: string;
  /** The only servers a Pipeline may name (`CONTROLLER_ALLOWED_BOOTSTRAP`). */
  allowedServers: string[];
  /**
   * `CONTROLLER_TOPIC_NAME_TEMPLATE`, for every namespace. Unset: `{name}` (names as given) in
   * `ownNamespace`, `{namespace}.{name}` in any other.
   */
  topicNameTemplate?: string | undefined;
  /** The controller's own namespace (the release's): its Pipelines keep their names by default. */
  ownNamespace?: string;
  /** `CONTROLLER_RESERVED_TOPICS` and `CONTROLLER_ADOPTABLE_TOPICS`; default `__*` reserved, nothing adoptable. */
  topicRules?: TopicRules;
  /** `CONTROLLER_IGNORED_CONFIGS`: topic config keys never set or reset. */
  ignoredConfigs?: string[];
  /** `CONTROLLER_DELETION_TIMEOUT`: how long a failing deletion holds the Pipeline. */
  deletionTimeoutMs?: number;
  /** The last flow observation of a Pipeline (the flow observer), written with every status. */
  flow?: { observation(key: string): FlowObservation | undefined };
  /** Told of each status write (the controller_status_writes_total meter). */
  onStatusWrite?: (cause: StatusWriteCause) => void;
  log: Logger;
  now?: () => Date;
}

export interface ReconcileResult {
  outcome: ReconcileOutcome;
  /** Topics this Pipeline manages now. */
  managed: number;
}

export class Reconciler {
  private readonly now: () => Date;
  private readonly kube: KubeHandler;

  constructor(private readonly opts: ReconcilerOptions) {
    this.now = opts.now ?? (() => new Date());
    this.kube = new KubeHandler({ api: opts.api, onStatusWrite: opts.onStatusWrite, log: opts.log });
  }

  /** The Pipeline with its topics under their Kafka names (the topic-name rule). */
  resolve(pipeline: Pipeline): Pipeline {
    return withKafkaNames(pipeline, this.templateOf(pipeline.metadata.namespace));
  }

  /** The topic-name template of a namespace: one topic namespace per Kubernetes namespace by default. */
  private templateOf(namespace: string): string {
    if (this.opts.topicNameTemplate) return this.opts.topicNameTemplate;
    return this.opts.ownNamespace === undefined || namespace === this.opts.ownNamespace
      ? '{name}'
      : '{namespace}.{name}';
  }

  private get rules(): TopicRules {
    return this.opts.topicRules ?? { reserved: [], adoptable: [] };
  }

  private readonly isReserved = (name: string) => reservedBy(this.rules, name) !== undefined;

  /** Whether this controller reconciles `pipeline`: stamped with its name, or not stamped yet. */
  reconciles(pipeline: Pipeline): boolean {
    return controlOf(pipeline, this.opts.controllerName) !== 'foreign';
  }

  /** `pipeline` and `all` (the Pipelines it `reconciles`) as the API server has them (declared names). */
  async reconcile(declared: Pipeline, others: Pipeline[]): Promise<ReconcileResult> {
    let pipeline = this.resolve(declared);
    const all = others.map((p) => this.resolve(p));
    if (pipeline.metadata.deletionTimestamp) return this.finalize(pipeline, all);
    if (controlOf(pipeline, this.opts.controllerName) === 'unclaimed')
      pipeline = this.resolve(await this.kube.stamp(pipeline, this.opts.controllerName));
    // A finalizer only where deletion has work to do (Kubernetes API conventions): a Retain
    // Pipeline leaves at once, so `helm uninstall`, which stops this controller in the same pass,
    // never strands one (and with it its namespace).
    const held = await this.kube.setFinalizer(pipeline, pipeline.spec.deletionPolicy === 'Delete');
    let current = held ? this.resolve(held) : pipeline;
    if (isPaused(current)) {
      await this.writeStatus(current, pausedStatus(current, this.now()));
      return { outcome: 'skipped', managed: 0 };
    }
    if (!findCondition(current.status?.conditions, 'Ready')) {
      current = await this.writeStatus(current, pendingStatus(current, this.now()));
    }
    const cluster = clusterOf(current, this.opts.defaultServers);
    const desired = desiredTopics(
      current,
      topicOwners(all, this.opts.defaultServers),
      cluster,
      this.isReserved,
      this.opts.ignoredConfigs,
    );
    const results = new Map<string, TopicResult>();
    const managed = (name: string) => wasManaged(current, name);
    const block = (
      names: string[],
      blocked: BlockReason,
      message: string,
      phase: 'Blocked' | 'Error' = 'Blocked',
    ) => {
      for (const name of names) results.set(name, { name, phase, blocked, message, managed: managed(name) });
    };
    for (const { name, owner } of desired.conflicts) {
      const holder = all.find((p) => keyOf(p.metadata) === owner);
      results.set(name, {
        name,
        phase: 'Conflict',
        message: `managed by the older Pipeline ${owner}`,
        managed: holder ? wasManaged(holder, name) : false,
      });
    }
    for (const name of desired.reserved)
      block(
        [name],
        'ReservedTopicName',
        `reserved (${reservedBy(this.rules, name)}: Kafka's own topics, or CONTROLLER_RESERVED_TOPICS): never touched`,
      );
    const touched = [...desired.managed.map((s) => s.name), ...desired.unmanaged];
    const notAllowed = serversNotAllowed(cluster, this.opts.allowedServers);
    let failure: unknown;
    if (notAllowed.length > 0) {
      block(
        touched,
        'ClusterNotAllowed',
        `${notAllowed.join(', ')} not in CONTROLLER_ALLOWED_BOOTSTRAP: Kafka not touched`,
      );
    } else {
      // Topics about to be created are recorded as this Pipeline's first (status.topics[].managed),
      // so a crash before the status below leaves them recognised, not AdoptionRequired.
      const recordCreating = async (names: string[]) => {
        const written = await this.kube.writeStatus(current, creatingStatus(current, names), 'reconcile');
        if (written) current = this.resolve(written);
      };
      try {
        await this.applyToKafka(current, cluster, desired, results, recordCreating);
      } catch (error) {
        failure = error;
        if (error instanceof KafkaAccessError) block(touched, error.reason, error.message, 'Error');
        else
          for (const name of touched)
            results.set(name, {
              name,
              phase: 'Error',
              message: `Kafka: ${(error as Error).message}`,
              managed: managed(name),
            });
      }
    }
    // In the order declared, so the status reads like the spec.
    const topics = current.spec.topics.flatMap((t) => {
      const result = results.get(t.name);
      return result ? [onlyDeclaredConfigs(result, Object.keys(t.config ?? {}))] : [];
    });
    const problem = problemEvent(findCondition(current.status?.conditions, 'Ready'), topics);
    if (problem) await this.kube.event(current, problem);
    await this.writeStatus(current, reconciledStatus(current, topics, this.now()));
    if (failure) throw failure;
    return { outcome: verdict(topics).ready ? 'success' : 'failure', managed: desired.managed.length };
  }

  /** Makes Kafka match the managed topics; records each declared topic's result. */
  private async applyToKafka(
    pipeline: Pipeline,
    cluster: string,
    desired: ReturnType<typeof desiredTopics>,
    results: Map<string, TopicResult>,
    creating: (names: string[]) => Promise<void>,
  ): Promise<void> {
    const { outcomes, states, notAdopted } = await this.opts.kafka.apply(
      await this.target(pipeline, cluster),
      desired.managed,
      desired.unmanaged,
      [...new Set(pipeline.spec.topics.flatMap((t) => Object.keys(t.config ?? {})))],
      {
        mayTakeOver: (name) => adoptionGranted(this.rules, pipeline, name) || wasManaged(pipeline, name),
        creating,
      },
    );
    // The annotation asked, the operator's allowlist did not let it: say which rule holds.
    const refusedByRules = (name: string) =>
      adopts(pipeline, name)
        ? `exists in Kafka and was not created by this Pipeline; ${ADOPT_TOPICS_ANNOTATION} names it, but CONTROLLER_ADOPTABLE_TOPICS does not allow it to this Pipeline`
        : undefined;
    for (const result of appliedResults(desired.unmanaged, notAdopted, outcomes, states, refusedByRules))
      results.set(result.name, result);
    for (const outcome of outcomes)
      for (const event of topicChangeEvents(outcome)) await this.kube.event(pipeline, event);
  }

  /** Carries out the deletion policy, then lets the Pipeline go. */
  private async finalize(pipeline: Pipeline, all: Pipeline[]): Promise<ReconcileResult> {
    if (!pipeline.metadata.finalizers?.includes(FINALIZER)) return { outcome: 'skipped', managed: 0 };
    const cluster = clusterOf(pipeline, this.opts.defaultServers);
    const { managed } = desiredTopics(
      pipeline,
      topicOwners(all, this.opts.defaultServers),
      cluster,
      this.isReserved,
    );
    // Only topics it created or adopted, and never in a cluster outside the allowlist.
    const ours = managed.map((s) => s.name).filter((name) => wasManaged(pipeline, name));
    // A topic another Pipeline declares too stays: it takes the topic over when this one is gone.
    const claimed = claimants(pipeline, all, cluster, this.opts.defaultServers);
    const names = ours.filter((name) => !claimed.has(name));
    const kept = ours.filter((name) => claimed.has(name));
    if (kept.length > 0)
      await this.kube.event(pipeline, {
        type: 'Normal',
        reason: 'TopicsRetained',
        message: `kept ${kept.map((name) => `${name} (claimed by ${claimed.get(name)})`).join(', ')}`,
      });
    const notAllowed = serversNotAllowed(cluster, this.opts.allowedServers);
    if (pipeline.spec.deletionPolicy === 'Delete' && !isPaused(pipeline) && notAllowed.length === 0) {
      if (names.length > 0) await this.deleteOrGiveUp(pipeline, cluster, names);
    } else if (names.length > 0) {
      const why = isPaused(pipeline)
        ? 'reconciliation is paused'
        : notAllowed.length > 0
          ? 'the cluster is not in CONTROLLER_ALLOWED_BOOTSTRAP'
          : 'deletionPolicy is Retain';
      await this.kube.event(pipeline, {
        type: 'Normal',
        reason: 'TopicsRetained',
        message: `kept ${names.join(', ')}: ${why}`,
      });
    }
    await this.kube.setFinalizer(pipeline, false);
    this.opts.log.info(
      { pipeline: keyOf(pipeline.metadata), policy: pipeline.spec.deletionPolicy },
      'finalized',
    );
    return { outcome: 'success', managed: 0 };
  }

  /**
   * Deletes `names`, or gives up (the finalizer may go either way); throws to be retried. Gives up at once under
   * the force-delete annotation, or once a failure comes after `deletionTimeoutMs` since the
   * deletion was asked for; a Warning Event then names what was left in Kafka.
   */
  private async deleteOrGiveUp(pipeline: Pipeline, cluster: string, names: string[]): Promise<void> {
    const left = (why: string) =>
      this.kube.event(pipeline, {
        type: 'Warning',
        reason: 'TopicsLeftBehind',
        message: `${why}: left ${names.join(', ')} in Kafka ${cluster}`,
      });
    if (pipeline.metadata.annotations?.[FORCE_DELETE_ANNOTATION]?.trim().toLowerCase() === 'true') {
      await left(`${FORCE_DELETE_ANNOTATION} is "true"`);
      return;
    }
    try {
      const deleted = await this.opts.kafka.delete(await this.target(pipeline, cluster), names);
      if (deleted.length > 0)
        await this.kube.event(pipeline, {
          type: 'Normal',
          reason: 'TopicDeleted',
          message: `deleted ${deleted.join(', ')}`,
        });
    } catch (error) {
      const bound = this.opts.deletionTimeoutMs ?? 300_000;
      const since = Date.parse(pipeline.metadata.deletionTimestamp ?? '') || this.now().getTime();
      if (this.now().getTime() - since < bound) throw error;
      await left(`deletion failed for ${Math.round(bound / 1000)} s (${(error as Error).message})`);
    }
  }

  /** Writes the flow observation of the Pipeline into its status, if it differs (the flow observer's write). */
  async writeFlow(declared: Pipeline): Promise<void> {
    const pipeline = this.resolve(declared);
    if (pipeline.metadata.deletionTimestamp) return;
    await this.writeStatus(pipeline, pipeline.status ?? {}, 'flow');
  }

  /**
   * Writes `status` with the last flow observation unless it is what the Pipeline has, with
   * Events for the flow conditions that turned; returns the Pipeline as it now is.
   */
  private async writeStatus(
    pipeline: Pipeline,
    computed: PipelineStatus,
    cause: StatusWriteCause = 'reconcile',
  ): Promise<Pipeline> {
    const observation = this.opts.flow?.observation(keyOf(pipeline.metadata));
    const status = withFlowObservation(pipeline, computed, observation, this.now());
    const written = await this.kube.writeStatus(pipeline, status, cause);
    if (!written) return pipeline;
    for (const event of flowEvents(pipeline.status?.conditions ?? [], status.conditions ?? []))
      await this.kube.event(pipeline, event);
    return this.resolve(written);
  }

  /** Where `pipeline`'s topics live and the security to reach them. */
  private async target(pipeline: Pipeline, cluster: string): Promise<KafkaTarget> {
    return { servers: cluster.split(','), security: await this.kube.kafkaSecurity(pipeline) };
  }
}
