import { describe, expect, it } from 'vitest';
import {
  ADOPT_TOPICS_ANNOTATION,
  API_VERSION,
  KIND,
  type Pipeline,
  type TopicStatus,
} from '../pipeline/types.js';
import { topicSpecOf } from './desired.js';
import {
  adoptable,
  DEFAULT_RESERVED_TOPICS,
  matchesPattern,
  mayTakeOver,
  reservedBy,
  serversNotAllowed,
  type TopicRules,
} from './safety.js';

const rules = (adoptable: string[] = ['*'], reserved = DEFAULT_RESERVED_TOPICS): TopicRules => ({
  reserved,
  adoptable,
});

function pipeline(annotations: Record<string, string>, topics: TopicStatus[] = []): Pipeline {
  return {
    apiVersion: API_VERSION,
    kind: KIND,
    metadata: { namespace: 'ns', name: 'p', annotations },
    spec: { topics: [{ name: 't', partitions: 1, replicationFactor: 1 }] },
    status: { topics },
  };
}

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

  it('allows a cluster only when every server is in the allowlist (host case ignored)', () => {
    expect(serversNotAllowed('kafka:9092', ['KAFKA:9092'])).toEqual([]);
    expect(serversNotAllowed('evil:9092,kafka:9092', ['kafka:9092'])).toEqual(['evil:9092']);
    expect(serversNotAllowed('kafka:9093', ['kafka:9092'])).toEqual(['kafka:9093']);
  });

  it('takes over an existing topic only when adopted within the allowlist, managed before, or handed over', () => {
    const all = rules();
    expect(mayTakeOver(all, pipeline({}), 't')).toBe(false);
    expect(mayTakeOver(all, pipeline({ [ADOPT_TOPICS_ANNOTATION]: 'x, t' }), 't')).toBe(true);
    expect(mayTakeOver(all, pipeline({ [ADOPT_TOPICS_ANNOTATION]: '*' }), 't')).toBe(true);
    expect(mayTakeOver(rules([]), pipeline({ [ADOPT_TOPICS_ANNOTATION]: '*' }), 't')).toBe(false);
    expect(mayTakeOver(all, pipeline({ [ADOPT_TOPICS_ANNOTATION]: 'tt' }), 't')).toBe(false);
    expect(mayTakeOver(all, pipeline({}, [{ name: 't', phase: 'Ready', managed: true }]), 't')).toBe(true);
    expect(mayTakeOver(all, pipeline({}, [{ name: 't', phase: 'Blocked', managed: false }]), 't')).toBe(
      false,
    );
    expect(mayTakeOver(all, pipeline({}, [{ name: 't', phase: 'Unmanaged', managed: false }]), 't')).toBe(
      false,
    );
    // A status written before `managed` existed.
    expect(mayTakeOver(all, pipeline({}, [{ name: 't', phase: 'Ready' }]), 't')).toBe(true);
    expect(mayTakeOver(all, pipeline({}, [{ name: 't', phase: 'Unmanaged' }]), 't')).toBe(false);
  });
});
