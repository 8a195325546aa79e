import { describe, expect, it } from 'vitest';
import { readBrokerTopics } from '../config/connection.js';
import {
  deadLetterTopicSpec,
  eventTopicSpec,
  planTopic,
  type TopicState,
  topicSpecs,
  validateSpec,
  validateSpecs,
} from './model.js';

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
        'segment.ms': '3600000',
      },
    });
  });

  it('take another name and retention when asked', () => {
    expect(eventTopicSpec('other', 24).configs['retention.ms']).toBe('86400000');
    expect(deadLetterTopicSpec('other.dlq').name).toBe('other.dlq');
  });

  it('are named and kept as BROKER_TOPIC, BROKER_DLQ_TOPIC and BROKER_LOG_RETENTION_HOURS say', () => {
    const specs = topicSpecs(
      readBrokerTopics({ BROKER_TOPIC: 'e', BROKER_DLQ_TOPIC: 'd', BROKER_LOG_RETENTION_HOURS: '24' }),
    );
    expect(specs.map((s) => [s.name, s.partitions, s.configs['retention.ms']])).toEqual([
      ['e', 12, '86400000'],
      ['d', 3, '86400000'],
    ]);
  });
});

describe('planTopic', () => {
  it('creates a topic that does not exist', () => {
    expect(planTopic(eventTopicSpec(), undefined)).toEqual({
      name: 'events.cloudevents.v1',
      changes: [{ kind: 'create', spec: eventTopicSpec() }],
      refused: [],
    });
  });

  it('does nothing when the broker already matches', () => {
    expect(planTopic(eventTopicSpec(), current())).toEqual({
      name: 'events.cloudevents.v1',
      changes: [],
      refused: [],
    });
  });

  it('adds partitions and sets drifted configs, in that order', () => {
    const plan = planTopic(
      eventTopicSpec(),
      current({ partitions: 6, configs: { 'cleanup.policy': 'delete', 'retention.ms': '1000' } }),
    );
    expect(plan.changes).toEqual([
      { kind: 'add-partitions', from: 6, to: 12 },
      { kind: 'alter-configs', configs: { 'retention.ms': '604800000', 'max.message.bytes': '2097152' } },
    ]);
    expect(plan.refused).toEqual([]);
  });

  it('refuses to decrease partitions, and changes nothing else for it', () => {
    const plan = planTopic(eventTopicSpec(), current({ partitions: 24 }));
    expect(plan.changes).toEqual([]);
    expect(plan.refused).toEqual([
      {
        kind: 'cannot-decrease-partitions',
        current: 24,
        desired: 12,
        message: expect.stringMatching(/has 24 partitions.*never decreased/),
      },
    ]);
  });

  it('refuses to change the replication factor, and still alters the configs that differ', () => {
    const plan = planTopic(
      deadLetterTopicSpec(),
      current({ name: 'events.cloudevents.v1.dlq', partitions: 3, replicationFactor: 3 }),
    );
    expect(plan.changes).toEqual([
      {
        kind: 'alter-configs',
        configs: {
          'cleanup.policy': 'compact,delete',
          'max.message.bytes': '4194304',
          'segment.ms': '3600000',
        },
      },
    ]);
    expect(plan.refused).toEqual([
      {
        kind: 'cannot-change-replication-factor',
        current: 3,
        desired: 1,
        message: expect.stringMatching(/replication factor is 3, spec asks 1/),
      },
    ]);
  });

  it('refuses specs Kafka would refuse, before planning', () => {
    expect(() => validateSpec({ ...eventTopicSpec(), name: 'bad name' })).toThrow(/invalid topic name/);
    expect(() => validateSpec({ ...eventTopicSpec(), partitions: 0 })).toThrow(/partitions/);
    expect(() => validateSpec({ ...eventTopicSpec(), replicationFactor: 1.5 })).toThrow(/replicationFactor/);
    expect(() => planTopic({ ...eventTopicSpec(), partitions: -1 }, undefined)).toThrow(/partitions/);
    expect(() => validateSpecs([eventTopicSpec('x'), deadLetterTopicSpec('x')])).toThrow(/duplicate/);
  });
});
