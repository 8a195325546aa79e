import { describe, expect, it } from 'vitest';
import { API_VERSION, KIND, type Pipeline, UNMANAGED_TOPICS_ANNOTATION } from '../pipeline/types.js';
import { findCondition } from './conditions.js';
import { desiredTopics } from './desired.js';
import {
  appliedResults,
  boundedMessage,
  CONDITION_MESSAGE_LIMIT,
  creatingStatus,
  onlyDeclaredConfigs,
  pausedStatus,
  pendingStatus,
  reconciledStatus,
  type TopicResult,
} from './status.js';

const t0 = new Date('2026-01-01T00:00:00Z');
const t1 = new Date('2026-01-01T00:01:00Z');

function pipeline(generation = 3): Pipeline {
  return {
    apiVersion: API_VERSION,
    kind: KIND,
    metadata: { namespace: 'ns', name: 'p', generation },
    spec: {
      topics: [
        { name: 'a', partitions: 2, replicationFactor: 1, config: { 'retention.ms': '1000' } },
        { name: 'b', partitions: 1, replicationFactor: 1 },
      ],
    },
  };
}

const state = (name: string, partitions: number) => ({ name, partitions, replicationFactor: 1, configs: {} });
const readyTopic = (name: string): TopicResult => ({ name, phase: 'Ready', state: state(name, 2) });

