/**
 * The status a reconcile writes, computed from what it found: each topic's phase and state in
 * Kafka, then the conditions (`Ready`, `Stalled`, `Conflict`, `ReconciliationPaused`) per the API
 * conventions.
 */
import type { TopicOutcome, TopicRefusal, TopicState } from '@event-observatory/broker';
import {
  ADOPT_TOPICS_ANNOTATION,
  type Condition,
  PAUSE_ANNOTATION,
  type Pipeline,
  type PipelineStatus,
  type TopicPhase,
  type TopicStatus,
} from '../pipeline/types.js';
import { type ConditionInput, removeCondition, setCondition } from './conditions.js';

/** One declared topic after a reconcile. */
export interface TopicResult {
  name: string;
  phase: TopicPhase;
  /** The topic in Kafka, when it was read. */
  state?: TopicState;
  refused?: TopicRefusal[];
  /** Why a `Blocked` topic was not touched (a `Ready` reason). */
  blocked?: BlockReason;
  message?: string;
  /** The controller may change the topic without the adopt annotation (TopicStatus.managed). */
  managed?: boolean;
}

/** The safe defaults that leave a topic untouched, as `Ready=False` reasons. */
export type BlockReason =
  | 'ClusterNotAllowed'
  | 'KafkaAccessInvalid'
  | 'CredentialsNotLabelled'
  | 'ReservedTopicName'
  | 'AdoptionRequired';
/** The first `KAFKA_UNTOUCHED` of them kept Kafka from being reached at all. */
const BLOCK_ORDER: BlockReason[] = [
  'ClusterNotAllowed',
  'KafkaAccessInvalid',
  'CredentialsNotLabelled',
  'ReservedTopicName',
  'AdoptionRequired',
];
const KAFKA_UNTOUCHED = 3;

/** `Ready=False` reasons, the first that applies wins. */
const NOT_READY: Array<{ reason: string; applies: (t: TopicResult) => boolean }> = [
  ...BLOCK_ORDER.slice(0, KAFKA_UNTOUCHED).map((reason) => ({
    reason,
    applies: (t: TopicResult) => t.blocked === reason,
  })),
  { reason: 'KafkaError', applies: (t) => t.phase === 'Error' },
  {
    reason: 'PartitionDecreaseRefused',
    applies: (t) => t.refused?.some((r) => r.kind === 'cannot-decrease-partitions') ?? false,
  },
  {
    reason: 'ReplicationFactorChangeRefused',
    applies: (t) => t.refused?.some((r) => r.kind === 'cannot-change-replication-factor') ?? false,
  },
  ...BLOCK_ORDER.slice(KAFKA_UNTOUCHED).map((reason) => ({
    reason,
    applies: (t: TopicResult) => t.blocked === reason,
  })),
  { reason: 'TopicConflict', applies: (t) => t.phase === 'Conflict' },
];

export interface Verdict {
  ready: boolean;
  reason: string;
  message: string;
}

/**
 * Not ready for a reason no retry can mend (every one but a Kafka error): someone must change the
 * spec, the annotations, a Secret or the controller's rules. Written as `Stalled=True`, the
 * condition kstatus reads as Failed (Helm 4's `--wait`, Flux, Argo CD), so an install stops
 * waiting on the Pipeline and names the reason instead of timing out.
 */
export function stalled(v: Verdict): boolean {
  return !v.ready && v.reason !== 'KafkaError';
}

/** Ready when no topic is in Error, Refused, Blocked or Conflict (an unmanaged topic does not count). */
export function verdict(topics: TopicResult[]): Verdict {
  const problems = topics.filter((t) => t.phase !== 'Ready' && t.phase !== 'Unmanaged');
  if (problems.length === 0) {
    const n = topics.filter((t) => t.phase === 'Ready').length;
    return { ready: true, reason: 'Reconciled', message: `${n} topic(s) match the spec` };
  }
  const reason = NOT_READY.find((r) => problems.some(r.applies))?.reason ?? 'KafkaError';
  return {
    ready: false,
    reason,
    message: problems.map((t) => `${t.name}: ${t.message ?? t.phase}`).join('; '),
  };
}

function topicStatus(t: TopicResult): TopicStatus {
  return {
    name: t.name,
    phase: t.phase,
    ...(t.state
      ? {
          partitions: t.state.partitions,
          replicationFactor: t.state.replicationFactor,
          config: t.state.configs,
        }
      : {}),
    ...(t.message ? { message: t.message } : {}),
    managed: t.managed ?? false,
  };
}

/**
 * The results of applying to Kafka: the `unmanaged` topics as read, those it could not take over
 * (`notAdopted`) blocked, and the applied ones `Ready` or `Refused`, each with its `states` entry.
 * `whyNotAdopted` may say more than "add the annotation" about a blocked one.
 */
