import { describe, expect, it } from 'vitest';
import type { Condition } from '../pipeline/types.js';
import { flowEvents, problemEvent, topicChangeEvents } from './events.js';

const outcome = { name: 't', warnings: [], refused: [], changedConfigs: [] as string[] };
const condition = (type: string, status: Condition['status'], reason = 'R', message = 'm'): Condition => ({
  type,
  status,
  reason,
  message,
  lastTransitionTime: '2026-01-01T00:00:00Z',
});

describe('Events of a reconcile', () => {
  it('names what applying a topic changed: created, or partitions raised and configs set', () => {
    expect(topicChangeEvents({ ...outcome, action: 'created', partitions: 3 })).toEqual([
      { type: 'Normal', reason: 'TopicCreated', message: 'created t with 3 partitions' },
    ]);
    expect(
      topicChangeEvents({
        ...outcome,
        action: 'updated',
        partitionsBefore: 1,
        partitions: 2,
        changedConfigs: ['retention.ms'],
      }).map((e) => [e.reason, e.message]),
    ).toEqual([
      ['PartitionsIncreased', 't: partitions 1 -> 2'],
      ['ConfigsUpdated', 't: set retention.ms'],
    ]);
    expect(
      topicChangeEvents({ ...outcome, action: 'unchanged', partitionsBefore: 2, partitions: 2 }),
    ).toEqual([]);
  });

  it('warns once per reason Ready is False: not when ready, not again for the same message', () => {
    const error = [{ name: 't', phase: 'Error', message: 'Kafka: down' } as const];
    expect(problemEvent(undefined, [{ name: 't', phase: 'Ready' }])).toBeUndefined();
    expect(problemEvent(undefined, error)).toEqual({
      type: 'Warning',
      reason: 'ReconcileFailed',
      message: 't: Kafka: down',
    });
    expect(problemEvent(condition('Ready', 'False', 'KafkaError', 't: Kafka: down'), error)).toBeUndefined();
    expect(problemEvent(undefined, [{ name: 't', phase: 'Conflict', message: 'older' }])?.reason).toBe(
      'TopicConflict',
    );
    const reserved = { name: '__t', phase: 'Blocked', blocked: 'ReservedTopicName', message: 'no' } as const;
    expect(problemEvent(undefined, [reserved])?.reason).toBe('ChangeRefused');
  });

  it('tells a flow condition turning True or False, but not a healthy first reading nor an Unknown', () => {
    expect(flowEvents([], [condition('Flowing', 'True'), condition('Lagging', 'Unknown')])).toEqual([]);
    expect(flowEvents([], [condition('Flowing', 'False', 'NoProgress', 'stuck')])).toEqual([
      { type: 'Warning', reason: 'FlowStopped', message: 'stuck' },
    ]);
    expect(
      flowEvents(
        [condition('Lagging', 'True'), condition('Ready', 'True')],
        [condition('Lagging', 'False', 'WithinThreshold', 'fine'), condition('Ready', 'False')],
      ),
    ).toEqual([{ type: 'Normal', reason: 'LagRecovered', message: 'fine' }]);
    expect(flowEvents([condition('DeadLettering', 'True')], [condition('DeadLettering', 'True')])).toEqual(
      [],
    );
  });
});