describe('status of a reconcile', () => {
  it('is Ready=True with the observed generation and each topic as read from Kafka', () => {
    const status = reconciledStatus(pipeline(), [readyTopic('a'), readyTopic('b')], t0);
    expect(status.observedGeneration).toBe(3);
    expect(status.topicsReady).toBe('2/2');
    expect(findCondition(status.conditions, 'Ready')).toMatchObject({
      status: 'True',
      reason: 'Reconciled',
      observedGeneration: 3,
    });
    expect(findCondition(status.conditions, 'Conflict')?.status).toBe('False');
    expect(status.topics?.[0]).toEqual({
      name: 'a',
      phase: 'Ready',
      partitions: 2,
      replicationFactor: 1,
      config: {},
      managed: false,
    });
  });

  it('is Ready=False naming a refused decrease, which wins over a conflict', () => {
    const status = reconciledStatus(
      pipeline(),
      [
        {
          name: 'a',
          phase: 'Refused',
          state: state('a', 4),
          refused: [
            { kind: 'cannot-decrease-partitions', current: 4, desired: 2, message: 'never decreased' },
          ],
          message: 'never decreased',
        },
        { name: 'b', phase: 'Conflict', message: 'managed by ns/older' },
      ],
      t0,
    );
    const ready = findCondition(status.conditions, 'Ready');
    expect(ready).toMatchObject({ status: 'False', reason: 'PartitionDecreaseRefused' });
    expect(ready?.message).toBe('a: never decreased; b: managed by ns/older');
    expect(findCondition(status.conditions, 'Conflict')).toMatchObject({
      status: 'True',
      reason: 'TopicClaimedByOlderPipeline',
    });
    expect(status.topicsReady).toBe('0/2');
  });

  it('is Stalled=True (kstatus: Failed) when only a person can mend it, and Stalled=False while a retry may', () => {
    const blocked: TopicResult = {
      name: 'a',
      phase: 'Blocked',
      blocked: 'AdoptionRequired',
      message: 'exists in Kafka and was not created by this Pipeline',
    };
    const needsPerson = reconciledStatus(pipeline(), [blocked, readyTopic('b')], t0);
    expect(findCondition(needsPerson.conditions, 'Stalled')).toMatchObject({
      status: 'True',
      reason: 'AdoptionRequired',
      message: 'a: exists in Kafka and was not created by this Pipeline',
      observedGeneration: 3,
    });
    const kafkaDown = reconciledStatus(pipeline(), [{ name: 'a', phase: 'Error', message: 'timeout' }], t0);
    expect(findCondition(kafkaDown.conditions, 'Ready')?.reason).toBe('KafkaError');
    expect(findCondition(kafkaDown.conditions, 'Stalled')).toMatchObject({
      status: 'False',
      reason: 'Retrying',
    });
    const ready = reconciledStatus(pipeline(), [readyTopic('a'), readyTopic('b')], t0);
    expect(findCondition(ready.conditions, 'Stalled')).toMatchObject({
      status: 'False',
      reason: 'Reconciled',
    });
  });

  it('is Reconciling=True (kstatus: InProgress) only while a Kafka error is retried', () => {
    const kafkaDown = reconciledStatus(pipeline(), [{ name: 'a', phase: 'Error', message: 'timeout' }], t0);
    expect(findCondition(kafkaDown.conditions, 'Reconciling')).toMatchObject({
      status: 'True',
      reason: 'Retrying',
      message: 'a: timeout',
      observedGeneration: 3,
    });
    const blocked: TopicResult = { name: 'a', phase: 'Blocked', blocked: 'AdoptionRequired', message: 'x' };
    const needsPerson = reconciledStatus({ ...pipeline(), status: kafkaDown }, [blocked], t1);
    expect(findCondition(needsPerson.conditions, 'Reconciling')).toMatchObject({
      status: 'False',
      reason: 'Stalled',
      lastTransitionTime: t1.toISOString(),
    });
    const ready = reconciledStatus(pipeline(), [readyTopic('a'), readyTopic('b')], t0);
    expect(findCondition(ready.conditions, 'Reconciling')).toMatchObject({
      status: 'False',
      reason: 'Reconciled',
    });
  });

  it('keeps lastTransitionTime across reconciles that do not change Ready, and drops the pause condition', () => {
    const first = { ...pipeline(), status: pausedStatus(pipeline(), t0) };
    expect(findCondition(first.status.conditions, 'ReconciliationPaused')?.status).toBe('True');
    const once = { ...first, status: reconciledStatus(first, [readyTopic('a'), readyTopic('b')], t0) };
    const twice = reconciledStatus(once, [readyTopic('a'), readyTopic('b')], t1);
    expect(findCondition(twice.conditions, 'Ready')?.lastTransitionTime).toBe(t0.toISOString());
    expect(findCondition(twice.conditions, 'ReconciliationPaused')).toBeUndefined();
  });

  it('starts as Ready=Unknown and Reconciling=True, the generation not yet observed', () => {
    // As the API server gives a Pipeline no controller has written: the CRD's default status.
    const unseen = { ...pipeline(1), status: { observedGeneration: 0 } };
    expect(pendingStatus(unseen, t0)).toMatchObject({
      observedGeneration: 0,
      conditions: [
        { type: 'Ready', status: 'Unknown', reason: 'Pending', observedGeneration: 1 },
        { type: 'Reconciling', status: 'True', reason: 'Pending', observedGeneration: 1 },
      ],
    });
  });

  it('observes the generation of a paused Pipeline, and says it is not reconciling it', () => {
    const retrying = reconciledStatus(pipeline(3), [{ name: 'a', phase: 'Error', message: 'timeout' }], t0);
    const paused = pausedStatus({ ...pipeline(4), status: retrying }, t1);
    expect(paused.observedGeneration).toBe(4);
    expect(findCondition(paused.conditions, 'Reconciling')).toMatchObject({
      status: 'False',
      reason: 'Paused',
      observedGeneration: 4,
    });
    // What the last reconcile found stays, for the generation it found it.
    expect(findCondition(paused.conditions, 'Ready')).toMatchObject({
      status: 'False',
      observedGeneration: 3,
    });
  });

  it('does not count an unmanaged topic against Ready', () => {
    const status = reconciledStatus(pipeline(), [readyTopic('a'), { name: 'b', phase: 'Unmanaged' }], t0);
    expect(findCondition(status.conditions, 'Ready')?.status).toBe('True');
  });

  it('names the safe default that blocked a topic: the allowlist first, an adoption after refusals', () => {
    const reason = (topics: TopicResult[]) =>
      findCondition(reconciledStatus(pipeline(), topics, t0).conditions, 'Ready')?.reason;
    const blocked = (name: string, why: TopicResult['blocked']): TopicResult => ({
      name,
      phase: 'Blocked',
      blocked: why,
    });
    expect(reason([blocked('a', 'ClusterNotAllowed'), { name: 'b', phase: 'Error' }])).toBe(
      'ClusterNotAllowed',
    );
    expect(reason([blocked('a', 'AdoptionRequired'), readyTopic('b')])).toBe('AdoptionRequired');
    expect(reason([blocked('a', 'AdoptionRequired'), blocked('b', 'ReservedTopicName')])).toBe(
      'ReservedTopicName',
    );
    const refused: TopicResult = {
      name: 'b',
      phase: 'Refused',
      refused: [{ kind: 'cannot-decrease-partitions', message: 'b: no', current: 4, desired: 2 }],
    };
    expect(reason([blocked('a', 'AdoptionRequired'), refused])).toBe('PartitionDecreaseRefused');
    expect(reason([blocked('a', 'AdoptionRequired'), blocked('b', 'TopicNameCollision')])).toBe(
      'TopicNameCollision',
    );
    expect(reason([blocked('a', 'TopicNameCollision'), { name: 'b', phase: 'Conflict' }])).toBe(
      'TopicNameCollision',
    );
  });
});

