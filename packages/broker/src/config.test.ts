import { ConfigError } from '@event-observatory/service-kit/config';
import { describe, expect, it } from 'vitest';
import { brokerConfigFromEnv, DEFAULT_PRODUCER_PROPERTIES } from './config.js';
import { kafkajsRetries } from './producer.js';

describe('broker configuration', () => {
  it('has the defaults of the Limits table', () => {
    const c = brokerConfigFromEnv({});
    expect(c).toMatchObject({
      bootstrapServers: ['localhost:9092'],
      topic: 'events.cloudevents.v1',
      maxBlockMs: 2000,
      deliveryTimeoutMs: 10_000,
      requestTimeoutMs: 5000,
      closeTimeoutMs: 10_000,
      queueCapacity: 1024,
      queueBytes: 134_217_728,
      lingerMs: 5,
    });
    expect(c.producer).toEqual(DEFAULT_PRODUCER_PROPERTIES);
  });
  it('refuses a delivery timeout shorter than linger plus request timeout, naming the variable', () => {
    expect(() =>
      brokerConfigFromEnv({
        BROKER_DELIVERY_TIMEOUT: '5s',
        BROKER_LINGER: '5ms',
        BROKER_REQUEST_TIMEOUT: '5s',
      }),
    ).toThrow(/^BROKER_DELIVERY_TIMEOUT: must be at least/);
  });
  it('merges overrides under the fixed durability properties', () => {
    const c = brokerConfigFromEnv({
      BROKER_PRODUCER_OVERRIDES: 'clientId=x, idempotent=false,acks=1,compression=gzip',
    });
    expect(c.producer.clientId).toBe('x');
    expect(c.producer.compression).toBe('gzip');
    expect(c.ignoredOverrides).toEqual(['idempotent', 'acks']);
  });
  it('refuses unknown override keys and bad bootstrap lists', () => {
    expect(() => brokerConfigFromEnv({ BROKER_PRODUCER_OVERRIDES: 'lingerMs=5' })).toThrow(ConfigError);
    expect(() => brokerConfigFromEnv({ BROKER_BOOTSTRAP_SERVERS: 'localhost' })).toThrow(
      /BROKER_BOOTSTRAP_SERVERS/,
    );
    expect(() => brokerConfigFromEnv({ BROKER_QUEUE_CAPACITY: '0' })).toThrow(/BROKER_QUEUE_CAPACITY/);
  });
  it('bounds the kafkajs retries by the delivery timeout', () => {
    expect(kafkajsRetries(brokerConfigFromEnv({}))).toBe(1);
    expect(
      kafkajsRetries(brokerConfigFromEnv({ BROKER_DELIVERY_TIMEOUT: '30s', BROKER_REQUEST_TIMEOUT: '1s' })),
    ).toBe(14);
  });
});
