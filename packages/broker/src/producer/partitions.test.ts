import { Partitioners } from 'kafkajs';
import { describe, expect, it } from 'vitest';
import { PartitionCache } from './partitions.js';

describe('the partition of a key', () => {
  it("is kafkajs' default partitioner's choice (murmur2, as the Java client), remembered per key", () => {
    const cache = new PartitionCache('t');
    cache.observe(12);
    const partitioner = Partitioners.DefaultPartitioner();
    const partitionMetadata = Array.from({ length: 12 }, (_, partitionId) => ({
      partitionId,
      partitionErrorCode: 0,
      leader: 1,
      replicas: [1],
      isr: [1],
    }));
    const keys = ['a', 'urn:s#sub', 'https://bench.example/src/1#'];
    const expected = keys.map((key) =>
      partitioner({ topic: 't', partitionMetadata, message: { key, value: null } }),
    );
    expect(keys.map((k) => cache.partitionOf(k))).toEqual(expected);
    expect(keys.map((k) => cache.partitionOf(k))).toEqual(expected); // remembered: same answer
  });

  it('is computed again once the topic has more partitions, never for a stale smaller count', () => {
    const cache = new PartitionCache('t');
    cache.observe(1);
    expect(cache.partitionOf('k')).toBe(0);
    cache.observe(0);
    expect(cache.count).toBe(1);
    cache.observe(64);
    expect(cache.count).toBe(64);
    const spread = new Set(Array.from({ length: 200 }, (_, i) => cache.partitionOf(`k${i}`)));
    expect(spread.size).toBeGreaterThan(30);
  });
});