export function appliedResults(
  unmanaged: string[],
  notAdopted: string[],
  outcomes: TopicOutcome[],
  states: ReadonlyMap<string, TopicState>,
  whyNotAdopted: (name: string) => string | undefined = () => undefined,
): TopicResult[] {
  const withState = (name: string) => {
    const state = states.get(name);
    return state ? { state } : {};
  };
  return [
    ...unmanaged.map((name): TopicResult => ({ name, phase: 'Unmanaged', ...withState(name) })),
    ...notAdopted.map(
      (name): TopicResult => ({
        name,
        phase: 'Blocked',
        blocked: 'AdoptionRequired',
        ...withState(name),
        message:
          whyNotAdopted(name) ??
          `exists in Kafka and was not created by this Pipeline: add it to the annotation ${ADOPT_TOPICS_ANNOTATION} to take it over`,
      }),
    ),
    ...outcomes.map(
      ({ name, refused }): TopicResult => ({
        name,
        phase: refused.length > 0 ? 'Refused' : 'Ready',
        ...withState(name),
        refused,
        managed: true,
        ...(refused.length > 0
          ? // The model's messages start with the topic name, which the status prints already.
            { message: refused.map((r) => r.message.replace(`${name}: `, '')).join('; ') }
          : {}),
      }),
    ),
  ];
}

/**
 * The status that records `names` as this Pipeline's before they are created: written first, so a
 * crash between the creation and the reconcile's status leaves them recognised as its own.
 */
export function creatingStatus(pipeline: Pipeline, names: string[]): PipelineStatus {
  const others = (pipeline.status?.topics ?? []).filter((t) => !names.includes(t.name));
  const creating = names.map(
    (name): TopicStatus => ({ name, phase: 'Creating', message: 'being created', managed: true }),
  );
  return { topics: [...others, ...creating] };
}

export /** The result with only the configs its topic declares (Kafka was read for every declared key). */
function onlyDeclaredConfigs(result: TopicResult, keys: string[]): TopicResult {
  if (!result.state) return result;
  const configs = Object.fromEntries(Object.entries(result.state.configs).filter(([k]) => keys.includes(k)));
  return { ...result, state: { ...result.state, configs } };
}

/** The status after a reconcile of `pipeline` that found `topics`. */
export function reconciledStatus(pipeline: Pipeline, topics: TopicResult[], now: Date): PipelineStatus {
  const generation = pipeline.metadata.generation;
  const v = verdict(topics);
  const conflicts = topics.filter((t) => t.phase === 'Conflict');
  let conditions: Condition[] = removeCondition(pipeline.status?.conditions ?? [], 'ReconciliationPaused');
  conditions = setCondition(
    conditions,
    {
      type: 'Ready',
      status: v.ready ? 'True' : 'False',
      reason: v.reason,
      message: v.message,
      observedGeneration: generation,
    },
    now,
  );
  conditions = setCondition(
    conditions,
    stalled(v)
      ? {
          type: 'Stalled',
          status: 'True',
          reason: v.reason,
          message: v.message,
          observedGeneration: generation,
        }
      : {
          type: 'Stalled',
          status: 'False',
          reason: v.ready ? 'Reconciled' : 'Retrying',
          message: '',
          observedGeneration: generation,
        },
    now,
  );
  conditions = setCondition(
    conditions,
    conflicts.length > 0
      ? {
          type: 'Conflict',
          status: 'True',
          reason: 'TopicClaimedByOlderPipeline',
          message: conflicts.map((t) => `${t.name}: ${t.message}`).join('; '),
          observedGeneration: generation,
        }
      : {
          type: 'Conflict',
          status: 'False',
          reason: 'NoConflict',
          message: '',
          observedGeneration: generation,
        },
    now,
  );
  return {
    observedGeneration: generation,
    conditions,
    topics: topics.map(topicStatus),
    topicsReady: `${topics.filter((t) => t.phase === 'Ready').length}/${topics.length}`,
  };
}

/** The Pipeline's status as it is, with one more condition (for its current generation). */
function withCondition(pipeline: Pipeline, condition: Omit<ConditionInput, 'observedGeneration'>, now: Date) {
  const next = { ...condition, observedGeneration: pipeline.metadata.generation };
  return { ...pipeline.status, conditions: setCondition(pipeline.status?.conditions ?? [], next, now) };
}

/** The first status of a Pipeline: `Ready=Unknown` until its first reconcile ends. */
export function pendingStatus(pipeline: Pipeline, now: Date): PipelineStatus {
  const pending = {
    type: 'Ready',
    status: 'Unknown',
    reason: 'Pending',
    message: 'not reconciled yet',
  } as const;
  return withCondition(pipeline, pending, now);
}

/** The status of a paused Pipeline: what it was, plus `ReconciliationPaused=True`. */
export function pausedStatus(pipeline: Pipeline, now: Date): PipelineStatus {
  const message = `${PAUSE_ANNOTATION} is "true": Kafka is not changed`;
  return withCondition(
    pipeline,
    { type: 'ReconciliationPaused', status: 'True', reason: 'PauseAnnotation', message },
    now,
  );
}
