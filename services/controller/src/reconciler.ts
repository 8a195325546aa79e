/**
 * One reconcile of one Pipeline, level-based: from the Pipeline as cached and every other
 * Pipeline (for ownership), make Kafka match, then write what was found to `status` and tell
 * people through Events. Throws when Kafka or the API server failed, so the queue retries with
 * backoff; the status says so first. It decides, with the plain values of `model/`; the Kafka
 * handler and the Kubernetes handler carry out the calls.
 */

import type { Logger } from '@event-observatory/service-kit/logger';
import { KafkaAccessError } from './kafka-access.js';
import type { Adoption, KafkaHandler, KafkaTarget } from './kafka-handler.js';
import type { PipelineApi } from './kube/api.js';
import { KubeHandler, type StatusWriteCause } from './kube-handler.js';
import type { ReconcileOutcome } from './metrics.js';
import { type ClusterRules, clusterOf, clusterRefusal, clusterRules, serversOf } from './model/cluster.js';
import { findCondition } from './model/conditions.js';
import { desiredTopics, isPaused } from './model/desired.js';
import { flowEvents, problemEvent, topicChangeEvents } from './model/events.js';
import { type FlowObservation, withFlowObservation } from './model/flow.js';
import { releaseNamespaceFirst, withKafkaNames } from './model/naming.js';
import { claimants, controlOf, refusedClaim, topicOwners } from './model/ownership.js';
import {
  adopts,
  lastRecord,
  mayTakeOver,
  type RecordScope,
  recordIn,
  recordsFor,
  reservedBy,
  type TopicRecord,
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
  /** The clusters a Pipeline may name (`CONTROLLER_ALLOWED_BOOTSTRAP`, `;` between them), each a list of servers. */
  allowedClusters: string[][];
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
  /**
   * `CONTROLLER_DELETION_TIMEOUT`: how long after its deletion was asked for a failing deletion
   * holds the Pipeline; it is let go at that deadline.
   */
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

/**
 * A deletion of topics that failed before the Pipeline's deadline: retried no later than
 * `retryWithinMs` from now (the controller caps its backoff there), and let go at the deadline.
 */
export class DeletionRetry extends Error {
  constructor(
    failure: Error,
    readonly retryWithinMs: number,
  ) {
    super(failure.message, { cause: failure });
  }
}

/**
 * How soon a finalizer removal refused with 409 (a stale cached object) is tried again: only the
 * patch is left to do, and the backoff grown by failed deletions must not hold the Pipeline on.
 */
const FINALIZER_CONFLICT_RETRY_MS = 250;

/** The deletion was still under way at the Pipeline's deadline. */
class DeadlinePassed extends Error {}

/** `work`, or a `DeadlinePassed` after `ms` (the work goes on unheeded; its outcome is then ignored). */
async function within<T>(work: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new DeadlinePassed('no answer from Kafka before the deadline')), ms);
  });
  try {
    return await Promise.race([work, deadline]);
  } finally {
    clearTimeout(timer);
  }
}

export class Reconciler {
  private readonly now: () => Date;
  private readonly kube: KubeHandler;
  /** How clusters are told apart: the default servers and the allowlist's clusters. */
  readonly clusters: ClusterRules;
  /**
   * Pipelines whose topic deletion failed, by key: the last failure, and whether it was given up
   * (the Event sent; only the finalizer is left to remove, e.g. after a 409).
   */
  private readonly deletionFailures = new Map<string, { why: string; givenUp: boolean }>();
  /**
   * Pipelines (uids) let go, until the informer sees them gone: a cache behind the API server still
   * shows the finalizer, and a deletion must not be carried out twice (a finalizer is never added
   * back to an object being deleted).
   */
  private readonly letGo = new Set<string>();

