/**
 * Flow health from one reading of Kafka (and the previous one): the consumer group's lag, the
 * dead-letter topic's depth and growth, the `Flowing`, `Lagging` and `DeadLettering` conditions,
 * and whether the change is worth a status write (a thousand Pipelines must not flood the API
 * server with observedAt ticks).
 */
import { groupLag, type PartitionRange } from '@event-observatory/broker';
import type { Condition, FlowStatus, Pipeline, PipelineStatus } from '../pipeline/types.js';
import { type ConditionInput, setCondition } from './conditions.js';
import type { Unentitled } from './ownership.js';

export const FLOW_CONDITIONS = ['Flowing', 'Lagging', 'DeadLettering'] as const;

export function isFlowCondition(type: string): boolean {
  return (FLOW_CONDITIONS as readonly string[]).includes(type);
}

/** A topic `spec.flow` names that the Pipeline may not read: the field, a condition reason, why. */
export interface RefusedFlowTopic {
  field: 'topic' | 'deadLetterTopic';
  reason: 'TopicNotDeclared' | Unentitled;
  message: string;
}

/** The topic whose flow is read: `spec.flow.topic`, by default the first declared one. */
export function flowTopic(pipeline: Pipeline): string {
  return pipeline.spec.flow?.topic ?? pipeline.spec.topics[0]?.name ?? '';
}

/** Why a topic is not read, after `spec.flow.<field> <name>`. */
const NOT_READ: Record<RefusedFlowTopic['reason'], string> = {
  TopicNotDeclared: 'is not one of spec.topics',
  ReservedTopicName: "is a reserved name (Kafka's own topics, or CONTROLLER_RESERVED_TOPICS)",
  TopicNameCollision: 'maps to a topic of the release namespace',
  TopicNotOwned: "is not this Pipeline's topic (created or adopted for it: status.topics[].managed)",
};

/**
 * The topics of `spec.flow` that `pipeline` (Kafka names) may not read: only topics it declares
 * and is entitled to (`entitled`: the reconciler's `entitlement`), so its flow never tells the
 * depth or lag of another team's or the platform's topics. The answer is the same whether the
 * topic exists or not.
 */
export function refusedFlowTopics(
  pipeline: Pipeline,
  entitled: (name: string) => Unentitled | undefined,
): RefusedFlowTopic[] {
  const flow = pipeline.spec.flow;
  if (!flow) return [];
  const named = { topic: flowTopic(pipeline), deadLetterTopic: flow.deadLetterTopic };
  const refused: RefusedFlowTopic[] = [];
  for (const field of ['topic', 'deadLetterTopic'] as const) {
    const name = named[field];
    if (name === undefined) continue;
    const declared = pipeline.spec.topics.some((t) => t.name === name);
    const reason = declared ? entitled(name) : 'TopicNotDeclared';
    if (reason)
      refused.push({ field, reason, message: `spec.flow.${field} ${name} ${NOT_READ[reason]}: not read` });
  }
  return refused;
}

/** What Kafka answered for one Pipeline; `error` when it could not be read. */
export interface FlowReading {
  /** The group's committed offsets on the topic (empty: no commit); absent: the topic is missing. */
  committed?: ReadonlyMap<number, bigint>;
  ranges?: readonly PartitionRange[];
  /** The dead-letter topic's ranges; absent when none is configured or it is missing. */
  deadLetterRanges?: readonly PartitionRange[];
  deadLetterTopic?: string;
  consumerGroup: string;
  topic: string;
  lastStoredAt?: string;
  error?: string;
  /** Topics of `spec.flow` it may not read (`refusedFlowTopics`): never asked of Kafka. */
  refused?: readonly RefusedFlowTopic[];
}

/** The sums the next reading is compared with. */
export interface FlowSample {
  committed: bigint;
  deadLetterHigh: bigint;
  atMs: number;
}

export interface FlowThresholds {
  maxLag: number;
  maxDeadLettersPerMinute: number;
}

export interface FlowObservation {
  flow: FlowStatus;
  conditions: ConditionInput[];
  sample?: FlowSample;
}

const sum = (values: Iterable<bigint>) => [...values].reduce((a, b) => a + b, 0n);

