import { describe, expect, it } from 'vitest';
import { API_VERSION, KIND, type Pipeline } from '../pipeline/types.js';
import {
  type FlowReading,
  observeFlow,
  refusedFlowTopics,
  withFlowObservation,
  worthWriting,
} from './flow.js';

const t0 = new Date('2026-01-01T00:00:00Z');
const t1 = new Date('2026-01-01T00:00:30Z');
const thresholds = { maxLag: 100, maxDeadLettersPerMinute: 0 };
const range = (partition: number, high: number, low = 0) => ({
  partition,
  low: String(low),
  high: String(high),
});

function reading(committed: number[], highs: number[], dlqHighs?: number[]): FlowReading {
  return {
    consumerGroup: 'g',
    topic: 't',
    committed: new Map(committed.map((c, p) => [p, BigInt(c)])),
    ranges: highs.map((h, p) => range(p, h)),
    ...(dlqHighs ? { deadLetterTopic: 'dlq', deadLetterRanges: dlqHighs.map((h, p) => range(p, h)) } : {}),
  };
}
const status = (o: ReturnType<typeof observeFlow>, type: string) =>
  o.conditions.find((c) => c.type === type)?.status;
const reason = (o: ReturnType<typeof observeFlow>, type: string) =>
  o.conditions.find((c) => c.type === type)?.reason;

describe('observeFlow', () => {
  it('reports lag per partition and in all; Flowing needs a second reading unless caught up', () => {
    const first = observeFlow(reading([5, 10], [8, 10]), undefined, thresholds, t0);
    expect(first.flow.lag).toBe(3);
    expect(first.flow.partitions).toEqual([
      { partition: 0, lag: 3 },
      { partition: 1, lag: 0 },
    ]);
    expect(reason(first, 'Flowing')).toBe('FirstObservation');
    expect(status(first, 'Lagging')).toBe('False');
    const caughtUp = observeFlow(reading([8, 10], [8, 10]), undefined, thresholds, t0);
    expect(reason(caughtUp, 'Flowing')).toBe('CaughtUp');
  });

  it('Flowing while offsets advance; NoProgress and Lagging=ConsumerStalled when they do not', () => {
    const a = observeFlow(reading([5], [50]), undefined, thresholds, t0);
    const moving = observeFlow(reading([20], [60]), a.sample, thresholds, t1);
    expect([status(moving, 'Flowing'), reason(moving, 'Flowing')]).toEqual(['True', 'Consuming']);
    const stopped = observeFlow(reading([20], [70]), moving.sample, thresholds, t1);
    expect([status(stopped, 'Flowing'), reason(stopped, 'Flowing')]).toEqual(['False', 'NoProgress']);
    expect([status(stopped, 'Lagging'), reason(stopped, 'Lagging')]).toEqual(['True', 'ConsumerStalled']);
  });

  it('Lagging above the threshold even while consuming', () => {
    const a = observeFlow(reading([0], [500]), undefined, thresholds, t0);
    const b = observeFlow(reading([10], [600]), a.sample, thresholds, t1);
    expect([status(b, 'Flowing'), reason(b, 'Lagging')]).toEqual(['True', 'LagAboveThreshold']);
  });

  it('DeadLettering from the growth of the dead-letter topic over the period', () => {
    const a = observeFlow(reading([1], [1], [4, 0]), undefined, thresholds, t0);
    expect(a.flow.deadLetters).toBe(4);
    expect(status(a, 'DeadLettering')).toBe('Unknown');
    const b = observeFlow(reading([1], [1], [6, 1]), a.sample, thresholds, t1);
    expect(b.flow.deadLettersPerMinute).toBe(6); // 3 in 30 s
    expect(reason(b, 'DeadLettering')).toBe('DeadLettersGrowing');
    const c = observeFlow(reading([1], [1], [6, 1]), b.sample, thresholds, new Date(t1.getTime() + 30_000));
    expect([status(c, 'DeadLettering'), c.flow.deadLettersPerMinute]).toEqual(['False', 0]);
  });

  it('Unknown with the reason when Kafka cannot be read, the topic is missing or nothing was committed', () => {
    const down = observeFlow({ consumerGroup: 'g', topic: 't', error: 'refused' }, undefined, thresholds, t0);
    expect(down.conditions.map((c) => `${c.type}=${c.status}/${c.reason}`)).toEqual([
      'Flowing=Unknown/FlowUnobservable',
      'Lagging=Unknown/FlowUnobservable',
    ]);
    expect(
      reason(observeFlow({ consumerGroup: 'g', topic: 't' }, undefined, thresholds, t0), 'Flowing'),
    ).toBe('TopicMissing');
    expect(reason(observeFlow(reading([], [5]), undefined, thresholds, t0), 'Lagging')).toBe(
      'NoCommittedOffsets',
    );
  });
});

