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
import { findCondition, setCondition } from './model/conditions.js';
import { desiredTopics, isPaused } from './model/desired.js';
import { FLOW_CONDITIONS, type FlowObservation } from './model/flow.js';
import { withKafkaNames } from './model/naming.js';
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
  type Condition,
  FINALIZER,
  type FlowStatus,
  FORCE_DELETE_ANNOTATION,
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
  /** `CONTROLLER_TOPIC_NAME_TEMPLATE`; default `{name}` (names as given). */
  topicNameTemplate?: string;
  /** `CONTROLLER_IGNORED_CONFIGS`: topic config keys never set or reset. */
  ignoredConfigs?: string[];
  /** `CONTROLLER_DELETION_TIMEOUT`: how long a failing deletion holds the Pipeline. */
  deletionTimeoutMs?: number;
  /** The last flow observation of a Pipeline (the flow observer), written with every status. */
  flow?: { observation(key: string): FlowObservation | undefined };
  /** Told of each status write (the controller_status_writes_total meter). */
  onStatusWrite?: (cause: 'reconcile' | 'flow') => void;
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

  /** The Pipeline with its topics under their Kafka names (the topic-name rule). */
  resolve(pipeline: Pipeline): Pipeline {
    return withKafkaNames(pipeline, this.opts.topicNameTemplate ?? '{name}');
  }

  /** `pipeline` and `all` as the API server has them (declared names). */
  async reconcile(declared: Pipeline, others: Pipeline[]): Promise<ReconcileResult> {
    const pipeline = this.resolve(declared);
    const all = others.map((p) => this.resolve(p));
    if (pipeline.metadata.deletionTimestamp) return this.finalize(pipeline, all);
    let current = pipeline;
    // A finalizer only where deletion has work to do (Kubernetes API conventions): a Retain
    // Pipeline leaves at once, so `helm uninstall`, which stops this controller in the same pass,
    // never strands one (and with it its namespace).
    const finalizers = current.metadata.finalizers ?? [];
    const wanted = current.spec.deletionPolicy === 'Delete';
    if (wanted !== finalizers.includes(FINALIZER))
      current = this.resolve(
        await this.opts.api.setFinalizers(
          current,
          wanted ? [...finalizers, FINALIZER] : finalizers.filter((f) => f !== FINALIZER),
        ),
      );
    if (isPaused(current)) {
      await this.writeStatus(current, pausedStatus(current, this.now()));
      return { outcome: 'skipped', managed: 0 };
    }
    if (!findCondition(current.status?.conditions, 'Ready')) {
      current = this.resolve(await this.writeStatus(current, pendingStatus(current, this.now())));
    }
    const cluster = clusterOf(current, this.opts.defaultServers);
    const desired = desiredTopics(
      current,
      topicOwners(all, this.opts.defaultServers),
      cluster,
      this.opts.ignoredConfigs,
    );
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
    const ours = managed.map((s) => s.name).filter((name) => this.managedBefore(pipeline, cluster, name));
    // A topic another Pipeline declares too stays: it takes the topic over when this one is gone.
    const claimed = claimants(pipeline, all, cluster, this.opts.defaultServers);
    const names = ours.filter((name) => !claimed.has(name));
    const kept = ours.filter((name) => claimed.has(name));
    if (kept.length > 0)
      await this.event(
        pipeline,
        'Normal',
        'TopicsRetained',
        `kept ${kept.map((name) => `${name} (claimed by ${claimed.get(name)})`).join(', ')}`,
      );
    const notAllowed = serversNotAllowed(cluster, this.opts.allowedServers);
    if (pipeline.spec.deletionPolicy === 'Delete' && !isPaused(pipeline) && notAllowed.length === 0) {
      if (names.length > 0) await this.deleteOrGiveUp(pipeline, cluster, names);
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

  /**
   * Deletes `names`, or gives up (the finalizer may go either way); throws to be retried. Gives up at once under
   * the force-delete annotation, or once a failure comes after `deletionTimeoutMs` since the
   * deletion was asked for; a Warning Event then names what was left in Kafka.
   */
  private async deleteOrGiveUp(pipeline: Pipeline, cluster: string, names: string[]): Promise<void> {
    const left = (why: string) =>
      this.event(
        pipeline,
        'Warning',
        'TopicsLeftBehind',
        `${why}: left ${names.join(', ')} in Kafka ${cluster}`,
      );
    if (pipeline.metadata.annotations?.[FORCE_DELETE_ANNOTATION]?.trim().toLowerCase() === 'true') {
      await left(`${FORCE_DELETE_ANNOTATION} is "true"`);
      return;
    }
    try {
      const target = {
        servers: cluster.split(','),
        security: await pipelineSecurity(this.opts.api, pipeline),
      };
      const deleted = await this.opts.kafka.delete(target, names);
      if (deleted.length > 0)
        await this.event(pipeline, 'Normal', 'TopicDeleted', `deleted ${deleted.join(', ')}`);
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
    await this.writeStatus(pipeline, pipeline.status ?? {}, { ifUnchanged: true });
  }

  /** `status` with the last flow observation: `flow` and the flow conditions. */
  private withFlow(pipeline: Pipeline, status: PipelineStatus): PipelineStatus {
    const isFlow = (type: string) => (FLOW_CONDITIONS as readonly string[]).includes(type);
    if (!pipeline.spec.flow) {
      // No longer observed: the flow and its conditions go (null deletes a field in a merge patch).
      if (!pipeline.status?.flow) return status;
      return { ...status, flow: null, conditions: (status.conditions ?? []).filter((c) => !isFlow(c.type)) };
    }
    const observation = this.opts.flow?.observation(keyOf(pipeline.metadata));
    if (!observation) return status;
    const now = this.now();
    let conditions = (status.conditions ?? []).filter(
      (c) => !isFlow(c.type) || observation.conditions.some((o) => o.type === c.type),
    );
    for (const c of observation.conditions)
      conditions = setCondition(conditions, { ...c, observedGeneration: pipeline.metadata.generation }, now);
    // A merge patch keeps what it does not name: a reading's absent field (a message gone, a lag
    // no longer known) is written as null, which removes it.
    const cleared = Object.fromEntries(FLOW_OPTIONAL.map((k) => [k, null]));
    return { ...status, flow: { ...cleared, ...observation.flow } as FlowStatus, conditions };
  }

  /** An Event when a flow condition turns True or False. */
  private async announceFlow(pipeline: Pipeline, before: Condition[], after: Condition[]): Promise<void> {
    for (const c of after) {
      if (!(FLOW_CONDITIONS as readonly string[]).includes(c.type) || c.status === 'Unknown') continue;
      const old = before.find((b) => b.type === c.type);
      if (old?.status === c.status) continue;
      const bad = (c.type === 'Flowing') === (c.status === 'False');
      if (!old && !bad) continue; // a healthy first reading is no news
      await this.event(
        pipeline,
        bad ? 'Warning' : 'Normal',
        FLOW_EVENT[c.type]?.[c.status] ?? c.reason,
        c.message,
      );
    }
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

  /**
   * Writes `status` with the last flow observation unless it is what the Pipeline has; returns
   * the Pipeline as it now is. Events for flow conditions that changed.
   */
  private async writeStatus(
    pipeline: Pipeline,
    computed: PipelineStatus,
    options: { ifUnchanged?: boolean } = {},
  ): Promise<Pipeline> {
    const status = this.withFlow(pipeline, computed);
    if (canonical(status) === canonical(pipeline.status ?? {})) return pipeline;
    const written = await this.opts.api.patchStatus(pipeline, status, options);
    this.opts.onStatusWrite?.(options.ifUnchanged ? 'flow' : 'reconcile');
    await this.announceFlow(pipeline, pipeline.status?.conditions ?? [], status.conditions ?? []);
    return written;
  }
}

/** The fields of `status.flow` a reading may leave out. */
const FLOW_OPTIONAL = ['lag', 'partitions', 'deadLetters', 'deadLettersPerMinute', 'lastStoredAt', 'message'];

/** Event reasons of flow condition changes, by type and new status. */
const FLOW_EVENT: Record<string, Record<string, string>> = {
  Flowing: { True: 'FlowResumed', False: 'FlowStopped' },
  Lagging: { True: 'Lagging', False: 'LagRecovered' },
  DeadLettering: { True: 'DeadLettering', False: 'DeadLetteringStopped' },
};

/** Topics of `pipeline` other Pipelines of the same cluster declare: name -> `namespace/name` of one. */
function claimants(
  pipeline: Pipeline,
  all: Pipeline[],
  cluster: string,
  defaultServers: string[],
): Map<string, string> {
  const self = keyOf(pipeline.metadata);
  const claimed = new Map<string, string>();
  for (const other of all) {
    if (keyOf(other.metadata) === self || clusterOf(other, defaultServers) !== cluster) continue;
    for (const t of other.spec.topics) if (!claimed.has(t.name)) claimed.set(t.name, keyOf(other.metadata));
  }
  return claimed;
}

/** The result with only the configs its topic declares (Kafka was read for every declared key). */
function onlyDeclaredConfigs(result: TopicResult, keys: string[]): TopicResult {
  if (!result.state) return result;
  const configs = Object.fromEntries(Object.entries(result.state.configs).filter(([k]) => keys.includes(k)));
  return { ...result, state: { ...result.state, configs } };
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
