import { describe, expect, it } from 'vitest';
import { deadLetterTopicSpec, eventTopicSpec, planTopic, type TopicState, validateSpec } from './topics.js';

const current = (over: Partial<TopicState> = {}): TopicState => ({
  name: 'events.cloudevents.v1',
  partitions: 12,
  replicationFactor: 1,
  configs: { 'cleanup.policy': 'delete', 'retention.ms': '604800000', 'max.message.bytes': '2097152' },
  ...over,
});

describe('the spec topics', () => {
  it('are the event topic (12 partitions) and its compacted dead-letter topic (3), both kept 168 h', () => {
    expect(eventTopicSpec()).toEqual({
      name: 'events.cloudevents.v1',
      partitions: 12,
      replicationFactor: 1,
      configs: {
        'cleanup.policy': 'delete',
        'retention.ms': String(168 * 3_600_000),
        'max.message.bytes': '2097152',
      },
    });
    expect(deadLetterTopicSpec()).toEqual({
      name: 'events.cloudevents.v1.dlq',
      partitions: 3,
      replicationFactor: 1,
      configs: {
        'cleanup.policy': 'compact,delete',
        'retention.ms': '604800000',
        'max.message.bytes': '4194304',
      },
    });
  });

  it('take another name and retention when asked', () => {
    expect(eventTopicSpec('other', 24).configs['retention.ms']).toBe('86400000');
    expect(deadLetterTopicSpec('other.dlq').name).toBe('other.dlq');
  });
});

describe('planTopic', () => {
  it('creates a topic that does not exist', () => {
    expect(planTopic(eventTopicSpec(), undefined)).toEqual({
      name: 'events.cloudevents.v1',
      create: eventTopicSpec(),
      alterConfigs: {},
      warnings: [],
    });
  });

  it('does nothing when the broker already matches', () => {
    expect(planTopic(eventTopicSpec(), current())).toEqual({
      name: 'events.cloudevents.v1',
      increasePartitionsTo: undefined,
      alterConfigs: {},
      warnings: [],
    });
  });

  it('grows partitions but never shrinks them (reported as a warning)', () => {
    expect(planTopic(eventTopicSpec(), current({ partitions: 6 })).increasePartitionsTo).toBe(12);
    const shrink = planTopic(eventTopicSpec(), current({ partitions: 24 }));
    expect(shrink.increasePartitionsTo).toBeUndefined();
    expect(shrink.warnings).toEqual([expect.stringMatching(/has 24 partitions.*never decreased/)]);
  });

  it('alters only the configs whose value differs, and reports a replication factor it cannot change', () => {
    const plan = planTopic(
      deadLetterTopicSpec(),
      current({ name: 'events.cloudevents.v1.dlq', partitions: 3, replicationFactor: 3 }),
    );
    expect(plan.alterConfigs).toEqual({ 'cleanup.policy': 'compact,delete', 'max.message.bytes': '4194304' });
    expect(plan.warnings).toEqual([expect.stringMatching(/replication factor is 3, spec asks 1/)]);
  });

  it('refuses specs Kafka would refuse', () => {
    expect(() => validateSpec({ ...eventTopicSpec(), name: 'bad name' })).toThrow(/invalid topic name/);
    expect(() => validateSpec({ ...eventTopicSpec(), partitions: 0 })).toThrow(/partitions/);
    expect(() => validateSpec({ ...eventTopicSpec(), replicationFactor: 1.5 })).toThrow(/replicationFactor/);
  });
});