describe('condition messages', () => {
  // The CRD's bound on a condition message: a longer one fails every status write (422).
  const CRD_LIMIT = 32768;
  /** As many topics as a Pipeline may declare, with the longest names, each with a long message. */
  const failing = (phase: 'Blocked' | 'Conflict'): TopicResult[] =>
    Array.from({ length: 100 }, (_, i) => ({
      name: `${'t'.repeat(245)}.${String(i).padStart(3, '0')}`,
      phase,
      ...(phase === 'Blocked' ? { blocked: 'AdoptionRequired' as const } : {}),
      message: `exists in Kafka and was not created by this Pipeline: ${'x'.repeat(200)}`,
    }));

  it('keeps Ready and Stalled within the bound however many topics fail: whole topics, an ellipsis and how many were left out', () => {
    const status = reconciledStatus(pipeline(), failing('Blocked'), t0);
    for (const type of ['Ready', 'Stalled']) {
      const message = findCondition(status.conditions, type)?.message ?? '';
      expect(message.length).toBeLessThanOrEqual(CRD_LIMIT);
      expect(message.length).toBeLessThanOrEqual(CONDITION_MESSAGE_LIMIT);
      const left = Number(/; … (\d+) more in status\.topics$/.exec(message)?.[1]);
      const kept = message.split('; ').length - 1;
      expect(kept + left).toBe(100);
      expect(message.startsWith(`${'t'.repeat(245)}.000: exists in Kafka`)).toBe(true);
    }
    // Each topic's own message stays whole.
    expect(status.topics?.[99]?.message).toBe(failing('Blocked')[99]?.message);
  });

  it('keeps the Conflict condition within the bound too', () => {
    const status = reconciledStatus(pipeline(), failing('Conflict'), t0);
    const message = findCondition(status.conditions, 'Conflict')?.message ?? '';
    expect(message.length).toBeLessThanOrEqual(CRD_LIMIT);
    expect(message.length).toBeLessThanOrEqual(CONDITION_MESSAGE_LIMIT);
    expect(message).toMatch(/; … \d+ more in status\.topics$/);
  });

  it('leaves a short message as it is, and cuts a single part longer than the bound', () => {
    expect(boundedMessage(['a: x', 'b: y'], 100)).toBe('a: x; b: y');
    expect(boundedMessage(['a'.repeat(50)], 20)).toBe(`${'a'.repeat(19)}…`);
    const cut = boundedMessage(['a'.repeat(50), 'b: y'], 40);
    expect(cut).toBe(`${'a'.repeat(12)}…; … 1 more in status.topics`);
    expect(cut.length).toBeLessThanOrEqual(40);
  });
});

