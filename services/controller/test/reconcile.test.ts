/**
 * Reconciling Pipelines into Kafka through the whole loop (fast-tier.ts): creation, partitions,
 * adoption, refusals, drift, conflicts, pause, unmanaged topics, the safe defaults, and what a
 * failed API call does to a reconcile.
 */
import { deleteTopics } from '@event-observatory/broker';
import { withKafkaAdmin } from '@event-observatory/devstack';
import { describe, expect, it, vi } from 'vitest';
import {
  ADOPT_TOPICS_ANNOTATION,
  CONTROLLER_ANNOTATION,
  FINALIZER,
  PAUSE_ANNOTATION,
  type Pipeline,
  UNMANAGED_TOPICS_ANNOTATION,
} from '../src/pipeline/types.js';
import { FakeApiServer } from '../src/testing/fake-api-server.js';
import {
  adoptTopic,
  bareReconciler,
  bootstrapServers,
  CONTROLLER_NAME,
  condition,
  createServedTopics,
  createWithTopic,
  kafkaTopic,
  meta,
  NAMESPACE,
  PATIENCE,
  pipeline,
  reasons,
  retentionDay,
  secured,
  setPartitions,
  startController,
  topicName,
  useFastTier,
  waitReady,
  witness,
} from './fast-tier.js';

useFastTier();