describe('refusedFlowTopics', () => {
  const flowing = (flow: NonNullable<Pipeline['spec']['flow']>): Pipeline => ({
    apiVersion: API_VERSION,
    kind: KIND,
    metadata: { namespace: 'team-a', name: 'p' },
    spec: { topics: [{ name: 'team-a.events', partitions: 1, replicationFactor: 1 }], flow },
  });
  const entitled = () => undefined;

  it('refuses a flow or dead-letter topic the Pipeline does not declare, naming the field', () => {
    expect(
      refusedFlowTopics(flowing({ consumerGroup: 'g', deadLetterTopic: 'team-a.events' }), entitled),
    ).toEqual([]);
    expect(
      refusedFlowTopics(flowing({ consumerGroup: 'g', deadLetterTopic: 'team-b.dlq' }), entitled),
    ).toEqual([
      {
        field: 'deadLetterTopic',
        reason: 'TopicNotDeclared',
        message: 'spec.flow.deadLetterTopic team-b.dlq is not one of spec.topics: not read',
      },
    ]);
    expect(
      refusedFlowTopics(flowing({ consumerGroup: 'g', topic: 'team-b.events' }), entitled).map(
        (r) => r.field,
      ),
    ).toEqual(['topic']);
  });

  it('refuses a declared topic it is not entitled to, with the reason of `entitlement`; the default topic is the first declared', () => {
    const kept = refusedFlowTopics(flowing({ consumerGroup: 'g' }), (name) =>
      name === 'team-a.events' ? 'TopicNameCollision' : undefined,
    );
    expect(kept).toEqual([
      {
        field: 'topic',
        reason: 'TopicNameCollision',
        message: 'spec.flow.topic team-a.events maps to a topic of the release namespace: not read',
      },
    ]);
    const notOwned = refusedFlowTopics(
      flowing({ consumerGroup: 'g', deadLetterTopic: 'team-a.events' }),
      () => 'TopicNotOwned',
    );
    expect(notOwned.map((r) => [r.field, r.reason])).toEqual([
      ['topic', 'TopicNotOwned'],
      ['deadLetterTopic', 'TopicNotOwned'],
    ]);
    expect(notOwned[1]?.message).toBe(
      "spec.flow.deadLetterTopic team-a.events is not this Pipeline's topic (created or adopted for it: status.topics[].managed): not read",
    );
  });
});

describe('observeFlow of refused topics', () => {
  const refused = (field: 'topic' | 'deadLetterTopic') => ({
    field,
    reason: 'TopicNotDeclared' as const,
    message: `spec.flow.${field} x is not one of spec.topics: not read`,
  });

  it('a refused topic: every flow condition Unknown with its reason, nothing measured', () => {
    const o = observeFlow(
      { consumerGroup: 'g', topic: 'x', deadLetterTopic: 'dlq', refused: [refused('topic')] },
      undefined,
      thresholds,
      t0,
    );
    expect(o.conditions.map((c) => `${c.type}=${c.status}/${c.reason}`)).toEqual([
      'Flowing=Unknown/TopicNotDeclared',
      'Lagging=Unknown/TopicNotDeclared',
      'DeadLettering=Unknown/TopicNotDeclared',
    ]);
    expect(o.flow).toEqual({ observedAt: t0.toISOString(), message: refused('topic').message });
  });

  it('a refused dead-letter topic: the lag as read, DeadLettering Unknown with its reason, no dead letters', () => {
    const o = observeFlow(
      { ...reading([5], [8]), deadLetterTopic: 'x', refused: [refused('deadLetterTopic')] },
      undefined,
      thresholds,
      t0,
    );
    expect(o.flow).toMatchObject({ lag: 3, message: refused('deadLetterTopic').message });
    expect(o.flow.deadLetters).toBeUndefined();
    expect(o.conditions.find((c) => c.type === 'DeadLettering')).toMatchObject({
      status: 'Unknown',
      reason: 'TopicNotDeclared',
    });
  });
});