/** The flow status and conditions of `reading` at `now`, given the sample of the period before. */
export function observeFlow(
  reading: FlowReading,
  previous: FlowSample | undefined,
  thresholds: FlowThresholds,
  now: Date,
): FlowObservation {
  const observedAt = now.toISOString();
  const stored = reading.lastStoredAt ? { lastStoredAt: reading.lastStoredAt } : {};
  const unknown = (reason: string, message: string): ConditionInput[] =>
    FLOW_CONDITIONS.filter((t) => t !== 'DeadLettering' || reading.deadLetterTopic).map((type) => ({
      type,
      status: 'Unknown',
      reason,
      message,
    }));
  const refused = (field: RefusedFlowTopic['field']) => reading.refused?.find((r) => r.field === field);
  const topicRefused = refused('topic');
  if (topicRefused) {
    const { reason, message } = topicRefused;
    return { flow: { observedAt, message, ...stored }, conditions: unknown(reason, message) };
  }
  if (reading.error) {
    const message = `Kafka: ${reading.error}`;
    return { flow: { observedAt, message, ...stored }, conditions: unknown('FlowUnobservable', message) };
  }
  if (!reading.ranges || !reading.committed) {
    const message = `topic ${reading.topic} does not exist`;
    return { flow: { observedAt, message, ...stored }, conditions: unknown('TopicMissing', message) };
  }
  const conditions: ConditionInput[] = [];
  const flow: FlowStatus = { observedAt, ...stored };
  const committedSum = sum(reading.committed.values());
  const deadLetterHigh = sum((reading.deadLetterRanges ?? []).map((r) => BigInt(r.high)));
  const elapsedMin = previous ? (now.getTime() - previous.atMs) / 60_000 : 0;

  if (reading.committed.size === 0) {
    flow.message = `group ${reading.consumerGroup} has no committed offsets on ${reading.topic}`;
    conditions.push(...unknown('NoCommittedOffsets', flow.message).filter((c) => c.type !== 'DeadLettering'));
  } else {
    const lags = groupLag(reading.committed, reading.ranges);
    const lag = Number(sum(lags.values()));
    flow.lag = lag;
    flow.partitions = [...lags].map(([partition, l]) => ({ partition, lag: Number(l) }));
    const progress = previous ? committedSum - previous.committed : undefined;
    const group = `group ${reading.consumerGroup}`;
    const flowing: ConditionInput =
      lag === 0
        ? { type: 'Flowing', status: 'True', reason: 'CaughtUp', message: `${group} has consumed everything` }
        : progress === undefined
          ? {
              type: 'Flowing',
              status: 'Unknown',
              reason: 'FirstObservation',
              message: `${lag} records behind`,
            }
          : progress > 0n
            ? {
                type: 'Flowing',
                status: 'True',
                reason: 'Consuming',
                message: `${group} committed ${progress} records in the last period, ${lag} behind`,
              }
            : {
                type: 'Flowing',
                status: 'False',
                reason: 'NoProgress',
                message: `${group} committed nothing in the last period with ${lag} records behind`,
              };
    conditions.push(flowing);
    conditions.push(
      lag > thresholds.maxLag
        ? {
            type: 'Lagging',
            status: 'True',
            reason: 'LagAboveThreshold',
            message: `${lag} records behind, above ${thresholds.maxLag}`,
          }
        : flowing.status === 'False'
          ? { type: 'Lagging', status: 'True', reason: 'ConsumerStalled', message: flowing.message }
          : {
              type: 'Lagging',
              status: 'False',
              reason: 'WithinThreshold',
              message: `${lag} records behind, at most ${thresholds.maxLag}`,
            },
    );
  }
  const deadLetterRefused = refused('deadLetterTopic');
  if (deadLetterRefused) {
    const { reason, message } = deadLetterRefused;
    flow.message = flow.message ? `${flow.message}; ${message}` : message;
    conditions.push({ type: 'DeadLettering', status: 'Unknown', reason, message });
  } else if (reading.deadLetterTopic) {
    if (!reading.deadLetterRanges) {
      const message = `dead-letter topic ${reading.deadLetterTopic} does not exist`;
      conditions.push({ type: 'DeadLettering', status: 'Unknown', reason: 'TopicMissing', message });
    } else {
      flow.deadLetters = reading.deadLetterRanges.reduce(
        (n, r) => n + Number(BigInt(r.high) - BigInt(r.low)),
        0,
      );
      if (!previous || elapsedMin <= 0) {
        conditions.push({
          type: 'DeadLettering',
          status: 'Unknown',
          reason: 'FirstObservation',
          message: `${flow.deadLetters} dead letters; the rate needs a second reading`,
        });
      } else {
        const grown = Number(deadLetterHigh - previous.deadLetterHigh);
        const rate = Math.round((Math.max(0, grown) / elapsedMin) * 100) / 100;
        flow.deadLettersPerMinute = rate;
        conditions.push(
          rate > thresholds.maxDeadLettersPerMinute
            ? {
                type: 'DeadLettering',
                status: 'True',
                reason: 'DeadLettersGrowing',
                message: `${rate} dead letters per minute, above ${thresholds.maxDeadLettersPerMinute}`,
              }
            : {
                type: 'DeadLettering',
                status: 'False',
                reason: 'NoNewDeadLetters',
                message: `${rate} dead letters per minute`,
              },
        );
      }
    }
  }
  return { flow, conditions, sample: { committed: committedSum, deadLetterHigh, atMs: now.getTime() } };
}