  constructor(private readonly opts: ReconcilerOptions) {
    this.now = opts.now ?? (() => new Date());
    this.kube = new KubeHandler({ api: opts.api, onStatusWrite: opts.onStatusWrite, log: opts.log });
    this.clusters = clusterRules(opts.defaultServers, opts.allowedClusters);
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

  /**
   * The release namespace when it comes first (the default topic-name rule, where it maps `{name}`
   * and the others `{namespace}.{name}`): its Pipelines own the topics they declare whatever their
   * age, and another namespace's Pipeline mapping to one of them is refused.
   */
  private get home(): string | undefined {
    return releaseNamespaceFirst(this.opts.topicNameTemplate, this.opts.ownNamespace);
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
    const servers = serversOf(current, this.clusters.defaultServers);
    const cluster = clusterOf(current, this.clusters);
    const refusal = clusterRefusal(servers, this.clusters.allowed);
    const scope: RecordScope = { cluster, allowed: this.clusters.allowed };
    const desired = desiredTopics(
      current,
      topicOwners(all, this.clusters, this.home),
      cluster,
      this.isReserved,
      this.opts.ignoredConfigs,
    );
    const results = new Map<string, TopicResult>();
    // What a topic's result keeps of the last status: its record for this cluster; all of it when
    // Kafka is not reached (the status then goes on naming the cluster those records are for).
    const kept = (name: string): TopicRecord =>
      refusal ? lastRecord(current, name) : recordIn(current, name, scope);
    const block = (
      names: string[],
      blocked: BlockReason,
      message: string,
      phase: 'Blocked' | 'Error' = 'Blocked',
      record: (name: string) => TopicRecord = kept,
    ) => {
      for (const name of names) results.set(name, { name, phase, blocked, message, ...record(name) });
    };
    for (const { name, owner } of desired.conflicts) {
      const holder = all.find((p) => keyOf(p.metadata) === owner);
      if (holder && refusedClaim(current, holder, this.home)) {
        // Kafka untouched for it; a record of its own stays, for when no release Pipeline declares it.
        block(
          [name],
          'TopicNameCollision',
          `maps to a topic of the release namespace ${this.home} (${owner} declares it), which a Pipeline of another namespace never gets: rename it`,
        );
        continue;
      }
      // Never managed here. Handed over when the holder lets it go, if the holder manages it in
      // this cluster, so a hand-over never adopts what the older one had not.
      const handOver = !refusal && holder !== undefined && wasManaged(holder, name, scope);
      results.set(name, {
        name,
        phase: 'Conflict',
        message: `managed by the older Pipeline ${owner}`,
        managed: false,
        ...(handOver ? { handOverFrom: owner } : {}),
      });
    }
    for (const name of desired.reserved)
      block(
        [name],
        'ReservedTopicName',
        `reserved (${reservedBy(this.rules, name)}: Kafka's own topics, or CONTROLLER_RESERVED_TOPICS): never touched`,
      );
    const touched = [...desired.managed.map((s) => s.name), ...desired.unmanaged];
    let failure: unknown;
    if (refusal) {
      block(touched, 'ClusterNotAllowed', `${refusal}: Kafka not touched`);
    } else {
      // Topics about to be created are recorded as this Pipeline's first (status.topics[].managed),
      // so a crash before the status below leaves them recognised, not AdoptionRequired.
      const recordCreating = async (names: string[]) => {
        const status = creatingStatus(current, names, cluster, recordsFor(current, scope));
        const written = await this.kube.writeStatus(current, status, 'reconcile');
        if (written) current = this.resolve(written);
      };
      // Recorded as being created, and found absent after a failure: never created, not ours.
      const notCreated = new Set<string>();
      try {
        // Judged by what was recorded before this reconcile, never by its own `Creating` record.
        const before = current;
        const takeOver = (name: string) =>
          mayTakeOver(this.rules, before, name, scope) || this.refusedManager(before, name, all, scope);
        await this.applyToKafka(current, servers, desired, results, {
          mayTakeOver: takeOver,
          creating: recordCreating,
          notCreated: (names) => {
            for (const name of names) notCreated.add(name);
          },
        });
      } catch (error) {
        failure = error;
        const record = (name: string): TopicRecord =>
          notCreated.has(name) ? { managed: false } : kept(name);
        if (error instanceof KafkaAccessError) block(touched, error.reason, error.message, 'Error', record);
        else
          for (const name of touched)
            results.set(name, {
              name,
              phase: 'Error',
              message: `Kafka: ${(error as Error).message}`,
              ...record(name),
            });
      }
    }
    // In the order declared, so the status reads like the spec.
    const topics = current.spec.topics.flatMap((t) => {
      const result = results.get(t.name);
      return result ? [onlyDeclaredConfigs(result, Object.keys(t.config ?? {}))] : [];
    });
    const problem = problemEvent(findCondition(current.status?.conditions, 'Ready'), topics);
    await this.writeStatus(
      current,
      reconciledStatus(current, topics, this.now(), refusal ? undefined : cluster),
    );
    // Once the status it tells of is written: a status refused as stale (409) tells nobody.
    if (problem) await this.kube.event(current, problem);
    if (failure) throw failure;
    return { outcome: verdict(topics).ready ? 'success' : 'failure', managed: desired.managed.length };
  }

  /**
   * Whether a Pipeline of another namespace whose claim on `name` `pipeline` refuses (it is of the
   * release namespace) manages the topic in this cluster: created for it before the release
   * namespace declared the name. The release namespace wins whatever the order: it takes the
   * topic over.
   */
  private refusedManager(pipeline: Pipeline, name: string, all: Pipeline[], scope: RecordScope): boolean {
    return all.some(
      (p) =>
        refusedClaim(p, pipeline, this.home) &&
        p.spec.topics.some((t) => t.name === name) &&
        clusterOf(p, this.clusters) === scope.cluster &&
        wasManaged(p, name, scope),
    );
  }

  /** Makes Kafka match the managed topics; records each declared topic's result. */
  private async applyToKafka(
    pipeline: Pipeline,
    servers: string[],
    desired: ReturnType<typeof desiredTopics>,
    results: Map<string, TopicResult>,
    adoption: Adoption,
  ): Promise<void> {
    const { outcomes, states, notAdopted } = await this.opts.kafka.apply(
      await this.target(pipeline, servers),
      desired.managed,
      desired.unmanaged,
      [...new Set(pipeline.spec.topics.flatMap((t) => Object.keys(t.config ?? {})))],
      adoption,
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
    const { uid } = pipeline.metadata;
    if (!pipeline.metadata.finalizers?.includes(FINALIZER) || (uid && this.letGo.has(uid)))
      return { outcome: 'skipped', managed: 0 };
    const servers = serversOf(pipeline, this.clusters.defaultServers);
    const cluster = clusterOf(pipeline, this.clusters);
    const refusal = clusterRefusal(servers, this.clusters.allowed);
    const scope: RecordScope = { cluster, allowed: this.clusters.allowed };
    const { managed } = desiredTopics(
      pipeline,
      topicOwners(all, this.clusters, this.home),
      cluster,
      this.isReserved,
    );
    // Only topics it created or adopted in this cluster, and never in a cluster outside the
    // allowlist (those are only named in the Event below, as recorded).
    const ours = managed
      .map((s) => s.name)
      .filter((name) => (refusal ? lastRecord(pipeline, name).managed : wasManaged(pipeline, name, scope)));
    // A topic another Pipeline declares too stays: it takes the topic over when this one is gone.
    const claimed = claimants(pipeline, all, cluster, this.clusters, this.home);
    const names = ours.filter((name) => !claimed.has(name));
    const kept = ours.filter((name) => claimed.has(name));
    if (kept.length > 0)
      await this.kube.event(pipeline, {
        type: 'Normal',
        reason: 'TopicsRetained',
        message: `kept ${kept.map((name) => `${name} (claimed by ${claimed.get(name)})`).join(', ')}`,
      });
    if (pipeline.spec.deletionPolicy === 'Delete' && !isPaused(pipeline) && !refusal) {
      if (names.length > 0) await this.deleteOrGiveUp(pipeline, servers, names);
    } else if (names.length > 0) {
      const why = isPaused(pipeline)
        ? 'reconciliation is paused'
        : refusal
          ? 'the cluster is not in CONTROLLER_ALLOWED_BOOTSTRAP'
          : 'deletionPolicy is Retain';
      await this.kube.event(pipeline, {
        type: 'Normal',
        reason: 'TopicsRetained',
        message: `kept ${names.join(', ')}: ${why}`,
      });
    }
    await this.kube.setFinalizer(pipeline, false).catch((error: unknown) => {
      if ((error as { code?: unknown }).code !== 409) throw error;
      throw new DeletionRetry(error as Error, FINALIZER_CONFLICT_RETRY_MS);
    });
    this.deletionFailures.delete(keyOf(pipeline.metadata));
    if (uid) this.letGo.add(uid);
    this.opts.log.info(
      { pipeline: keyOf(pipeline.metadata), policy: pipeline.spec.deletionPolicy },
      'finalized',
    );
    return { outcome: 'success', managed: 0 };
  }

  /**
   * Deletes `names`, or gives up (the finalizer may go either way); throws `DeletionRetry` to be
   * retried. Gives up at once under the force-delete annotation, and at the deadline,
   * `deletionTimeoutMs` after the deletion was asked for: an attempt still under way then is no
   * longer waited for, and a failure before it is retried no later than the deadline, which then
   * gives up without another attempt. (A controller that never tried, e.g. one that started
   * after the deadline, tries once, waited for no longer than the bound itself.) A Warning Event
   * then names what was left in Kafka.
   */
  private async deleteOrGiveUp(pipeline: Pipeline, servers: string[], names: string[]): Promise<void> {
    const key = keyOf(pipeline.metadata);
    const left = (why: string) =>
      this.kube.event(pipeline, {
        type: 'Warning',
        reason: 'TopicsLeftBehind',
        message: `${why}: left ${names.join(', ')} in Kafka ${servers.join(',')}`,
      });
    if (pipeline.metadata.annotations?.[FORCE_DELETE_ANNOTATION]?.trim().toLowerCase() === 'true') {
      await left(`${FORCE_DELETE_ANNOTATION} is "true"`);
      return;
    }
    const bound = this.opts.deletionTimeoutMs ?? 300_000;
    const since = Date.parse(pipeline.metadata.deletionTimestamp ?? '') || this.now().getTime();
    const deadline = since + bound;
    const giveUp = async (why: string) => {
      this.deletionFailures.set(key, { why, givenUp: true });
      await left(`deletion failed for ${Math.round(bound / 1000)} s (${why})`);
    };
    const before = this.deletionFailures.get(key);
    if (before?.givenUp) return;
    if (before !== undefined && this.now().getTime() >= deadline) {
      await giveUp(before.why);
      return;
    }
    try {
      const deleting = this.opts.kafka.delete(await this.target(pipeline, servers), names);
      const remaining = deadline - this.now().getTime();
      const deleted = await within(deleting, remaining > 0 ? remaining : bound);
      this.deletionFailures.delete(key);
      if (deleted.length > 0)
        await this.kube.event(pipeline, {
          type: 'Normal',
          reason: 'TopicDeleted',
          message: `deleted ${deleted.join(', ')}`,
        });
    } catch (error) {
      const why = (error as Error).message;
      const remaining = deadline - this.now().getTime();
      if (error instanceof DeadlinePassed || remaining <= 0) {
        await giveUp(why);
        return;
      }
      this.deletionFailures.set(key, { why, givenUp: false });
      throw new DeletionRetry(error as Error, remaining);
    }
  }

  /** The informer saw `pipeline` gone: nothing is kept of it. */
  forget(pipeline: Pipeline): void {
    if (pipeline.metadata.uid) this.letGo.delete(pipeline.metadata.uid);
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

  /** Where `pipeline`'s topics live (the servers it names) and the security to reach them. */
  private async target(pipeline: Pipeline, servers: string[]): Promise<KafkaTarget> {
    return { servers, security: await this.kube.kafkaSecurity(pipeline) };
  }
}
