import { describe, expect, it } from 'vitest';
import { API_VERSION, KIND, type Pipeline } from '../pipeline/types.js';
import { clusterOf, clusterRules } from './cluster.js';
import { desiredTopics } from './desired.js';
import { claimants, entitlement, sharingPipelines, topicOwners } from './ownership.js';
import { DEFAULT_RESERVED_TOPICS } from './safety.js';

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

/** Two clusters: the controller's own, and `other`. */
const DEFAULT = clusterRules(['kafka:9092'], [['kafka:9092'], ['other:9092']]);

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

  it('identifies a cluster by its allowlist entry: servers in any order, the default when a Pipeline names none', () => {
    const rules = clusterRules(['kafka:9092'], [['b:1', 'a:2'], ['kafka:9092']]);
    expect(clusterOf(pipeline('n', 'p', '', [], 'b:1,a:2'), rules)).toBe('a:2,b:1');
    expect(clusterOf(pipeline('n', 'p', '', []), rules)).toBe('kafka:9092');
  });

  it('gives a topic to its owner however another Pipeline spells the same cluster: case, spaces, duplicates, one broker of several, another listener', () => {
    // One cluster of three brokers, each with a plaintext and a TLS listener.
    const entry = [
      'kafka-0:9092',
      'kafka-1:9092',
      'kafka-2:9092',
      'kafka-0:9093',
      'kafka-1:9093',
      'kafka-2:9093',
    ];
    const rules = clusterRules(['kafka-0:9092', 'kafka-1:9092', 'kafka-2:9092'], [entry, ['other:9092']]);
    const owner = pipeline('observatory', 'events', '2026-01-01T00:00:00Z', ['events.cloudevents.v1']);
    for (const spelling of [
      'KAFKA-0:9092,Kafka-1:9092,kafka-2:9092',
      ' kafka-2:9092 , kafka-0:9092,kafka-0:9092',
      'kafka-1:9092',
      'kafka-1:9093',
    ]) {
      const rival = pipeline('team', 'x', '2026-02-01T00:00:00Z', ['events.cloudevents.v1'], spelling);
      expect(clusterOf(rival, rules)).toBe(clusterOf(owner, rules));
      const owners = topicOwners([owner, rival], rules);
      const desired = desiredTopics(rival, owners, clusterOf(rival, rules), () => false);
      expect(desired.managed).toEqual([]);
      expect(desired.conflicts).toEqual([{ name: 'events.cloudevents.v1', owner: 'observatory/events' }]);
      // And the owner, deleted, keeps the topic the rival declares (it is the same cluster's).
      expect(claimants(owner, [owner, rival], clusterOf(owner, rules), rules)).toEqual(
        new Map([['events.cloudevents.v1', 'team/x']]),
      );
    }
  });

  it('puts the release namespace first: its Pipelines own what they declare whatever their age, and another namespace claims none of it', () => {
    const release = pipeline('observatory', 'events', '2026-03-01T00:00:00Z', ['events.cloudevents.v1']);
    const tenant = pipeline('events', 'x', '2026-01-01T00:00:00Z', ['events.cloudevents.v1', 'events.own']);
    const owners = topicOwners([tenant, release], DEFAULT, 'observatory');
    expect(owners.get('kafka:9092|events.cloudevents.v1')).toBe('observatory/events');
    expect(owners.get('kafka:9092|events.own')).toBe('events/x');
    // Without the rule (a template of the operator's), the older wins.
    expect(topicOwners([tenant, release], DEFAULT).get('kafka:9092|events.cloudevents.v1')).toBe('events/x');
    // The release's Pipeline, deleted, is not held back by the tenant's refused claim.
    expect(claimants(release, [release, tenant], 'kafka:9092', DEFAULT, 'observatory')).toEqual(new Map());
    expect(claimants(tenant, [release, tenant], 'kafka:9092', DEFAULT, 'observatory')).toEqual(
      new Map([['events.cloudevents.v1', 'observatory/events']]),
    );
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

  describe('entitlement to a declared topic', () => {
    const RULES = { reserved: DEFAULT_RESERVED_TOPICS, adoptable: [] };
    /** `p` with a status recording `managed` topics in `cluster` (default: none recorded). */
    const recorded = (p: Pipeline, managed: string[], cluster = 'kafka:9092'): Pipeline => ({
      ...p,
      status: { cluster, topics: managed.map((name) => ({ name, phase: 'Ready', managed: true })) },
    });

    it('is the owner with a record of the topic as managed in its cluster, the name not reserved', () => {
      const own = recorded(pipeline('team-a', 'p', '2026-01-01T00:00:00Z', ['a.events', 'a.new']), [
        'a.events',
      ]);
      const judge = entitlement([own], DEFAULT, RULES);
      expect(judge(own, 'a.events')).toBeUndefined();
      // Declared and owned, not (yet) created or adopted for it: an existing topic nobody else declares.
      expect(judge(own, 'a.new')).toBe('TopicNotOwned');
      // A record of another cluster counts for nothing.
      const moved = recorded(own, ['a.events'], 'other:9092');
      expect(entitlement([moved], DEFAULT, RULES)(moved, 'a.events')).toBe('TopicNotOwned');
    });

    it("never another Pipeline's topic (one name for all: the older owns), even with a stale record; a reserved name never", () => {
      const owner = recorded(pipeline('team-a', 'payments', '2026-01-01T00:00:00Z', ['payments.events']), [
        'payments.events',
      ]);
      const intruder = recorded(
        pipeline('team-b', 'x', '2026-02-01T00:00:00Z', [
          'payments.events',
          '__consumer_offsets',
          '_schemas',
        ]),
        ['payments.events', '__consumer_offsets', '_schemas'],
      );
      const judge = entitlement([owner, intruder], DEFAULT, RULES);
      expect(judge(owner, 'payments.events')).toBeUndefined();
      expect(judge(intruder, 'payments.events')).toBe('TopicNotOwned');
      expect(judge(intruder, '__consumer_offsets')).toBe('ReservedTopicName');
      expect(judge(intruder, '_schemas')).toBe('ReservedTopicName');
      // Kafka's own topics whatever the operator's rules.
      expect(
        entitlement([intruder], DEFAULT, { reserved: [], adoptable: [] })(intruder, '__consumer_offsets'),
      ).toBe('ReservedTopicName');
    });

    it('keeps the release namespace first: its topic is TopicNameCollision to another namespace, whatever its record', () => {
      const release = pipeline('observatory', 'events', '2026-03-01T00:00:00Z', ['events.cloudevents.v1']);
      const tenant = recorded(pipeline('events', 'x', '2026-01-01T00:00:00Z', ['events.cloudevents.v1']), [
        'events.cloudevents.v1',
      ]);
      expect(
        entitlement([release, tenant], DEFAULT, RULES, 'observatory')(tenant, 'events.cloudevents.v1'),
      ).toBe('TopicNameCollision');
    });
  });
});
