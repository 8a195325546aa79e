import { describe, expect, it } from 'vitest';
import { API_VERSION, KIND, type Pipeline } from '../pipeline/types.js';
import { claimants, clusterOf, sharingPipelines, topicOwners } from './ownership.js';

function pipeline(
  namespace: string,
  name: string,
  created: string,
  topics: string[],
  servers?: string,
): Pipeline {
  return {
    apiVersion: API_VERSION,
    kind: KIND,
    metadata: { namespace, name, creationTimestamp: created },
    spec: {
      ...(servers ? { kafka: { bootstrapServers: servers } } : {}),
      topics: topics.map((t) => ({ name: t, partitions: 1, replicationFactor: 1 })),
    },
  };
}

const DEFAULT = ['kafka:9092'];

describe('topic ownership', () => {
  it('gives a topic claimed twice to the older Pipeline, whatever the listing order', () => {
    const old = pipeline('b', 'old', '2026-01-01T00:00:00Z', ['t1', 't2']);
    const young = pipeline('a', 'young', '2026-01-02T00:00:00Z', ['t2', 't3']);
    for (const order of [
      [old, young],
      [young, old],
    ]) {
      const owners = topicOwners(order, DEFAULT);
      expect(owners.get('kafka:9092|t2')).toBe('b/old');
      expect(owners.get('kafka:9092|t3')).toBe('a/young');
    }
  });

  it('breaks a tie of creation times by namespace/name', () => {
    const a = pipeline('ns', 'a', '2026-01-01T00:00:00Z', ['t']);
    const b = pipeline('ns', 'b', '2026-01-01T00:00:00Z', ['t']);
    expect(topicOwners([b, a], DEFAULT).get('kafka:9092|t')).toBe('ns/a');
  });

  it('treats the same topic name on another Kafka cluster as another topic', () => {
    const here = pipeline('ns', 'here', '2026-01-01T00:00:00Z', ['t']);
    const there = pipeline('ns', 'there', '2026-01-02T00:00:00Z', ['t'], 'other:9092');
    const owners = topicOwners([here, there], DEFAULT);
    expect(owners.get('kafka:9092|t')).toBe('ns/here');
    expect(owners.get('other:9092|t')).toBe('ns/there');
    expect(sharingPipelines(here, [here, there], DEFAULT)).toEqual([]);
  });

  it('identifies a cluster by its servers in any order, the default when a Pipeline names none', () => {
    expect(clusterOf(pipeline('n', 'p', '', [], 'b:1,a:2'), DEFAULT)).toBe('a:2,b:1');
    expect(clusterOf(pipeline('n', 'p', '', []), DEFAULT)).toBe('kafka:9092');
  });

  it('lists the other Pipelines that share a topic, to requeue them', () => {
    const a = pipeline('ns', 'a', '2026-01-01T00:00:00Z', ['t1']);
    const b = pipeline('ns', 'b', '2026-01-02T00:00:00Z', ['t1', 't2']);
    const c = pipeline('ns', 'c', '2026-01-03T00:00:00Z', ['t3']);
    expect(sharingPipelines(a, [a, b, c], DEFAULT)).toEqual(['ns/b']);
  });

  it('names, for each topic of a Pipeline being deleted, another Pipeline of its cluster that declares it', () => {
    const gone = pipeline('ns', 'gone', '2026-01-01T00:00:00Z', ['t1', 't2', 't3']);
    const b = pipeline('ns', 'b', '2026-01-02T00:00:00Z', ['t1']);
    const elsewhere = pipeline('ns', 'c', '2026-01-03T00:00:00Z', ['t2'], 'other:9092');
    expect(claimants(gone, [gone, b, elsewhere], 'kafka:9092', DEFAULT)).toEqual(new Map([['t1', 'ns/b']]));
  });
});
