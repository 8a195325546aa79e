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
  /** The older Pipeline that hands the topic over when it lets it go (TopicStatus.handOverFrom). */
  handOverFrom?: string;
}

/** The safe defaults that leave a topic untouched, as `Ready=False` reasons. */
export type BlockReason =
  | 'ClusterNotAllowed'
  | 'KafkaAccessInvalid'
  | 'CredentialsNotLabelled'
  | 'ReservedTopicName'
  | 'TopicNameCollision'
  | 'AdoptionRequired';
/** The first `KAFKA_UNTOUCHED` of them kept Kafka from being reached at all. */
const BLOCK_ORDER: BlockReason[] = [
  'ClusterNotAllowed',
  'KafkaAccessInvalid',
  'CredentialsNotLabelled',
  'ReservedTopicName',
  'TopicNameCollision',
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

/**
 * The longest condition message written. The CRD allows 32768 characters; a Pipeline of 100
 * topics with long names and Kafka's messages can exceed that, and then every status write would
 * fail (422) for good. Each topic's own message stays whole in `status.topics`.
 */
export const CONDITION_MESSAGE_LIMIT = 4096;

/**
 * `parts` joined by "; ", at most `limit` characters: cut after the last part that fits, with an
 * ellipsis and how many were left out (a first part longer than that is cut itself).
 */
export function boundedMessage(parts: string[], limit = CONDITION_MESSAGE_LIMIT): string {
  const whole = parts.join('; ');
  if (whole.length <= limit) return whole;
  const rest = (left: number) => `; … ${left} more in status.topics`;
  let length = 0;
  let kept = 0;
  for (const part of parts) {
    const next = length + (kept > 0 ? 2 : 0) + part.length;
    if (next + rest(parts.length - kept - 1).length > limit) break;
    length = next;
    kept++;
  }
  if (kept > 0) return parts.slice(0, kept).join('; ') + rest(parts.length - kept);
  // Not even the first part fits: its beginning (whole code points), an ellipsis, the count.
  const tail = parts.length > 1 ? rest(parts.length - 1) : '';
  const head = Array.from(parts[0] ?? '')
    .slice(0, Math.max(0, limit - tail.length - 1))
    .join('');
  return `${head}…${tail}`;
}

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
    message: boundedMessage(problems.map((t) => `${t.name}: ${t.message ?? t.phase}`)),
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
    ...(t.handOverFrom ? { handOverFrom: t.handOverFrom } : {}),
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
 * The status that records `names` as this Pipeline's in `cluster` before they are created: written
 * first, so a crash between the creation and the reconcile's status leaves them recognised as its
 * own. `keepRecords`: the other entries' records are for `cluster` too; otherwise they are of
 * another cluster, which the status no longer names, and are cleared.
 */
export function creatingStatus(
  pipeline: Pipeline,
  names: string[],
  cluster: string,
  keepRecords: boolean,
): PipelineStatus {
  const others = (pipeline.status?.topics ?? [])
    .filter((t) => !names.includes(t.name))
    .map((t): TopicStatus => {
      if (keepRecords) return t;
      const { handOverFrom: _, ...rest } = t;
      return { ...rest, managed: false };
    });
  const creating = names.map(
    (name): TopicStatus => ({ name, phase: 'Creating', message: 'being created', managed: true }),
  );
  return { cluster, topics: [...others, ...creating] };
}

export /** The result with only the configs its topic declares (Kafka was read for every declared key). */
function onlyDeclaredConfigs(result: TopicResult, keys: string[]): TopicResult {
  if (!result.state) return result;
  const configs = Object.fromEntries(Object.entries(result.state.configs).filter(([k]) => keys.includes(k)));
  return { ...result, state: { ...result.state, configs } };
}

/**
 * The status after a reconcile of `pipeline` that found `topics`; `cluster`: the cluster their
 * records are for (absent: the status keeps the one it names, Kafka was not reached).
 */
export function reconciledStatus(
  pipeline: Pipeline,
  topics: TopicResult[],
  now: Date,
  cluster: string | undefined = pipeline.status?.cluster,
): PipelineStatus {
  const v = verdict(topics);
  const conflicts = topics.filter((t) => t.phase === 'Conflict');
  const conditions: ConditionOf[] = [
    { type: 'Ready', status: v.ready ? 'True' : 'False', reason: v.reason, message: v.message },
    stalledCondition(v),
    reconcilingCondition(v),
    conflicts.length > 0
      ? {
          type: 'Conflict',
          status: 'True',
          reason: 'TopicClaimedByOlderPipeline',
          message: boundedMessage(conflicts.map((t) => `${t.name}: ${t.message}`)),
        }
      : { type: 'Conflict', status: 'False', reason: 'NoConflict', message: '' },
  ];
  return {
    observedGeneration: pipeline.metadata.generation,
    ...(cluster !== undefined ? { cluster } : {}),
    conditions: setConditions(
      removeCondition(pipeline.status?.conditions ?? [], 'ReconciliationPaused'),
      conditions,
      pipeline.metadata.generation,
      now,
    ),
    topics: topics.map(topicStatus),
    topicsReady: `${topics.filter((t) => t.phase === 'Ready').length}/${topics.length}`,
  };
}

type ConditionOf = Omit<ConditionInput, 'observedGeneration'>;

/** `Stalled=True`, the `Ready=False` reason, when only a person can mend it (see `stalled`). */
function stalledCondition(v: Verdict): ConditionOf {
  return stalled(v)
    ? { type: 'Stalled', status: 'True', reason: v.reason, message: v.message }
    : { type: 'Stalled', status: 'False', reason: v.ready ? 'Reconciled' : 'Retrying', message: '' };
}

/**
 * `Reconciling=True` while a retry is due (a Kafka error): kstatus reads it as InProgress, so
 * Helm 4's `--wait`, Flux and Argo CD go on waiting rather than take a Pipeline that is not ready
 * for Current. `False` once ready, or stalled (`Stalled=True` says why).
 */
function reconcilingCondition(v: Verdict): ConditionOf {
  return !v.ready && !stalled(v)
    ? { type: 'Reconciling', status: 'True', reason: 'Retrying', message: v.message }
    : { type: 'Reconciling', status: 'False', reason: v.ready ? 'Reconciled' : 'Stalled', message: '' };
}

/** `conditions` with each of `next` set in place, for `generation`. */
function setConditions(
  conditions: Condition[],
  next: readonly ConditionOf[],
  generation: number | undefined,
  now: Date,
): Condition[] {
  return next.reduce(
    (all, c) => setCondition(all, { ...c, observedGeneration: generation }, now),
    conditions,
  );
}

/** The Pipeline's status as it is, with these conditions (for its current generation). */
function withConditions(pipeline: Pipeline, next: readonly ConditionOf[], now: Date): PipelineStatus {
  const conditions = pipeline.status?.conditions ?? [];
  return {
    ...pipeline.status,
    conditions: setConditions(conditions, next, pipeline.metadata.generation, now),
  };
}

/**
 * The first status of a Pipeline: `Ready=Unknown` and `Reconciling=True` until its first reconcile
 * ends (`observedGeneration` stays as it was: 0, the CRD's default).
 */
export function pendingStatus(pipeline: Pipeline, now: Date): PipelineStatus {
  const message = 'not reconciled yet';
  return withConditions(
    pipeline,
    [
      { type: 'Ready', status: 'Unknown', reason: 'Pending', message },
      { type: 'Reconciling', status: 'True', reason: 'Pending', message },
    ],
    now,
  );
}

/**
 * The status of a paused Pipeline: what it was, plus `ReconciliationPaused=True`, for its current
 * generation. Observed and left alone as asked, like a paused Deployment: `--wait` does not hang
 * on it, and a Helm upgrade is not rolled back for a pause.
 */
export function pausedStatus(pipeline: Pipeline, now: Date): PipelineStatus {
  const message = `${PAUSE_ANNOTATION} is "true": Kafka is not changed`;
  return {
    ...withConditions(
      pipeline,
      [
        { type: 'ReconciliationPaused', status: 'True', reason: 'PauseAnnotation', message },
        { type: 'Reconciling', status: 'False', reason: 'Paused', message },
      ],
      now,
    ),
    observedGeneration: pipeline.metadata.generation,
  };
}
