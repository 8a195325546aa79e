import { describe, expect, it } from 'vitest';
import {
  ADOPT_TOPICS_ANNOTATION,
  API_VERSION,
  KIND,
  type Pipeline,
  type TopicStatus,
} from '../pipeline/types.js';
import { topicSpecOf } from './desired.js';
import { isReservedTopicName, mayTakeOver, serversNotAllowed } from './safety.js';

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

  it('reserves names starting with two underscores', () => {
    expect(isReservedTopicName('__consumer_offsets')).toBe(true);
    expect(isReservedTopicName('_schemas')).toBe(false);
    expect(isReservedTopicName('a__b')).toBe(false);
  });

  it('allows a cluster only when every server is in the allowlist (host case ignored)', () => {
    expect(serversNotAllowed('kafka:9092', ['KAFKA:9092'])).toEqual([]);
    expect(serversNotAllowed('evil:9092,kafka:9092', ['kafka:9092'])).toEqual(['evil:9092']);
    expect(serversNotAllowed('kafka:9093', ['kafka:9092'])).toEqual(['kafka:9093']);
  });

  it('takes over an existing topic only when adopted, managed before, or handed over', () => {
    expect(mayTakeOver(pipeline({}), 't')).toBe(false);
    expect(mayTakeOver(pipeline({ [ADOPT_TOPICS_ANNOTATION]: 'x, t' }), 't')).toBe(true);
    expect(mayTakeOver(pipeline({ [ADOPT_TOPICS_ANNOTATION]: '*' }), 't')).toBe(true);
    expect(mayTakeOver(pipeline({ [ADOPT_TOPICS_ANNOTATION]: 'tt' }), 't')).toBe(false);
    expect(mayTakeOver(pipeline({}, [{ name: 't', phase: 'Ready', managed: true }]), 't')).toBe(true);
    expect(mayTakeOver(pipeline({}, [{ name: 't', phase: 'Blocked', managed: false }]), 't')).toBe(false);
    expect(mayTakeOver(pipeline({}, [{ name: 't', phase: 'Unmanaged', managed: false }]), 't')).toBe(false);
    // A status written before `managed` existed.
    expect(mayTakeOver(pipeline({}, [{ name: 't', phase: 'Ready' }]), 't')).toBe(true);
    expect(mayTakeOver(pipeline({}, [{ name: 't', phase: 'Unmanaged' }]), 't')).toBe(false);
  });
});
