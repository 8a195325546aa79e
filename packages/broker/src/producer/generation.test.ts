import { describe, expect, it } from 'vitest';
import { readProducerConfig } from '../config/producer.js';
import { kafkajsRetries } from './generation.js';

describe('kafkajs retries of the producer', () => {
  it('are bounded by the delivery timeout', () => {
    expect(kafkajsRetries(readProducerConfig({}))).toBe(1);
    expect(
      kafkajsRetries(readProducerConfig({ BROKER_DELIVERY_TIMEOUT: '30s', BROKER_REQUEST_TIMEOUT: '1s' })),
    ).toBe(14);
  });
});