describe('worthWriting', () => {
  const rule = { ratio: 0.1, maxIntervalMs: 600_000 };
  const written = (lag: number, flowing = 'True') => ({
    flow: { lag, observedAt: t0.toISOString() },
    conditions: [
      { type: 'Flowing', status: flowing, reason: 'Consuming', message: '', lastTransitionTime: '' },
      { type: 'Lagging', status: 'False', reason: 'WithinThreshold', message: '', lastTransitionTime: '' },
    ] as never,
  });
  const next = (lag: number, flowing: 'True' | 'False' = 'True') => ({
    flow: { lag, observedAt: t1.toISOString() },
    conditions: [
      {
        type: 'Flowing',
        status: flowing,
        reason: flowing === 'True' ? 'Consuming' : 'NoProgress',
        message: '',
      },
      { type: 'Lagging', status: 'False', reason: 'WithinThreshold', message: '' },
    ] as never,
  });

  it('skips small moves of the numbers and a fresh observedAt alone', () => {
    expect(worthWriting(written(1000), next(1050), rule, t1)).toBe(false);
    expect(worthWriting(written(3), next(9), rule, t1)).toBe(false);
  });

  it('writes a condition change, a move beyond the ratio, a first reading, or an old status', () => {
    expect(worthWriting(written(1000), next(1000, 'False'), rule, t1)).toBe(true);
    expect(worthWriting(written(1000), next(1200), rule, t1)).toBe(true);
    expect(worthWriting({}, next(0), rule, t1)).toBe(true);
    expect(worthWriting(written(1000), next(1000), rule, new Date(t0.getTime() + 600_000))).toBe(true);
  });
});

describe('withFlowObservation', () => {
  const observed = (flow: boolean, status?: Pipeline['status']): Pipeline => ({
    apiVersion: API_VERSION,
    kind: KIND,
    metadata: { namespace: 'ns', name: 'p', generation: 2 },
    spec: { topics: [], ...(flow ? { flow: { consumerGroup: 'g' } } : {}) },
    ...(status ? { status } : {}),
  });
  const ready = {
    type: 'Ready',
    status: 'True',
    reason: 'Reconciled',
    message: '',
    lastTransitionTime: '',
  } as const;

  it('adds the flow and its conditions, clearing the fields the reading leaves out', () => {
    const observation = observeFlow(reading([5], [8]), undefined, thresholds, t0);
    const status = withFlowObservation(observed(true), { conditions: [ready] }, observation, t1);
    expect(status.flow).toMatchObject({
      lag: 3,
      deadLetters: null,
      message: null,
      observedAt: t0.toISOString(),
    });
    expect(status.conditions?.map((c) => [c.type, c.observedGeneration])).toEqual([
      ['Ready', undefined],
      ['Flowing', 2],
      ['Lagging', 2],
    ]);
    expect(withFlowObservation(observed(true), { conditions: [ready] }, undefined, t1)).toEqual({
      conditions: [ready],
    });
  });

  it('removes the flow and its conditions once spec.flow is gone', () => {
    const flowing = { ...ready, type: 'Flowing' };
    const before = observed(false, { flow: { observedAt: t0.toISOString() }, conditions: [ready, flowing] });
    expect(withFlowObservation(before, { conditions: [ready, flowing] }, undefined, t1)).toEqual({
      flow: null,
      conditions: [ready],
    });
  });
});
