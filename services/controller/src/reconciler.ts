/**
 * One reconcile of one Pipeline, level-based: from the Pipeline as cached and every other
 * Pipeline (for ownership), make Kafka match, then write what was found to `status` and tell
 * people through Events. Throws when Kafka or the API server failed, so the queue retries with
 * backoff; the status says so first.
 */

import type { TopicOutcome } from '@event-observatory/broker';
import type { Logger } from '@event-observatory/service-kit/logger';
import { KafkaAccessError, pipelineSecurity } from './kafka-access.js';
import type { KafkaHandler, KafkaTarget } from './kafka-handler.js';
import type { EventType, PipelineApi } from './kube/api.js';
import type { ReconcileOutcome } from './metrics.js';
import { findCondition } from './model/conditions.js';
import { desiredTopics, isPaused } from './model/desired.js';
import { clusterOf, topicOwners } from './model/ownership.js';
import { adopts, serversNotAllowed, wasManaged } from './model/safety.js';
import {
  type BlockReason,
  pausedStatus,
  pendingStatus,
  reconciledStatus,
  type TopicResult,
  verdict,
} from './model/status.js';
import {
  ADOPT_TOPICS_ANNOTATION,
  FINALIZER,
  keyOf,
  type Pipeline,
  type PipelineStatus,
} from './pipeline/types.js';

export interface ReconcilerOptions {
  api: PipelineApi;
  kafka: KafkaHandler;
  /** Kafka of Pipelines that name none (`BROKER_BOOTSTRAP_SERVERS`). */
  defaultServers: string[];
  /** The only servers a Pipeline may name (`CONTROLLER_ALLOWED_BOOTSTRAP`). */
  allowedServers: string[];
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
  /**
   * `pipeline|cluster|topic` of the topics this process set out to create: a topic created before
   * the status that records it could be written is still this controller's on the retry.
   */
  private readonly creating = new Set<string>();

  constructor(private readonly opts: ReconcilerOptions) {
    this.now = opts.now ?? (() => new Date());
  }