describe('the cluster of the records', () => {
  const withStatus = (cluster?: string): Pipeline => ({
    ...pipeline(),
    status: {
      ...(cluster ? { cluster } : {}),
      topics: [
        { name: 'a', phase: 'Ready', managed: true },
        { name: 'c', phase: 'Conflict', managed: false, handOverFrom: 'ns/older' },
      ],
    },
  });

  it('records a topic about to be created with the cluster, clearing the records of another cluster', () => {
    expect(creatingStatus(withStatus('k:1'), ['b'], 'k:1', true)).toEqual({
      cluster: 'k:1',
      topics: [
        { name: 'a', phase: 'Ready', managed: true },
        { name: 'c', phase: 'Conflict', managed: false, handOverFrom: 'ns/older' },
        { name: 'b', phase: 'Creating', message: 'being created', managed: true },
      ],
    });
    expect(creatingStatus(withStatus('other:1'), ['b'], 'k:1', false)).toEqual({
      cluster: 'k:1',
      topics: [
        { name: 'a', phase: 'Ready', managed: false },
        { name: 'c', phase: 'Conflict', managed: false },
        { name: 'b', phase: 'Creating', message: 'being created', managed: true },
      ],
    });
  });

  it("writes the reconcile's cluster, keeps the recorded one when Kafka was not reached, and a Conflict's hand-over", () => {
    const conflict: TopicResult = { name: 'b', phase: 'Conflict', managed: false, handOverFrom: 'ns/older' };
    expect(reconciledStatus(withStatus('old:1'), [readyTopic('a'), conflict], t0, 'k:1').cluster).toBe('k:1');
    const kept = reconciledStatus(withStatus('old:1'), [readyTopic('a'), conflict], t0);
    expect(kept.cluster).toBe('old:1');
    expect(kept.topics?.[1]).toEqual({
      name: 'b',
      phase: 'Conflict',
      managed: false,
      handOverFrom: 'ns/older',
    });
    expect(reconciledStatus(withStatus(), [readyTopic('a')], t0)).not.toHaveProperty('cluster');
  });
});

describe('desired topics', () => {
  it('splits declared topics into managed, unmanaged (annotation) and owned by an older Pipeline', () => {
    const p = pipeline();
    p.spec.topics.push({ name: 'c', partitions: 1, replicationFactor: 1 });
    p.metadata.annotations = { [UNMANAGED_TOPICS_ANNOTATION]: ' b , ' };
    const desired = desiredTopics(p, new Map([['k:1|c', 'other/older']]), 'k:1', () => false);
    expect(desired.managed).toEqual([
      { name: 'a', partitions: 2, replicationFactor: 1, configs: { 'retention.ms': '1000' } },
    ]);
    expect(desired.unmanaged).toEqual(['b']);
    expect(desired.conflicts).toEqual([{ name: 'c', owner: 'other/older' }]);
  });
});

describe('results of applying to Kafka', () => {
  it('reads unmanaged topics, blocks those not adopted, and marks applied ones Ready or Refused without repeating the name', () => {
    const refusal = { kind: 'cannot-decrease-partitions', message: 'r: no', current: 4, desired: 2 } as const;
    const applied = (name: string, refused: (typeof refusal)[] = []) => ({
      name,
      action: 'unchanged' as const,
      partitions: 2,
      changedConfigs: [],
      warnings: [],
      refused,
    });
    const results = appliedResults(
      ['u'],
      ['n'],
      [applied('a'), applied('r', [refusal])],
      new Map([['u', state('u', 1)]]),
    );
    expect(
      results.map((r) => [r.name, r.phase, r.blocked, r.message, r.managed, r.state?.partitions]),
    ).toEqual([
      ['u', 'Unmanaged', undefined, undefined, undefined, 1],
      [
        'n',
        'Blocked',
        'AdoptionRequired',
        expect.stringContaining('observatory.dev/adopt-topics'),
        undefined,
        undefined,
      ],
      ['a', 'Ready', undefined, undefined, true, undefined],
      ['r', 'Refused', undefined, 'no', true, undefined],
    ]);
  });

  it('keeps only the configs the topic declares', () => {
    const read = {
      name: 'a',
      phase: 'Ready',
      state: { ...state('a', 1), configs: { x: '1', y: '2' } },
    } as const;
    expect(onlyDeclaredConfigs(read, ['y']).state?.configs).toEqual({ y: '2' });
  });
});
