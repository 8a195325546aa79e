/**
 * The Events a reconcile records about a Pipeline (`kubectl describe`): what it changed in Kafka,
 * a new reason for `Ready=False`, a flow condition turning. Plain values; the Kubernetes handler
 * records them.
 */
import type { TopicOutcome } from '@event-observatory/broker';
import type { Condition } from '../pipeline/types.js';
import { isFlowCondition } from './flow.js';
import { type TopicResult, verdict } from './status.js';

export type EventType = 'Normal' | 'Warning';

export interface PipelineEvent {
  type: EventType;
  reason: string;
  message: string;
}

/** What applying one topic changed: created, partitions raised, configs set. */
export function topicChangeEvents(outcome: TopicOutcome): PipelineEvent[] {
  const { name } = outcome;
  if (outcome.action === 'created')
    return [
      {
        type: 'Normal',
        reason: 'TopicCreated',
        message: `created ${name} with ${outcome.partitions} partitions`,
      },
    ];
  const events: PipelineEvent[] = [];
  if (outcome.partitionsBefore !== undefined && outcome.partitions > outcome.partitionsBefore)
    events.push({
      type: 'Normal',
      reason: 'PartitionsIncreased',
      message: `${name}: partitions ${outcome.partitionsBefore} -> ${outcome.partitions}`,
    });
  if (outcome.changedConfigs.length > 0)
    events.push({
      type: 'Normal',
      reason: 'ConfigsUpdated',
      message: `${name}: set ${outcome.changedConfigs.join(', ')}`,
    });
  return events;
}

/**
 * A Warning when the reason `Ready` is False changes (`before` is the Ready condition the
 * Pipeline had), not on every retry of the same failure.
 */
export function problemEvent(
  before: Condition | undefined,
  topics: TopicResult[],
): PipelineEvent | undefined {
  const v = verdict(topics);
  if (v.ready || (before?.status === 'False' && before.message === v.message)) return undefined;
  const reason =
    v.reason === 'KafkaError'
      ? 'ReconcileFailed'
      : v.reason === 'TopicConflict'
        ? 'TopicConflict'
        : 'ChangeRefused';
  return { type: 'Warning', reason, message: v.message };
}

/** Event reasons of flow condition changes, by type and new status. */
const FLOW_EVENT: Record<string, Record<string, string>> = {
  Flowing: { True: 'FlowResumed', False: 'FlowStopped' },
  Lagging: { True: 'Lagging', False: 'LagRecovered' },
  DeadLettering: { True: 'DeadLettering', False: 'DeadLetteringStopped' },
};

/** An Event for each flow condition that turned True or False between `before` and `after`. */
export function flowEvents(before: Condition[], after: Condition[]): PipelineEvent[] {
  const events: PipelineEvent[] = [];
  for (const c of after) {
    if (!isFlowCondition(c.type) || c.status === 'Unknown') continue;
    const old = before.find((b) => b.type === c.type);
    if (old?.status === c.status) continue;
    const bad = (c.type === 'Flowing') === (c.status === 'False');
    if (!old && !bad) continue; // a healthy first reading is no news
    events.push({
      type: bad ? 'Warning' : 'Normal',
      reason: FLOW_EVENT[c.type]?.[c.status] ?? c.reason,
      message: c.message,
    });
  }
  return events;
}
