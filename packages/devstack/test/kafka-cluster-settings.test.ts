import { stackTopics } from '@event-observatory/devstack';
import { describe, expect, it } from 'vitest';
import { clusterSettings } from '../src/kafka-cluster.js';
import { replicatedTopics } from '../src/stack.js';

describe('the settings of a three-node cluster', () => {
  it('replicates internal topics three times and needs two in-sync copies for acks=all', () => {
    const settings = clusterSettings({
      nodeId: 2,
      voters: '1@127.0.0.1:1,2@127.0.0.1:2,3@127.0.0.1:3',
      nodes: 3,
      listeners: 'PLAINTEXT://127.0.0.1:9092,CONTROLLER://127.0.0.1:2',
      advertised: 'PLAINTEXT://127.0.0.1:9092',
      protocolMap: 'PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT',
    });
    expect(settings).toMatchObject({
      'node.id': '2',
      'offsets.topic.replication.factor': '3',
      'transaction.state.log.min.isr': '2',
      'min.insync.replicas': '2',
    });
  });

  it('gives the default topics replication factor 3 and min.insync.replicas 2, at most the node count', () => {
    const three = replicatedTopics(stackTopics({}), 3);
    expect(three.map((t) => [t.replicationFactor, t.configs['min.insync.replicas']])).toEqual([
      [3, '2'],
      [3, '2'],
    ]);
    expect(replicatedTopics(stackTopics({}), 2)[0]).toMatchObject({ replicationFactor: 2 });
  });
});