  async reconcile(pipeline: Pipeline, all: Pipeline[]): Promise<ReconcileResult> {
    if (pipeline.metadata.deletionTimestamp) return this.finalize(pipeline, all);
    let current = pipeline;
    // A finalizer only where deletion has work to do (Kubernetes API conventions): a Retain
    // Pipeline leaves at once, so `helm uninstall`, which stops this controller in the same pass,
    // never strands one (and with it its namespace).
    const finalizers = current.metadata.finalizers ?? [];
    const wanted = current.spec.deletionPolicy === 'Delete';
    if (wanted !== finalizers.includes(FINALIZER))
      current = await this.opts.api.setFinalizers(
        current,
        wanted ? [...finalizers, FINALIZER] : finalizers.filter((f) => f !== FINALIZER),
      );
    if (isPaused(current)) {
      await this.writeStatus(current, pausedStatus(current, this.now()));
      return { outcome: 'skipped', managed: 0 };
    }
    if (!findCondition(current.status?.conditions, 'Ready')) {
      current = await this.writeStatus(current, pendingStatus(current, this.now()));
    }
    const cluster = clusterOf(current, this.opts.defaultServers);
    const desired = desiredTopics(current, topicOwners(all, this.opts.defaultServers), cluster);
    const results = new Map<string, TopicResult>();
    const managed = (name: string) => this.managedBefore(current, cluster, name);
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
    block(
      desired.reserved,
      'ReservedTopicName',
      'names starting with __ are Kafka internal topics: never touched',
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
      try {
        await this.applyToKafka(current, cluster, desired, results);
      } catch (error) {
        failure = error;
        if (error instanceof KafkaAccessError) block(touched, 'KafkaAccessInvalid', error.message, 'Error');
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
    await this.announceProblems(current, topics);
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
  ): Promise<void> {
    const target: KafkaTarget = {
      servers: cluster.split(','),
      security: await pipelineSecurity(this.opts.api, pipeline),
    };
    const self = `${keyOf(pipeline.metadata)}|${cluster}|`;
    const { outcomes, states, notAdopted } = await this.opts.kafka.apply(
      target,
      desired.managed,
      desired.unmanaged,
      [...new Set(pipeline.spec.topics.flatMap((t) => Object.keys(t.config ?? {})))],
      {
        mayTakeOver: (name) => adopts(pipeline, name) || this.managedBefore(pipeline, cluster, name),
        creating: (names) => {
          for (const name of names) this.creating.add(self + name);
        },
      },
    );
    for (const name of desired.unmanaged) {
      const state = states.get(name);
      results.set(name, { name, phase: 'Unmanaged', ...(state ? { state } : {}) });
    }
    for (const name of notAdopted) {
      const state = states.get(name);
      results.set(name, {
        name,
        phase: 'Blocked',
        blocked: 'AdoptionRequired',
        ...(state ? { state } : {}),
        message: `exists in Kafka and was not created by this Pipeline: add it to the annotation ${ADOPT_TOPICS_ANNOTATION} to take it over`,
      });
    }
    for (const outcome of outcomes) {
      const state = states.get(outcome.name);
      results.set(outcome.name, {
        name: outcome.name,
        phase: outcome.refused.length > 0 ? 'Refused' : 'Ready',
        ...(state ? { state } : {}),
        refused: outcome.refused,
        managed: true,
        ...(outcome.refused.length > 0
          ? // The model's messages start with the topic name, which the status prints already.
            { message: outcome.refused.map((r) => r.message.replace(`${outcome.name}: `, '')).join('; ') }
          : {}),
      });
      await this.announceChanges(pipeline, outcome);
    }
  }

  /** Whether the controller manages `name` for `pipeline` already (status, or being created by this process). */
  private managedBefore(pipeline: Pipeline, cluster: string, name: string): boolean {
    return wasManaged(pipeline, name) || this.creating.has(`${keyOf(pipeline.metadata)}|${cluster}|${name}`);
  }

  /** Carries out the deletion policy, then lets the Pipeline go. */
  private async finalize(pipeline: Pipeline, all: Pipeline[]): Promise<ReconcileResult> {
    const finalizers = pipeline.metadata.finalizers ?? [];
    if (!finalizers.includes(FINALIZER)) return { outcome: 'skipped', managed: 0 };
    const cluster = clusterOf(pipeline, this.opts.defaultServers);
    const { managed } = desiredTopics(pipeline, topicOwners(all, this.opts.defaultServers), cluster);
    // Only topics it created or adopted, and never in a cluster outside the allowlist.
    const names = managed.map((s) => s.name).filter((name) => this.managedBefore(pipeline, cluster, name));
    const notAllowed = serversNotAllowed(cluster, this.opts.allowedServers);
    if (pipeline.spec.deletionPolicy === 'Delete' && !isPaused(pipeline) && notAllowed.length === 0) {
      const target = {
        servers: cluster.split(','),
        security: await pipelineSecurity(this.opts.api, pipeline),
      };
      const deleted = await this.opts.kafka.delete(target, names);
      if (deleted.length > 0)
        await this.event(pipeline, 'Normal', 'TopicDeleted', `deleted ${deleted.join(', ')}`);
    } else if (names.length > 0) {
      const why = isPaused(pipeline)
        ? 'reconciliation is paused'
        : notAllowed.length > 0
          ? 'the cluster is not in CONTROLLER_ALLOWED_BOOTSTRAP'
          : 'deletionPolicy is Retain';
      await this.event(pipeline, 'Normal', 'TopicsRetained', `kept ${names.join(', ')}: ${why}`);
    }
    await this.opts.api.setFinalizers(
      pipeline,
      finalizers.filter((f) => f !== FINALIZER),
    );
    this.opts.log.info(
      { pipeline: keyOf(pipeline.metadata), policy: pipeline.spec.deletionPolicy },
      'finalized',
    );
    return { outcome: 'success', managed: 0 };
  }

  private async announceChanges(pipeline: Pipeline, outcome: TopicOutcome): Promise<void> {
    const { name } = outcome;
    if (outcome.action === 'created') {
      await this.event(
        pipeline,
        'Normal',
        'TopicCreated',
        `created ${name} with ${outcome.partitions} partitions`,
      );
      return;
    }
    if (outcome.partitionsBefore !== undefined && outcome.partitions > outcome.partitionsBefore) {
      await this.event(
        pipeline,
        'Normal',
        'PartitionsIncreased',
        `${name}: partitions ${outcome.partitionsBefore} -> ${outcome.partitions}`,
      );
    }
    if (outcome.changedConfigs.length > 0) {
      await this.event(
        pipeline,
        'Normal',
        'ConfigsUpdated',
        `${name}: set ${outcome.changedConfigs.join(', ')}`,
      );
    }
  }

  /** A Warning when the reason Ready is False changes (not on every retry of the same failure). */
  private async announceProblems(pipeline: Pipeline, topics: TopicResult[]): Promise<void> {
    const v = verdict(topics);
    const before = findCondition(pipeline.status?.conditions, 'Ready');
    if (v.ready || (before?.status === 'False' && before.message === v.message)) return;
    const reason =
      v.reason === 'KafkaError'
        ? 'ReconcileFailed'
        : v.reason === 'TopicConflict'
          ? 'TopicConflict'
          : 'ChangeRefused';
    await this.event(pipeline, 'Warning', reason, v.message);
  }

  private async event(pipeline: Pipeline, type: EventType, reason: string, message: string): Promise<void> {
    this.opts.log.info({ pipeline: keyOf(pipeline.metadata), type, reason, message }, 'event');
    await this.opts.api.event(pipeline, type, reason, message).catch((error: Error) => {
      // An Event is information: failing to record one never fails the reconcile.
      this.opts.log.warn({ err: error.message, reason }, 'recording an event failed');
    });
  }

  /** Writes `status` unless it is what the Pipeline has; returns the Pipeline as it now is. */
  private async writeStatus(pipeline: Pipeline, status: PipelineStatus): Promise<Pipeline> {
    if (canonical(status) === canonical(pipeline.status ?? {})) return pipeline;
    return this.opts.api.patchStatus(pipeline, status);
  }
}

/** The result with only the configs its topic declares (Kafka was read for every declared key). */
function onlyDeclaredConfigs(result: TopicResult, keys: string[]): TopicResult {
  if (!result.state) return result;
  const configs = Object.fromEntries(Object.entries(result.state.configs).filter(([k]) => keys.includes(k)));
  return { ...result, state: { ...result.state, configs } };
}

/** JSON with object keys sorted, so equal values compare equal whatever order the API server used. */
function canonical(value: unknown): string {
  return JSON.stringify(value, (_key, v: unknown) =>
    v && typeof v === 'object' && !Array.isArray(v)
      ? Object.fromEntries(Object.entries(v).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))
      : v,
  );
}
