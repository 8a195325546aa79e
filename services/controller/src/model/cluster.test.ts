import { describe, expect, it } from 'vitest';
import { allowedClusters, clusterKey, clusterRefusal, normalServers, sameCluster } from './cluster.js';

const ALLOWED = allowedClusters([['kafka-0:9092', 'KAFKA-1:9092'], ['other:9092']]);

describe('Kafka cluster identity', () => {
  it('compares servers as Kafka resolves them: trimmed, host without case, each once, sorted', () => {
    expect(normalServers([' Kafka-1:9092', 'kafka-0:9092', 'KAFKA-0:9092', ''])).toEqual([
      'kafka-0:9092',
      'kafka-1:9092',
    ]);
  });

  it('keys a cluster by the allowlist entry that holds every server, whatever subset or spelling names it', () => {
    for (const servers of [['kafka-0:9092'], ['KAFKA-1:9092', 'kafka-0:9092 '], ['kafka-1:9092']])
      expect(clusterKey(servers, ALLOWED)).toBe('kafka-0:9092,kafka-1:9092');
    expect(clusterKey(['other:9092'], ALLOWED)).toBe('other:9092');
    // Outside the allowlist, or across two entries: a cluster of its own, which no entry equals.
    expect(clusterKey(['evil:9092', 'kafka-0:9092'], ALLOWED)).toBe('evil:9092,kafka-0:9092');
    expect(clusterKey(['other:9092', 'kafka-0:9092'], ALLOWED)).toBe('kafka-0:9092,other:9092');
  });

  it('allows a cluster only when every server is in the allowlist (host case ignored), all of one entry', () => {
    expect(clusterRefusal(['KAFKA-0:9092'], ALLOWED)).toBeUndefined();
    expect(clusterRefusal(['evil:9092', 'kafka-0:9092'], ALLOWED)).toBe(
      'evil:9092 not in CONTROLLER_ALLOWED_BOOTSTRAP',
    );
    expect(clusterRefusal(['kafka-0:9093'], ALLOWED)).toBe(
      'kafka-0:9093 not in CONTROLLER_ALLOWED_BOOTSTRAP',
    );
    expect(clusterRefusal(['other:9092', 'kafka-0:9092'], ALLOWED)).toBe(
      'kafka-0:9092, other:9092 are servers of different clusters of CONTROLLER_ALLOWED_BOOTSTRAP',
    );
  });

  it('keeps a recorded cluster through servers added to or removed from its entry, not through a move to another entry', () => {
    const grown = allowedClusters([['kafka-0:9092', 'kafka-1:9092', 'kafka-2:9092'], ['other:9092']]);
    expect(sameCluster('kafka-0:9092,kafka-1:9092', 'kafka-0:9092,kafka-1:9092,kafka-2:9092', grown)).toBe(
      true,
    );
    const shrunk = allowedClusters([['kafka-1:9092'], ['other:9092']]);
    expect(sameCluster('kafka-0:9092,kafka-1:9092', 'kafka-1:9092', shrunk)).toBe(true);
    expect(sameCluster('kafka-0:9092,kafka-1:9092', 'other:9092', ALLOWED)).toBe(false);
    const moved = allowedClusters([['kafka-0:9092'], ['kafka-1:9092']]);
    expect(sameCluster('kafka-0:9092,kafka-1:9092', 'kafka-1:9092', moved)).toBe(false);
    expect(sameCluster('gone:9092', 'other:9092', ALLOWED)).toBe(false);
  });
});
