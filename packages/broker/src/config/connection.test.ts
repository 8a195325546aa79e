import { describe, expect, it } from 'vitest';
import { DEAD_LETTER_TOPIC, EVENT_TOPIC, readBrokerConnection } from './connection.js';
import { readConsumerBrokerConfig } from './consumer.js';

describe('shared broker connection', () => {
  it("has the spec's defaults: local broker, event topic, its .dlq, 168 h retention", () => {
    expect(readBrokerConnection({})).toEqual({
      bootstrapServers: ['localhost:9092'],
      topic: 'events.cloudevents.v1',
      dlqTopic: 'events.cloudevents.v1.dlq',
      retentionHours: 168,
    });
    expect([EVENT_TOPIC, DEAD_LETTER_TOPIC]).toEqual(['events.cloudevents.v1', 'events.cloudevents.v1.dlq']);
  });
  it('derives the dead-letter topic from BROKER_TOPIC unless BROKER_DLQ_TOPIC names one', () => {
    expect(readBrokerConnection({ BROKER_TOPIC: 'a' }).dlqTopic).toBe('a.dlq');
    expect(readBrokerConnection({ BROKER_TOPIC: 'a', BROKER_DLQ_TOPIC: 'dead' }).dlqTopic).toBe('dead');
  });
  it('refuses bad values with one line naming the variable', () => {
    expect(() => readBrokerConnection({ BROKER_BOOTSTRAP_SERVERS: 'localhost' })).toThrow(
      /^BROKER_BOOTSTRAP_SERVERS: expected a comma-separated list of host:port items, got "localhost"$/,
    );
    expect(() => readBrokerConnection({ BROKER_BOOTSTRAP_SERVERS: 'a:1, b:2' })).not.toThrow();
    expect(() => readBrokerConnection({ BROKER_TOPIC: 'bad topic' })).toThrow(
      /^BROKER_TOPIC: expected a Kafka topic name/,
    );
    expect(() => readBrokerConnection({ BROKER_DLQ_TOPIC: 'x/y' })).toThrow(/^BROKER_DLQ_TOPIC/);
    expect(() => readBrokerConnection({ BROKER_LOG_RETENTION_HOURS: '0' })).toThrow(
      /^BROKER_LOG_RETENTION_HOURS/,
    );
  });
});

describe('consumer broker settings', () => {
  it('add the group and client id to the connection, with the defaults of Document 2', () => {
    expect(readConsumerBrokerConfig({ BROKER_LOG_RETENTION_HOURS: '24' })).toEqual({
      bootstrapServers: ['localhost:9092'],
      topic: 'events.cloudevents.v1',
      dlqTopic: 'events.cloudevents.v1.dlq',
      retentionHours: 24,
      groupId: 'cobalt-cloudevents-v1',
      clientId: 'observatory-consumer',
    });
  });
});