/** Whether `next` moved beyond `ratio` of `before` (and by more than `floor`). */
function moved(before: number | undefined, next: number | undefined, ratio: number, floor: number): boolean {
  if (before === undefined || next === undefined) return before !== next;
  const delta = Math.abs(next - before);
  return delta > floor && delta >= ratio * Math.max(before, next);
}

/** The store's newest row moved by a minute or more (it moves with every event under load). */
function storedMoved(before: string | undefined, next: string | undefined): boolean {
  if (before === undefined || next === undefined) return before !== next;
  return Math.abs(Date.parse(next) - Date.parse(before)) >= 60_000;
}

export interface WriteRule {
  /** Relative change of a number that is written (0.1: 10 %). */
  ratio: number;
  /** A status older than this is written even without a change, so observedAt stays fresh. */
  maxIntervalMs: number;
}

/**
 * Whether the observation differs enough from the written status to write it: a flow condition
 * whose status or reason changed, a number beyond the rule's ratio (lag and dead letters by more
 * than 10 records, the rate by more than 1 a minute), a message, or a written status too old.
 */
export function worthWriting(
  written: { flow?: FlowStatus | null; conditions?: Condition[] },
  next: FlowObservation,
  rule: WriteRule,
  now: Date,
): boolean {
  const before = written.flow;
  if (!before) return true;
  for (const c of next.conditions) {
    const old = written.conditions?.find((w) => w.type === c.type);
    if (!old || old.status !== c.status || old.reason !== c.reason) return true;
  }
  const gone = (written.conditions ?? []).some(
    (c) => isFlowCondition(c.type) && !next.conditions.some((n) => n.type === c.type),
  );
  return (
    gone ||
    before.message !== next.flow.message ||
    storedMoved(before.lastStoredAt, next.flow.lastStoredAt) ||
    moved(before.lag, next.flow.lag, rule.ratio, 10) ||
    moved(before.deadLetters, next.flow.deadLetters, rule.ratio, 10) ||
    moved(before.deadLettersPerMinute, next.flow.deadLettersPerMinute, rule.ratio, 1) ||
    now.getTime() - Date.parse(before.observedAt) >= rule.maxIntervalMs
  );
}

/** The fields of `status.flow` a reading may leave out. */
const FLOW_OPTIONAL = ['lag', 'partitions', 'deadLetters', 'deadLettersPerMinute', 'lastStoredAt', 'message'];

/**
 * `status` with the Pipeline's last flow `observation`: `flow` and the flow conditions. Without
 * `spec.flow` they go; without an observation `status` stays as it is.
 */
export function withFlowObservation(
  pipeline: Pipeline,
  status: PipelineStatus,
  observation: FlowObservation | undefined,
  now: Date,
): PipelineStatus {
  if (!pipeline.spec.flow) {
    // No longer observed: the flow and its conditions go (null deletes a field in a merge patch).
    if (!pipeline.status?.flow) return status;
    return {
      ...status,
      flow: null,
      conditions: (status.conditions ?? []).filter((c) => !isFlowCondition(c.type)),
    };
  }
  if (!observation) return status;
  let conditions = (status.conditions ?? []).filter(
    (c) => !isFlowCondition(c.type) || observation.conditions.some((o) => o.type === c.type),
  );
  for (const c of observation.conditions)
    conditions = setCondition(conditions, { ...c, observedGeneration: pipeline.metadata.generation }, now);
  // A merge patch keeps what it does not name: a reading's absent field (a message gone, a lag
  // no longer known) is written as null, which removes it.
  const cleared = Object.fromEntries(FLOW_OPTIONAL.map((k) => [k, null]));
  return { ...status, flow: { ...cleared, ...observation.flow } as FlowStatus, conditions };
}