describe('reconciling Pipelines into Kafka', () => {
  it('creates the declared topics with their partitions and configs, and reports Ready=True for the current generation', async () => {
    const { server, metric } = startController();
    const events = topicName('events');
    const dlq = topicName('dlq');
    server.create(
      pipeline('main', [
        { name: events, partitions: 3, replicationFactor: 1, config: { 'retention.ms': retentionDay } },
        { name: dlq, partitions: 1, replicationFactor: 1, config: { 'cleanup.policy': 'compact' } },
      ]),
    );
    const p = await waitReady(server, 'main', 'True');
    expect(p.metadata.finalizers ?? []).not.toContain(FINALIZER); // Retain: no finalizer
    const ready = (name: string, partitions: number, config: Record<string, string>) =>
      ({ name, phase: 'Ready', partitions, replicationFactor: 1, config, managed: true }) as const;
    expect(p.status?.topics).toEqual([
      ready(events, 3, { 'retention.ms': retentionDay }),
      ready(dlq, 1, { 'cleanup.policy': 'compact' }),
    ]);
    expect(p.status?.topicsReady).toBe('2/2');
    expect(condition(p, 'Ready')?.reason).toBe('Reconciled');
    expect(condition(p, 'Conflict')?.status).toBe('False');
    expect(await kafkaTopic(events, ['retention.ms'])).toMatchObject({
      partitions: 3,
      replicationFactor: 1,
      configs: { 'retention.ms': retentionDay },
    });
    expect((await kafkaTopic(dlq, ['cleanup.policy']))?.configs['cleanup.policy']).toBe('compact');
    expect(reasons(server, 'main')).toEqual(['TopicCreated', 'TopicCreated']);
    expect(await metric('controller_reconciles_total', { outcome: 'success' })).toBeGreaterThan(0);
    expect(await metric('controller_topics_managed')).toBe(2);
  });

  it('raises partitions in Kafka when the spec raises them', async () => {
    const { server } = startController();
    const grown = createWithTopic(server, 'grower');
    await waitReady(server, 'grower', 'True');
    setPartitions(server, 'grower', 0, 4);
    const p = await waitReady(server, 'grower', 'True');
    expect(p.metadata.generation).toBe(2);
    expect(p.status?.topics?.[0]?.partitions).toBe(4);
    expect((await kafkaTopic(grown))?.partitions).toBe(4);
    expect(reasons(server, 'grower')).toContain('PartitionsIncreased');
  });

  it('adopts a topic that exists already only with the adopt annotation: no conflict, partitions and configs brought in line', async () => {
    const { server } = startController();
    const existing = await adoptTopic(server, 'adopter', { existing: 1, declared: 2 });
    const p = await waitReady(server, 'adopter', 'True');
    expect(condition(p, 'Conflict')?.status).toBe('False');
    expect(await kafkaTopic(existing, ['retention.ms'])).toMatchObject({
      partitions: 2,
      configs: { 'retention.ms': retentionDay },
    });
    expect(reasons(server, 'adopter')).toEqual(['PartitionsIncreased', 'ConfigsUpdated']);
  });

  it('refuses to decrease partitions: Ready=False with the reason, the topic keeps its partitions, its configs are still applied', async () => {
    const { server, metric } = startController();
    const existing = await adoptTopic(server, 'narrow', { existing: 4, declared: 2 });
    const p = await waitReady(server, 'narrow', 'False');
    expect(condition(p, 'Ready')).toMatchObject({
      reason: 'PartitionDecreaseRefused',
      message: `${existing}: has 4 partitions, spec asks 2; partitions are never decreased`,
    });
    expect(p.status?.topics?.[0]).toMatchObject({ name: existing, phase: 'Refused', partitions: 4 });
    expect(p.status?.topicsReady).toBe('0/1');
    expect(await kafkaTopic(existing, ['retention.ms'])).toMatchObject({
      partitions: 4,
      configs: { 'retention.ms': retentionDay },
    });
    // The Warning follows the status write it tells of.
    await vi.waitFor(() =>
      expect(server.events.filter((e) => e.type === 'Warning').map((e) => e.reason)).toEqual([
        'ChangeRefused',
      ]),
    );
    expect(await metric('controller_reconciles_total', { outcome: 'failure' })).toBeGreaterThan(0);
  });

  it('sets a config changed directly in Kafka back at the next resync, and keeps configs the spec does not name', async () => {
    const resyncMs = 500;
    const { server } = startController({ resyncMs });
    const drifting = topicName('drifting');
    server.create(
      pipeline('drift', [
        { name: drifting, partitions: 1, replicationFactor: 1, config: { 'retention.ms': retentionDay } },
      ]),
    );
    await waitReady(server, 'drift', 'True');
    await witness().alterConfigs({
      validateOnly: false,
      resources: [
        {
          type: 2,
          name: drifting,
          configEntries: [
            { name: 'retention.ms', value: '1234' },
            { name: 'segment.ms', value: '3600000' },
          ],
        },
      ],
    });
    await vi.waitFor(
      async () =>
        expect(await kafkaTopic(drifting, ['retention.ms', 'segment.ms'])).toMatchObject({
          configs: { 'retention.ms': retentionDay, 'segment.ms': '3600000' },
        }),
      { timeout: resyncMs + 5_000, interval: 100 },
    );
    await vi.waitFor(() => expect(reasons(server, 'drift')).toContain('ConfigsUpdated'), PATIENCE);
  });

  it('creates again, at the next resync, a managed topic deleted directly in Kafka, without a failed reconcile', async () => {
    const resyncMs = 500;
    const { server } = startController({ resyncMs });
    const topic = createWithTopic(server, 'recreated');
    await waitReady(server, 'recreated', 'True');
    // Another client's admin: the deletion is what someone with Kafka access does by hand.
    await withKafkaAdmin(bootstrapServers, (other) => deleteTopics(other, [topic]));
    await vi.waitFor(
      () => expect(reasons(server, 'recreated').filter((r) => r === 'TopicCreated')).toHaveLength(2),
      { timeout: resyncMs + 15_000, interval: 100 },
    );
    expect(condition(await waitReady(server, 'recreated', 'True'), 'Ready')?.reason).toBe('Reconciled');
    // A loaded broker may take longer than the request timeout to serve the new topic (a Warning
    // saying so, then a retry); the admin client's view of the topic it had read is never the cause.
    const warnings = server.events.filter(
      (e) => e.object === `${NAMESPACE}/recreated` && e.type === 'Warning',
    );
    expect(
      warnings.map((e) => e.message).filter((m) => !m.includes('not served on every partition')),
    ).toEqual([]);
  });

  it('gives a topic two Pipelines declare to the older; the newer reports the conflict and takes over once the older is deleted', async () => {
    const { server } = startController();
    const shared = topicName('shared');
    server.create(
      pipeline('first', [
        { name: shared, partitions: 1, replicationFactor: 1, config: { 'cleanup.policy': 'compact' } },
      ]),
    );
    await waitReady(server, 'first', 'True');
    server.create(
      pipeline('second', [
        { name: shared, partitions: 1, replicationFactor: 1, config: { 'cleanup.policy': 'delete' } },
      ]),
    );
    const second = await waitReady(server, 'second', 'False');
    expect(condition(second, 'Ready')?.reason).toBe('TopicConflict');
    expect(condition(second, 'Conflict')).toMatchObject({
      status: 'True',
      reason: 'TopicClaimedByOlderPipeline',
      message: `${shared}: managed by the older Pipeline ${NAMESPACE}/first`,
    });
    // Not its own while the older manages it; the older created it, so it is handed over without
    // the adopt annotation when that one goes.
    expect(second.status?.topics?.[0]).toMatchObject({
      name: shared,
      phase: 'Conflict',
      managed: false,
      handOverFrom: `${NAMESPACE}/first`,
    });
    // The Warning follows the status write it tells of.
    await vi.waitFor(() => expect(reasons(server, 'second')).toEqual(['TopicConflict']), PATIENCE);
    expect((await kafkaTopic(shared, ['cleanup.policy']))?.configs['cleanup.policy']).toBe('compact');

    server.delete(meta('first')); // Retain, no finalizer: gone at once, the topic stays
    expect(server.get(meta('first'))).toBeUndefined();
    const tookOver = await waitReady(server, 'second', 'True');
    expect(condition(tookOver, 'Conflict')?.status).toBe('False');
    // A broker applies an altered config from the metadata log a moment after it answers the alter.
    await vi.waitFor(
      async () =>
        expect((await kafkaTopic(shared, ['cleanup.policy']))?.configs['cleanup.policy']).toBe('delete'),
      PATIENCE,
    );
  });

  it('changes nothing while paused (ReconciliationPaused=True), and catches up when resumed', async () => {
    const resyncMs = 300;
    const { server } = startController({ resyncMs });
    const held = createWithTopic(server, 'paused');
    await waitReady(server, 'paused', 'True');
    server.update(meta('paused'), (p) => {
      p.metadata.annotations = { [PAUSE_ANNOTATION]: 'true' };
    });
    await vi.waitFor(
      () => expect(condition(server.get(meta('paused')), 'ReconciliationPaused')?.status).toBe('True'),
      PATIENCE,
    );
    setPartitions(server, 'paused', 0, 3);
    await new Promise((r) => setTimeout(r, 3 * resyncMs)); // resyncs pass: still nothing
    expect((await kafkaTopic(held))?.partitions).toBe(1);

    server.update(meta('paused'), (p) => {
      p.metadata.annotations = {};
    });
    const resumed = await waitReady(server, 'paused', 'True');
    expect(condition(resumed, 'ReconciliationPaused')).toBeUndefined();
    expect((await kafkaTopic(held))?.partitions).toBe(3);
  });

  it('leaves the topics of the unmanaged-topics annotation alone: reported as Unmanaged, never changed, never deleted', async () => {
    const { server } = startController();
    const managed = topicName('managed');
    const untouched = topicName('untouched');
    await createServedTopics([untouched], 2);
    server.create(
      pipeline(
        'partly',
        [
          { name: managed, partitions: 1, replicationFactor: 1 },
          { name: untouched, partitions: 5, replicationFactor: 1, config: { 'retention.ms': retentionDay } },
        ],
        { deletionPolicy: 'Delete' },
        { [UNMANAGED_TOPICS_ANNOTATION]: untouched },
      ),
    );
    const p = await waitReady(server, 'partly', 'True');
    expect(p.status?.topics?.map((t) => [t.name, t.phase, t.partitions])).toEqual([
      [managed, 'Ready', 1],
      [untouched, 'Unmanaged', 2],
    ]);
    expect(p.status?.topicsReady).toBe('1/2');
    const state = await kafkaTopic(untouched, ['retention.ms']);
    expect(state?.partitions).toBe(2);
    expect(state?.configs['retention.ms']).not.toBe(retentionDay);

    server.delete(meta('partly'));
    await vi.waitFor(() => expect(server.get(meta('partly'))).toBeUndefined(), PATIENCE);
    expect(await kafkaTopic(managed)).toBeUndefined();
    expect((await kafkaTopic(untouched))?.partitions).toBe(2);
  });
});

