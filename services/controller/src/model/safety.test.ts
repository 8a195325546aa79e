import { describe, expect, it } from 'vitest';
import {
  ADOPT_TOPICS_ANNOTATION,
  API_VERSION,
  KIND,
  type Pipeline,
  type TopicStatus,
} from '../pipeline/types.js';
import { allowedClusters } from './cluster.js';
import { topicSpecOf } from './desired.js';
import {
  adoptable,
  DEFAULT_RESERVED_TOPICS,
  matchesPattern,
  mayTakeOver,
  type RecordScope,
  reservedBy,
  type TopicRules,
  wasManaged,
} from './safety.js';

const rules = (adoptable: string[] = ['*'], reserved = DEFAULT_RESERVED_TOPICS): TopicRules => ({
  reserved,
  adoptable,
});

function pipeline(
  annotations: Record<string, string>,
  topics: TopicStatus[] = [],
  cluster?: string,
): Pipeline {
  return {
    apiVersion: API_VERSION,
    kind: KIND,
    metadata: { namespace: 'ns', name: 'p', annotations },
    spec: { topics: [{ name: 't', partitions: 1, replicationFactor: 1 }] },
    status: { ...(cluster ? { cluster } : {}), topics },
  };
}

const CLUSTERS = allowedClusters([['kafka:9092'], ['other:9092']]);
const HERE: RecordScope = { cluster: 'kafka:9092', allowed: CLUSTERS };
const THERE: RecordScope = { cluster: 'other:9092', allowed: CLUSTERS };

describe('safe defaults', () => {
  it('min.insync.replicas is RF − 1 from RF 3 on, unless the topic sets it', () => {
    const spec = (replicationFactor: number, config?: Record<string, string>) =>
      topicSpecOf({ name: 't', partitions: 1, replicationFactor, ...(config ? { config } : {}) }).configs;
    expect(spec(1)).toEqual({});
    expect(spec(2)).toEqual({});
    expect(spec(3)).toEqual({ 'min.insync.replicas': '2' });
    expect(spec(5)).toEqual({ 'min.insync.replicas': '4' });
    expect(spec(3, { 'min.insync.replicas': '1' })).toEqual({ 'min.insync.replicas': '1' });
  });

  it("reserves Kafka's own names whatever the rules, and the configured patterns", () => {
    expect(reservedBy(rules([], []), '__consumer_offsets')).toBe('__*');
    expect(reservedBy(rules([], []), '_schemas')).toBeUndefined();
    expect(reservedBy(rules(), '_schemas')).toBe('_*');
    expect(reservedBy(rules(), 'connect-offsets')).toBe('connect-*');
    expect(reservedBy(rules(), 'a__b')).toBeUndefined();
    expect(reservedBy(rules(), 'my-connect-offsets')).toBeUndefined();
  });

  it('matches patterns with * as any run of characters, everything else literal', () => {
    expect(matchesPattern('team-a.*', 'team-a.events')).toBe(true);
    expect(matchesPattern('team-a.*', 'team-aXevents')).toBe(false);
    expect(matchesPattern('*.dlq', 'x.y.dlq')).toBe(true);
    expect(matchesPattern('events', 'events.dlq')).toBe(false);
    expect(matchesPattern('*', 'anything')).toBe(true);
  });

  it('lets an allowlist entry adopt for any Pipeline, or for the one it names', () => {
    const p = pipeline({});
    expect(adoptable(rules([]), p, 't')).toBe(false);
    expect(adoptable(rules(['t*']), p, 't')).toBe(true);
    expect(adoptable(rules(['ns/p:*']), p, 't')).toBe(true);
    expect(adoptable(rules(['ns/q:*', 'other/p:t']), p, 't')).toBe(false);
  });

  it('takes over an existing topic only when adopted within the allowlist, managed before, or handed over', () => {
    const all = rules();
    expect(mayTakeOver(all, pipeline({}), 't', HERE)).toBe(false);
    expect(mayTakeOver(all, pipeline({ [ADOPT_TOPICS_ANNOTATION]: 'x, t' }), 't', HERE)).toBe(true);
    expect(mayTakeOver(all, pipeline({ [ADOPT_TOPICS_ANNOTATION]: '*' }), 't', HERE)).toBe(true);
    expect(mayTakeOver(rules([]), pipeline({ [ADOPT_TOPICS_ANNOTATION]: '*' }), 't', HERE)).toBe(false);
    expect(mayTakeOver(all, pipeline({ [ADOPT_TOPICS_ANNOTATION]: 'tt' }), 't', HERE)).toBe(false);
    expect(mayTakeOver(all, pipeline({}, [{ name: 't', phase: 'Ready', managed: true }]), 't', HERE)).toBe(
      true,
    );
    expect(mayTakeOver(all, pipeline({}, [{ name: 't', phase: 'Blocked', managed: false }]), 't', HERE)).toBe(
      false,
    );
    expect(
      mayTakeOver(all, pipeline({}, [{ name: 't', phase: 'Unmanaged', managed: false }]), 't', HERE),
    ).toBe(false);
    // A status written before `managed` existed.
    expect(mayTakeOver(all, pipeline({}, [{ name: 't', phase: 'Ready' }]), 't', HERE)).toBe(true);
    expect(mayTakeOver(all, pipeline({}, [{ name: 't', phase: 'Unmanaged' }]), 't', HERE)).toBe(false);
  });

  it('counts a record only in the cluster it was written for (status.cluster); a status older than that in the cluster of today', () => {
    const none = rules([]);
    const managedHere = pipeline({}, [{ name: 't', phase: 'Ready', managed: true }], 'kafka:9092');
    expect(mayTakeOver(none, managedHere, 't', HERE)).toBe(true);
    // The Pipeline now names another cluster: the topic of that name there is not its own.
    expect(mayTakeOver(none, managedHere, 't', THERE)).toBe(false);
    expect(wasManaged(managedHere, 't', THERE)).toBe(false);
    // Written before status.cluster existed.
    const legacy = pipeline({}, [{ name: 't', phase: 'Ready', managed: true }]);
    expect(mayTakeOver(none, legacy, 't', THERE)).toBe(true);
  });

  it('never counts a Conflict entry as managed; only its hand-over, recorded for the same cluster, lets it take the topic', () => {
    const none = rules([]);
    // As an older controller wrote it (managed copied from the older Pipeline), or a legacy one.
    for (const entry of [
      { name: 't', phase: 'Conflict', managed: true },
      { name: 't', phase: 'Conflict' },
    ] as TopicStatus[]) {
      expect(mayTakeOver(none, pipeline({}, [entry]), 't', HERE)).toBe(false);
      expect(mayTakeOver(none, pipeline({}, [entry], 'kafka:9092'), 't', HERE)).toBe(false);
    }
    const handedOver = pipeline(
      {},
      [{ name: 't', phase: 'Conflict', managed: false, handOverFrom: 'ns/older' }],
      'kafka:9092',
    );
    expect(wasManaged(handedOver, 't', HERE)).toBe(false);
    expect(mayTakeOver(none, handedOver, 't', HERE)).toBe(true);
    expect(mayTakeOver(none, handedOver, 't', THERE)).toBe(false);
    // Kept through a failure after it (Error), until the topic is taken over.
    const failedOnce = pipeline(
      {},
      [{ name: 't', phase: 'Error', managed: false, handOverFrom: 'ns/older' }],
      'kafka:9092',
    );
    expect(mayTakeOver(none, failedOnce, 't', HERE)).toBe(true);
  });
});
