import { describe, expect, it } from 'vitest';
import { brokerTopics, DEAD_LETTER_TOPIC, EVENT_TOPIC, readBrokerTopics } from './connection.js';
import { readConsumerBrokerConfig } from './consumer.js';
import { readProducerConfig } from './producer.js';

describe('the topics', () => {
  it("have the spec's defaults: the event topic, its .dlq, kept 168 h", () => {
    expect(readBrokerTopics({})).toEqual({
      topic: 'events.cloudevents.v1',
      dlqTopic: 'events.cloudevents.v1.dlq',
      retentionHours: 168,
    });
    expect([EVENT_TOPIC, DEAD_LETTER_TOPIC]).toEqual(['events.cloudevents.v1', 'events.cloudevents.v1.dlq']);
  });
  it('derive the dead-letter topic from BROKER_TOPIC unless BROKER_DLQ_TOPIC names one', () => {
    expect(readBrokerTopics({ BROKER_TOPIC: 'a' }).dlqTopic).toBe('a.dlq');
    expect(readBrokerTopics({ BROKER_TOPIC: 'a', BROKER_DLQ_TOPIC: 'dead' }).dlqTopic).toBe('dead');
    expect(brokerTopics({ topic: 'b' })).toEqual({ topic: 'b', dlqTopic: 'b.dlq', retentionHours: 168 });
  });
  it('refuse bad values with one line naming the variable', () => {
    expect(() => readBrokerTopics({ BROKER_TOPIC: 'bad topic' })).toThrow(
      /^BROKER_TOPIC: expected a Kafka topic name/,
    );
    expect(() => readBrokerTopics({ BROKER_DLQ_TOPIC: 'x/y' })).toThrow(/^BROKER_DLQ_TOPIC/);
    expect(() => readBrokerTopics({ BROKER_LOG_RETENTION_HOURS: '0' })).toThrow(
      /^BROKER_LOG_RETENTION_HOURS/,
    );
  });
});

describe('BROKER_BOOTSTRAP_SERVERS', () => {
  it('is checked the same way for the producer and the consumer: host:port items', () => {
    for (const read of [readProducerConfig, readConsumerBrokerConfig]) {
      expect(read({ BROKER_BOOTSTRAP_SERVERS: 'a:1, b:2' }).bootstrapServers).toEqual(['a:1', 'b:2']);
      expect(() => read({ BROKER_BOOTSTRAP_SERVERS: 'localhost' })).toThrow(
        /^BROKER_BOOTSTRAP_SERVERS: expected a comma-separated list of host:port items, got "localhost"$/,
      );
    }
  });
});

describe('consumer broker settings', () => {
  it('are the servers, both topics, the group and the client id, with the documented defaults', () => {
    expect(readConsumerBrokerConfig({})).toEqual({
      bootstrapServers: ['localhost:9092'],
      topic: 'events.cloudevents.v1',
      dlqTopic: 'events.cloudevents.v1.dlq',
      groupId: 'cobalt-cloudevents-v1',
      clientId: 'observatory-consumer',
      sessionTimeoutMs: 30_000,
      security: { protocol: 'PLAINTEXT' },
    });
    expect(readConsumerBrokerConfig({ BROKER_TOPIC: 't' }).dlqTopic).toBe('t.dlq');
  });

  it('take a session timeout of 10 s to 30 min', () => {
    expect(readConsumerBrokerConfig({ BROKER_SESSION_TIMEOUT: '10s' }).sessionTimeoutMs).toBe(10_000);
    expect(() => readConsumerBrokerConfig({ BROKER_SESSION_TIMEOUT: '9s' })).toThrow(
      /BROKER_SESSION_TIMEOUT/,
    );
    expect(() => readConsumerBrokerConfig({ BROKER_SESSION_TIMEOUT: '31m' })).toThrow(
      /BROKER_SESSION_TIMEOUT/,
    );
  });
});