describe('safe defaults', () => {
  it('leaves an existing topic it did not create untouched (Ready=False AdoptionRequired) until the adopt annotation names it', async () => {
    const { server } = startController();
    const existing = await adoptTopic(server, 'cautious', { existing: 1, declared: 2 }, false);
    const p = await waitReady(server, 'cautious', 'False');
    expect(condition(p, 'Ready')).toMatchObject({
      reason: 'AdoptionRequired',
      message: `${existing}: exists in Kafka and was not created by this Pipeline: add it to the annotation ${ADOPT_TOPICS_ANNOTATION} to take it over`,
    });
    expect(p.status?.topics?.[0]).toMatchObject({
      name: existing,
      phase: 'Blocked',
      partitions: 1,
      managed: false,
    });
    expect(await kafkaTopic(existing, ['retention.ms'])).toMatchObject({ partitions: 1 });
    expect((await kafkaTopic(existing, ['retention.ms']))?.configs['retention.ms']).not.toBe(retentionDay);
    await vi.waitFor(() => expect(server.events.map((e) => e.reason)).toEqual(['ChangeRefused']));

    server.update(meta('cautious'), (q) => {
      q.metadata.annotations = { [ADOPT_TOPICS_ANNOTATION]: '*' };
    });
    const adopted = await waitReady(server, 'cautious', 'True');
    expect(adopted.status?.topics?.[0]).toMatchObject({ phase: 'Ready', partitions: 2, managed: true });
    // Once adopted it stays managed: the annotation may go.
    server.update(meta('cautious'), (q) => {
      q.metadata.annotations = {};
    });
    setPartitions(server, 'cautious', 0, 3);
    await waitReady(server, 'cautious', 'True');
    expect((await kafkaTopic(existing))?.partitions).toBe(3);
  });

  it('administers only allowlisted clusters: another one gets Ready=False ClusterNotAllowed and nothing is created', async () => {
    const { server } = startController();
    const topic = createWithTopic(server, 'elsewhere', { kafka: { bootstrapServers: secured.saslSsl } });
    const p = await waitReady(server, 'elsewhere', 'False');
    expect(condition(p, 'Ready')).toMatchObject({
      reason: 'ClusterNotAllowed',
      message: `${topic}: ${secured.saslSsl} not in CONTROLLER_ALLOWED_BOOTSTRAP: Kafka not touched`,
    });
    expect(p.status?.topics?.[0]).toMatchObject({ phase: 'Blocked' });
    expect(await kafkaTopic(topic)).toBeUndefined();
  });

  it('refuses topic names starting with __ (Kafka internal topics) and still reconciles the others', async () => {
    const { server } = startController();
    const fine = topicName('fine');
    server.create(
      pipeline('internal', [
        {
          name: '__consumer_offsets',
          partitions: 1,
          replicationFactor: 1,
          config: { 'retention.ms': '1000' },
        },
        { name: fine, partitions: 1, replicationFactor: 1 },
      ]),
    );
    const p = await waitReady(server, 'internal', 'False');
    expect(condition(p, 'Ready')?.reason).toBe('ReservedTopicName');
    expect(p.status?.topics?.map((t) => [t.name, t.phase])).toEqual([
      ['__consumer_offsets', 'Blocked'],
      [fine, 'Ready'],
    ]);
    expect((await kafkaTopic('__consumer_offsets', ['retention.ms']))?.configs['retention.ms']).not.toBe(
      '1000',
    );
  });
});

