import { ConfigError } from '@event-observatory/service-kit/config';
import { describe, expect, it } from 'vitest';
import {
  clientRetries,
  DEFAULT_PRODUCER_PROPERTIES,
  producerConfig,
  readProducerConfig,
  sendRetries,
} from './producer.js';

describe('producer configuration', () => {
  it('has the defaults of the Limits table', () => {
    const c = readProducerConfig({});
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
      readProducerConfig({
        BROKER_DELIVERY_TIMEOUT: '5s',
        BROKER_LINGER: '5ms',
        BROKER_REQUEST_TIMEOUT: '5s',
      }),
    ).toThrow(/^BROKER_DELIVERY_TIMEOUT: must be at least/);
    expect(() =>
      producerConfig({ bootstrapServers: ['h:1'], deliveryTimeoutMs: 100, requestTimeoutMs: 100 }),
    ).toThrow(/^BROKER_DELIVERY_TIMEOUT/);
  });
  it('merges overrides under the fixed durability properties', () => {
    const c = readProducerConfig({
      BROKER_PRODUCER_OVERRIDES: 'clientId=x, idempotent=false,acks=1,compression=gzip',
    });
    expect(c.producer.clientId).toBe('x');
    expect(c.producer.compression).toBe('gzip');
    expect(c.ignoredOverrides).toEqual(['idempotent', 'acks']);
  });
  it('refuses unknown override keys and a queue capacity of zero', () => {
    expect(() => readProducerConfig({ BROKER_PRODUCER_OVERRIDES: 'lingerMs=5' })).toThrow(ConfigError);
    expect(() => readProducerConfig({ BROKER_QUEUE_CAPACITY: '0' })).toThrow(/BROKER_QUEUE_CAPACITY/);
  });
  it('built from values, keeps the defaults for the rest', () => {
    const c = producerConfig({ bootstrapServers: ['h:1'], topic: 't', queueCapacity: 2 });
    expect(c).toMatchObject({ topic: 't', queueCapacity: 2, deliveryTimeoutMs: 10_000 });
  });
});

describe('retries inside the library', () => {
  it("of the client's requests are as many attempts as fit in the delivery timeout", () => {
    expect(clientRetries(readProducerConfig({}))).toBe(1);
    expect(
      clientRetries(readProducerConfig({ BROKER_DELIVERY_TIMEOUT: '30s', BROKER_REQUEST_TIMEOUT: '1s' })),
    ).toBe(14);
  });

  it('of one send are as many as their backoffs fit in the delivery timeout less one request timeout', () => {
    // 100 + 200 + 400 + 800 + 1000 + 1000 + 1000 ms < 10 s - 5 s; an eighth backoff would not fit.
    expect(sendRetries(readProducerConfig({}))).toBe(7);
    // 1.5 s for the first four, then 1 s each: 27 more within 30 s - 1 s.
    expect(
      sendRetries(readProducerConfig({ BROKER_DELIVERY_TIMEOUT: '30s', BROKER_REQUEST_TIMEOUT: '1s' })),
    ).toBe(31);
    expect(
      sendRetries(readProducerConfig({ BROKER_DELIVERY_TIMEOUT: '1100ms', BROKER_REQUEST_TIMEOUT: '1s' })),
    ).toBe(1);
  });
});