describe('when the API server fails', () => {
  it('a failed status write fails the reconcile, which is retried after its backoff', async () => {
    const { server, metric } = startController();
    server.failNext('patchStatus');
    const retried = createWithTopic(server, 'flaky');
    await waitReady(server, 'flaky', 'True'); // no resync within the test: only the retry got here
    expect(await metric('controller_reconciles_total', { outcome: 'failure' })).toBe(1);
    expect(await metric('controller_reconciles_total', { outcome: 'success' })).toBe(1);
    expect((await kafkaTopic(retried))?.partitions).toBe(1);
  });

  it('an Event that cannot be recorded does not fail the reconcile', async () => {
    const { server, metric } = startController();
    server.failNext('event');
    createWithTopic(server, 'quiet');
    await waitReady(server, 'quiet', 'True');
    expect(reasons(server, 'quiet')).toEqual([]); // the one Event failed
    expect(await metric('controller_reconciles_total', { outcome: 'failure' })).toBe(0);
  });

  it('a finalizer patch of a stale object is refused with 409 before Kafka is touched; the fresh object reconciles', async () => {
    const server = new FakeApiServer();
    const reconciler = bareReconciler(server);
    const late = topicName('late');
    const stale = server.create(
      pipeline(
        'stale',
        [{ name: late, partitions: 1, replicationFactor: 1 }],
        { deletionPolicy: 'Delete' },
        { [CONTROLLER_ANNOTATION]: CONTROLLER_NAME }, // stamped already: the finalizer patch is the first
      ),
    );
    server.update(stale.metadata, (p) => {
      p.metadata.labels = { touched: 'yes' };
    });
    await expect(reconciler.reconcile(stale, [stale])).rejects.toMatchObject({ code: 409 });
    expect(server.get(stale.metadata)?.metadata.finalizers).toBeUndefined();
    expect(await kafkaTopic(late)).toBeUndefined();

    const fresh = server.get(stale.metadata) as Pipeline;
    expect(await reconciler.reconcile(fresh, [fresh])).toEqual({ outcome: 'success', managed: 1 });
    expect(server.get(stale.metadata)?.metadata.finalizers).toEqual([FINALIZER]);
    expect(await kafkaTopic(late)).toBeDefined();
  });

  it('a status computed from a cache behind the API server is refused with 409: the newer managed record survives, the fresh object reconciles', async () => {
    const server = new FakeApiServer();
    const reconciler = bareReconciler(server);
    const [first, added] = [topicName('lagging-first'), topicName('lagging-added')];
    const declare = (name: string) => ({ name, partitions: 1, replicationFactor: 1 });
    const created = server.create(
      pipeline('lagging', [declare(first)], {}, { [CONTROLLER_ANNOTATION]: CONTROLLER_NAME }),
    );
    await reconciler.reconcile(created, [created]);
    // A topic added: the cache gets this version, then falls behind the reconcile's own writes.
    const cached = server.update(created.metadata, (p) => {
      p.spec.topics.push(declare(added));
    });
    await reconciler.reconcile(cached, [cached]);
    const recorded = server.get(created.metadata);
    expect(recorded?.status?.topics?.[1]).toMatchObject({ name: added, phase: 'Ready', managed: true });

    // The same cached object again (a resync before the watch brought the writes): it does not
    // know the record, so it finds the topic as someone else's; its status must not land.
    await expect(reconciler.reconcile(cached, [cached])).rejects.toMatchObject({ code: 409 });
    expect(server.get(created.metadata)?.status).toEqual(recorded?.status);
    expect(reasons(server, 'lagging')).not.toContain('ChangeRefused');

    const fresh = server.get(created.metadata) as Pipeline;
    expect(await reconciler.reconcile(fresh, [fresh])).toEqual({ outcome: 'success', managed: 2 });
    expect(server.get(created.metadata)?.status?.topics?.[1]).toMatchObject({ managed: true });
  });
});
