/**
 * Many teams on one controller, through the whole loop (fast-tier.ts): the operator's topic rules
 * (which existing topics an adopt annotation may take, which names are never touched), one topic
 * namespace per Kubernetes namespace by default.
 */
import { describe, expect, it, vi } from 'vitest';
import type { PipelineApi } from '../src/kube/api.js';
import {
  ADOPT_TOPICS_ANNOTATION,
  CONTROLLER_ANNOTATION,
  type Pipeline,
  type PipelineSpec,
  type PipelineTopic,
} from '../src/pipeline/types.js';
import { FakeApiServer } from '../src/testing/fake-api-server.js';
import { deleteOwnPipelines } from '../src/uninstall.js';
import {
  afterTest,
  bareReconciler,
  bootstrapServers,
  condition,
  createServedTopics,
  kafkaTopic,
  log,
  meta,
  NAMESPACE,
  PATIENCE,
  pipeline,
  retentionDay,
  sharedKafka,
  startController,
  topicName,
  useFastTier,
  waitReady,
} from './fast-tier.js';

useFastTier();

const ADOPT_ALL = { [ADOPT_TOPICS_ANNOTATION]: '*' };
const topic = (name: string, partitions = 2) => ({
  name,
  partitions,
  replicationFactor: 1,
  config: { 'retention.ms': retentionDay },
});

/** Waits until the Pipeline `namespace/name` has Ready `status` for its generation. */
function settled(server: FakeApiServer, namespace: string, name: string, status: 'True' | 'False') {
  return vi.waitFor(
    () => {
      const p = server.get({ namespace, name });
      expect(condition(p, 'Ready')).toMatchObject({ status, observedGeneration: p?.metadata.generation });
      return p as Pipeline;
    },
    { timeout: 15_000, interval: 50 },
  );
}

describe("adoption by the operator's rules", () => {
  it('an adopt annotation takes over only what CONTROLLER_ADOPTABLE_TOPICS allows it: any Pipeline by pattern, one Pipeline by namespace/pipeline:pattern', async () => {
    const shared = topicName('legacy-shared');
    const theirs = topicName('other-team');
    const own = topicName('release-own');
    await createServedTopics([shared, theirs, own]);
    const { server } = startController({
      adoptableTopics: [topicName('legacy-*'), `${NAMESPACE}/release:*`],
    });
    server.create(pipeline('tenant', [topic(shared), topic(theirs)], {}, ADOPT_ALL));
    server.create(pipeline('release', [topic(own)], {}, ADOPT_ALL));

    const tenant = await waitReady(server, 'tenant', 'False');
    expect(condition(tenant, 'Ready')?.reason).toBe('AdoptionRequired');
    expect(tenant.status?.topics?.map((t) => [t.name, t.phase, t.managed])).toEqual([
      [shared, 'Ready', true],
      [theirs, 'Blocked', false],
    ]);
    expect(tenant.status?.topics?.[1]?.message).toContain('CONTROLLER_ADOPTABLE_TOPICS does not allow it');
    // The other team's topic is as it was: no partitions added, no config written.
    expect(await kafkaTopic(theirs, ['retention.ms'])).toMatchObject({ partitions: 1 });
    expect((await kafkaTopic(theirs, ['retention.ms']))?.configs['retention.ms']).not.toBe(retentionDay);
    expect((await kafkaTopic(shared))?.partitions).toBe(2);
    await waitReady(server, 'release', 'True');
    expect((await kafkaTopic(own))?.partitions).toBe(2);

    // A reinstall: the release's Pipeline deleted (Retain) and made again takes its topic back.
    server.delete(meta('release'));
    await vi.waitFor(() => expect(server.get(meta('release'))).toBeUndefined(), PATIENCE);
    server.create(pipeline('release', [topic(own, 3)], {}, ADOPT_ALL));
    const again = await waitReady(server, 'release', 'True');
    expect(again.status?.topics?.[0]).toMatchObject({ phase: 'Ready', partitions: 3, managed: true });
  });

  it('never touches a reserved name (_*, connect-*), not even adopted under an allowlist of *, nor deletes it under Delete', async () => {
    const schemas = `_${topicName('schemas')}`;
    const offsets = `connect-${topicName('offsets')}`;
    const mine = topicName('beside-reserved');
    await createServedTopics([schemas, offsets]);
    const { server } = startController({ adoptableTopics: ['*'] });
    server.create(
      pipeline(
        'grabby',
        [topic(schemas), topic(offsets), topic(mine)],
        { deletionPolicy: 'Delete' },
        ADOPT_ALL,
      ),
    );
    const p = await waitReady(server, 'grabby', 'False');
    expect(condition(p, 'Ready')?.reason).toBe('ReservedTopicName');
    expect(p.status?.topics?.map((t) => [t.name, t.phase])).toEqual([
      [schemas, 'Blocked'],
      [offsets, 'Blocked'],
      [mine, 'Ready'],
    ]);
    expect(p.status?.topics?.[1]?.message).toContain('connect-*');
    server.delete(meta('grabby'));
    await vi.waitFor(() => expect(server.get(meta('grabby'))).toBeUndefined(), { timeout: 15_000 });
    for (const name of [schemas, offsets])
      expect(await kafkaTopic(name, ['retention.ms'])).toMatchObject({
        partitions: 1,
        configs: expect.not.objectContaining({ 'retention.ms': retentionDay }),
      });
    expect(await kafkaTopic(mine)).toBeUndefined();
  });
});

describe('ownership recorded before a topic is created', () => {
  /** The API server, except that each status write after `topic` exists in Kafka fails (the process dies). */
  function crashingAfterCreate(server: FakeApiServer, topic: string): PipelineApi {
    return {
      listPipelines: (namespace) => server.listPipelines(namespace),
      watchPipelines: (...args) => server.watchPipelines(...args),
      setFinalizers: (p, finalizers) => server.setFinalizers(p, finalizers),
      setAnnotations: (p, annotations) => server.setAnnotations(p, annotations),
      event: (...args) => server.event(...args),
      readSecret: (namespace, name) => server.readSecret(namespace, name),
      patchStatus: async (p, status) => {
        if (await kafkaTopic(topic)) throw new Error('controller killed');
        return server.patchStatus(p, status);
      },
    };
  }
  const reconcilerOn = (api: PipelineApi) =>
    bareReconciler(api, { topicRules: { reserved: [], adoptable: [] } });

  it('a crash between CreateTopics and the status orphans nothing: the next controller recognises the topic as its own', async () => {
    const server = new FakeApiServer();
    const created = topicName('crash-window');
    const declared = server.create(pipeline('crashy', [topic(created)], { deletionPolicy: 'Delete' }));
    await expect(
      reconcilerOn(crashingAfterCreate(server, created)).reconcile(declared, [declared]),
    ).rejects.toThrow('controller killed');
    expect((await kafkaTopic(created))?.partitions).toBe(2);
    const recorded = server.get(meta('crashy')) as Pipeline;
    expect(recorded.status?.topics).toEqual([
      { name: created, phase: 'Creating', message: 'being created', managed: true },
    ]);

    // A new process: nothing in memory, no adopt annotation, an empty allowlist.
    const restarted = reconcilerOn(server);
    expect(await restarted.reconcile(recorded, [recorded])).toEqual({ outcome: 'success', managed: 1 });
    const after = server.get(meta('crashy')) as Pipeline;
    expect(condition(after, 'Ready')?.reason).toBe('Reconciled');
    expect(after.status?.topics?.[0]).toMatchObject({ name: created, phase: 'Ready', managed: true });
    // And it is its own to delete.
    server.delete(meta('crashy'));
    const deleting = server.get(meta('crashy')) as Pipeline;
    await restarted.reconcile(deleting, [deleting]);
    expect(await kafkaTopic(created)).toBeUndefined();
  });

  it("a create that fails leaves no record: the topic, never made, is not the Pipeline's, and one made later by someone else is not taken over", async () => {
    const server = new FakeApiServer();
    const impossible = topicName('never-made');
    // One broker: a replication factor of 3 is refused when the topic is created.
    const declared = server.create(
      pipeline('impossible', [{ ...topic(impossible), replicationFactor: 3 }], { deletionPolicy: 'Delete' }),
    );
    await expect(reconcilerOn(server).reconcile(declared, [declared])).rejects.toThrow();
    const failed = server.get(meta('impossible')) as Pipeline;
    expect(condition(failed, 'Ready')?.reason).toBe('KafkaError');
    expect(failed.status?.topics?.[0]).toMatchObject({ name: impossible, phase: 'Error', managed: false });
    expect(await kafkaTopic(impossible)).toBeUndefined();
    // Someone else makes a topic of that name; the Pipeline, unchanged, may not take it over.
    await createServedTopics([impossible]);
    await reconcilerOn(server).reconcile(failed, [failed]);
    const after = server.get(meta('impossible')) as Pipeline;
    expect(condition(after, 'Ready')?.reason).toBe('AdoptionRequired');
    expect((await kafkaTopic(impossible, ['retention.ms']))?.configs['retention.ms']).not.toBe(retentionDay);
    // Nor deleted with the Pipeline (deletionPolicy Delete).
    server.delete(meta('impossible'));
    const deleting = server.get(meta('impossible')) as Pipeline;
    await reconcilerOn(server).reconcile(deleting, [deleting]);
    expect(server.get(meta('impossible'))).toBeUndefined();
    expect(await kafkaTopic(impossible)).toBeDefined();
  });

  it('no record, no topic: when the record cannot be written, nothing is created (retried)', async () => {
    const server = new FakeApiServer();
    const never = topicName('unrecorded');
    const created = server.create(pipeline('unrecorded', [topic(never)]));
    // Seen before (Ready known), so the record is the reconcile's first status write.
    const seen = await server.patchStatus(created, {
      conditions: [
        {
          type: 'Ready',
          status: 'Unknown',
          reason: 'Pending',
          message: '',
          lastTransitionTime: '2026-01-01T00:00:00Z',
        },
      ],
    });
    server.failNext('patchStatus');
    await expect(reconcilerOn(server).reconcile(seen, [seen])).rejects.toThrow(
      'injected failure of patchStatus',
    );
    expect(await kafkaTopic(never)).toBeUndefined();
    expect(condition(server.get(meta('unrecorded')), 'Ready')?.reason).toBe('KafkaError');
  });
});

describe('Pipelines stamped with their controller', () => {
  const stamped = (
    name: string,
    controller: string,
    topics: PipelineTopic[],
    spec: Partial<PipelineSpec> = {},
  ) => pipeline(name, topics, spec, { [CONTROLLER_ANNOTATION]: controller });
  const stampOf = (server: FakeApiServer, name: string) =>
    server.get(meta(name))?.metadata.annotations?.[CONTROLLER_ANNOTATION];

  it("two releases on one namespace: each reconciles its own; an unstamped Pipeline goes to one, stamped; another controller's is left alone", async () => {
    const { server } = startController({ controllerName: `${NAMESPACE}/a` });
    startController({ controllerName: `${NAMESPACE}/b`, server });
    const [forA, forB, anyone, orphan] = ['stamp-a', 'stamp-b', 'stamp-any', 'stamp-c'].map(topicName) as [
      string,
      string,
      string,
      string,
    ];
    server.create(stamped('for-a', `${NAMESPACE}/a`, [topic(forA)]));
    server.create(stamped('for-b', `${NAMESPACE}/b`, [topic(forB)]));
    server.create(pipeline('anyone', [topic(anyone)]));
    // An older Pipeline of a third release declaring for-a's topic: no conflict for a, not counted.
    server.create(stamped('for-c', `${NAMESPACE}/c`, [topic(orphan), topic(forA)]));
    for (const name of ['for-a', 'for-b', 'anyone']) await waitReady(server, name, 'True');
    expect(stampOf(server, 'for-a')).toBe(`${NAMESPACE}/a`);
    expect(stampOf(server, 'for-b')).toBe(`${NAMESPACE}/b`);
    expect([`${NAMESPACE}/a`, `${NAMESPACE}/b`]).toContain(stampOf(server, 'anyone'));
    expect(server.get(meta('for-c'))?.status).toBeUndefined();
    expect(await kafkaTopic(orphan)).toBeUndefined();
    for (const name of [forA, forB, anyone]) expect((await kafkaTopic(name))?.partitions).toBe(2);
  });

  it("the pre-delete hook deletes only its own release's Delete Pipelines, and their topics only when asked to", async () => {
    const self = `${NAMESPACE}/obs`;
    const { server } = startController({ controllerName: self });
    const [kept, dropped, theirs] = ['hook-kept', 'hook-dropped', 'hook-theirs'].map(topicName) as [
      string,
      string,
      string,
    ];
    server.create(stamped('kept', self, [topic(kept)], { deletionPolicy: 'Delete' }));
    server.create(stamped('retained', self, [topic(topicName('hook-retained'))]));
    await waitReady(server, 'kept', 'True');
    await waitReady(server, 'retained', 'True');
    server.create(stamped('theirs', `${NAMESPACE}/other`, [topic(theirs)], { deletionPolicy: 'Delete' }));
    const uninstall = (deleteTopics: boolean) =>
      deleteOwnPipelines({
        api: server,
        controllerName: self,
        namespaces: [NAMESPACE],
        deleteTopics,
        waitMs: 15_000,
        pollMs: 100,
        log,
      });

    // By default the topics stay: the Pipeline goes with force-delete, as Retain would leave them.
    expect(await uninstall(false)).toBe(true);
    expect(server.get(meta('kept'))).toBeUndefined();
    expect((await kafkaTopic(kept))?.partitions).toBe(2);
    expect(server.events.filter((e) => e.object === `${NAMESPACE}/kept`).map((e) => e.reason)).toContain(
      'TopicsLeftBehind',
    );

    // Opted in (controller.deleteTopicsOnUninstall): the topics go with their Pipeline.
    server.create(stamped('dropped', self, [topic(dropped)], { deletionPolicy: 'Delete' }));
    await waitReady(server, 'dropped', 'True');
    expect(await uninstall(true)).toBe(true);
    expect(server.get(meta('dropped'))).toBeUndefined();
    expect(await kafkaTopic(dropped)).toBeUndefined();
    // Never another release's, nor a Retain one.
    expect(server.get(meta('theirs'))?.metadata.deletionTimestamp).toBeUndefined();
    expect(server.get(meta('retained'))?.metadata.deletionTimestamp).toBeUndefined();
  });
});

describe('one Kafka cluster, however a Pipeline names it', () => {
  it("a newer Pipeline that names the owner's cluster another way (a server repeated) gets none of its topics: nothing changed, nothing deleted", async () => {
    const shared = topicName('spelled');
    // One topic namespace for all (the operator's template): the older Pipeline owns.
    const { server } = startController({ namespaces: [NAMESPACE, 'team-s'], topicNameTemplate: '{name}' });
    server.create(pipeline('owner', [topic(shared)]));
    await waitReady(server, 'owner', 'True');
    const rival = { namespace: 'team-s', name: 'rival' };
    const theirs = { name: shared, partitions: 4, replicationFactor: 1, config: { 'retention.ms': '60000' } };
    server.create(pipeline('rival', [theirs], { deletionPolicy: 'Delete' }, undefined, 'team-s'));
    const conflicted = await settled(server, 'team-s', 'rival', 'False');
    expect(condition(conflicted, 'Ready')?.reason).toBe('TopicConflict');

    server.update(rival, (p) => {
      p.spec.kafka = { bootstrapServers: `${bootstrapServers},${bootstrapServers}` };
    });
    const respelled = await settled(server, 'team-s', 'rival', 'False');
    expect(condition(respelled, 'Ready')?.reason).toBe('TopicConflict');
    expect(await kafkaTopic(shared, ['retention.ms'])).toMatchObject({
      partitions: 2,
      configs: { 'retention.ms': retentionDay },
    });
    // Not its own (never `managed` in a Conflict entry); handed over only when the owner goes.
    expect(respelled.status?.topics?.[0]).toMatchObject({
      phase: 'Conflict',
      managed: false,
      handOverFrom: `${NAMESPACE}/owner`,
    });
    server.delete(rival);
    await vi.waitFor(() => expect(server.get(rival)).toBeUndefined(), PATIENCE);
    expect(await kafkaTopic(shared, ['retention.ms'])).toMatchObject({ partitions: 2 });
    expect(condition(server.get(meta('owner')), 'Ready')?.status).toBe('True');
  });

  it('a record of another cluster (status.cluster) carries nothing over: a topic of that name here needs adoption', async () => {
    const server = new FakeApiServer();
    const elsewhere = 'kafka.elsewhere:9092';
    const theirs = topicName('same-name-here');
    await createServedTopics([theirs]);
    const created = server.create(pipeline('mover', [topic(theirs)]));
    // Its status: it manages a topic of that name in the other cluster; it names this one now.
    const moved = await server.patchStatus(created, {
      cluster: elsewhere,
      topics: [{ name: theirs, phase: 'Ready', managed: true }],
    });
    const reconciler = bareReconciler(server, {
      allowedClusters: [[bootstrapServers], [elsewhere]],
      topicRules: { reserved: [], adoptable: [] },
    });
    await reconciler.reconcile(moved, [moved]);
    const after = server.get(meta('mover')) as Pipeline;
    expect(condition(after, 'Ready')?.reason).toBe('AdoptionRequired');
    expect(after.status?.cluster).toBe(bootstrapServers);
    expect(after.status?.topics?.[0]).toMatchObject({ phase: 'Blocked', managed: false });
    expect(await kafkaTopic(theirs)).toMatchObject({ partitions: 1 });
  });
});

describe('topic names per namespace', () => {
  it('watching other namespaces than its own, the default template gives each its own topic namespace ({namespace}.{name}); its own keeps names as declared', async () => {
    const name = topicName('same-name');
    const { server } = startController({ namespaces: [NAMESPACE, 'team-a'] });
    server.create(pipeline('events', [topic(name)]));
    server.create(pipeline('events', [topic(name)], {}, undefined, 'team-a'));
    const home = await settled(server, NAMESPACE, 'events', 'True');
    const team = await settled(server, 'team-a', 'events', 'True');
    expect(home.status?.topics?.[0]?.name).toBe(name);
    expect(team.status?.topics?.[0]?.name).toBe(`team-a.${name}`);
    expect((await kafkaTopic(`team-a.${name}`))?.partitions).toBe(2);
    expect((await kafkaTopic(name))?.partitions).toBe(2);
  });

  /** The release namespace's topic `<tenant>.<base>`, and a Pipeline of `tenant` declaring `base`. */
  const colliding = (tenant: string, base: string) => ({
    release: pipeline('release', [
      {
        name: `${tenant}.${base}`,
        partitions: 2,
        replicationFactor: 1,
        config: { 'retention.ms': retentionDay },
      },
    ]),
    tenant: pipeline(
      'tenant',
      [{ name: base, partitions: 1, replicationFactor: 1, config: { 'retention.ms': '60000' } }],
      { deletionPolicy: 'Delete' },
      undefined,
      tenant,
    ),
  });
  const refused = (p: Pipeline) => {
    expect(condition(p, 'Ready')).toMatchObject({ reason: 'TopicNameCollision' });
    expect(condition(p, 'Stalled')).toMatchObject({ status: 'True', reason: 'TopicNameCollision' });
    expect(p.status?.topics?.[0]).toMatchObject({ phase: 'Blocked' });
    expect(p.status?.topics?.[0]?.message).toContain(`release namespace ${NAMESPACE}`);
  };

  it("another namespace's Pipeline that maps to a topic of the release namespace is refused (TopicNameCollision), though older: the release namespace's gets it", async () => {
    const base = topicName('collide');
    const tenantNs = 'events-a'; // before the release's namespace by name too: the old tie-break
    const server = new FakeApiServer();
    const { release, tenant } = colliding(tenantNs, base);
    server.create(tenant);
    await new Promise((r) => setTimeout(r, 1_100)); // creationTimestamp has seconds: older indeed
    server.create(release);
    startController({ server, namespaces: [NAMESPACE, tenantNs] });
    const home = await settled(server, NAMESPACE, 'release', 'True');
    expect(home.status?.topics?.[0]).toMatchObject({ name: `${tenantNs}.${base}`, managed: true });
    refused(await settled(server, tenantNs, 'tenant', 'False'));
    expect(await kafkaTopic(`${tenantNs}.${base}`, ['retention.ms'])).toMatchObject({
      partitions: 2,
      configs: { 'retention.ms': retentionDay },
    });
    // Deleted under Delete: the release's topic stays.
    server.delete({ namespace: tenantNs, name: 'tenant' });
    await vi.waitFor(
      () => expect(server.get({ namespace: tenantNs, name: 'tenant' })).toBeUndefined(),
      PATIENCE,
    );
    expect(await kafkaTopic(`${tenantNs}.${base}`)).toBeDefined();
  });

  it('the release namespace wins whatever the order: a topic made for another namespace before the release declared it is taken over, and that Pipeline refused', async () => {
    const base = topicName('first-come');
    const tenantNs = 'events-b';
    const { server } = startController({ namespaces: [NAMESPACE, tenantNs] });
    const { release, tenant } = colliding(tenantNs, base);
    server.create(tenant);
    const made = await settled(server, tenantNs, 'tenant', 'True');
    expect(made.status?.topics?.[0]).toMatchObject({ name: `${tenantNs}.${base}`, managed: true });
    expect((await kafkaTopic(`${tenantNs}.${base}`))?.partitions).toBe(1);

    server.create(release);
    const home = await settled(server, NAMESPACE, 'release', 'True');
    expect(home.status?.topics?.[0]).toMatchObject({ managed: true, partitions: 2 });
    expect(await kafkaTopic(`${tenantNs}.${base}`, ['retention.ms'])).toMatchObject({
      partitions: 2,
      configs: { 'retention.ms': retentionDay },
    });
    await vi.waitFor(
      () => refused(server.get({ namespace: tenantNs, name: 'tenant' }) as Pipeline),
      PATIENCE,
    );
  });
});

describe("flow health of the Pipeline's own topics only", () => {
  /** The topics Kafka is asked about for a flow from now on (groups' topics and dead-letter topics). */
  function askedOfKafka(): () => string[] {
    const readFlow = vi.spyOn(sharedKafka(), 'readFlow');
    afterTest(async () => readFlow.mockRestore());
    return () =>
      readFlow.mock.calls.flatMap(([, groups, topics]) => [...groups.map((g) => g.topic), ...topics]);
  }
  /** Waits until the flow condition `type` of `namespace/name` is Unknown for `reason`. */
  const observed = (server: FakeApiServer, namespace: string, name: string, type: string, reason: string) =>
    vi.waitFor(() => {
      const p = server.get({ namespace, name });
      expect(condition(p, type)).toMatchObject({ status: 'Unknown', reason });
      return p as Pipeline;
    }, PATIENCE);
  const notOwned = (name: string) =>
    `spec.flow.topic ${name} is not this Pipeline's topic (created or adopted for it: status.topics[].managed): not read`;

  it('a flow or dead-letter topic it does not declare, or one the release namespace keeps, is never read: the flow condition says why, naming the field', async () => {
    const foreign = topicName('team-b-dlq'); // another team's topic, or the platform's
    await createServedTopics([foreign]);
    const [own, other, kept] = [topicName('flow-own'), topicName('flow-other'), topicName('flow-kept')];
    const asked = askedOfKafka();
    const { server } = startController({ namespaces: [NAMESPACE, 'team-a', 'team-c'], flowPeriodMs: 200 });
    const flow = (spec: Omit<NonNullable<PipelineSpec['flow']>, 'consumerGroup'>) => ({
      flow: { consumerGroup: `group-${own}`, ...spec },
    });
    server.create(pipeline('dlq', [topic(own)], flow({ deadLetterTopic: foreign }), undefined, 'team-a'));
    server.create(pipeline('consumed', [topic(other)], flow({ topic: foreign }), undefined, 'team-a'));
    // The release namespace's topic `team-c.<kept>`, which team-c's `kept` maps to.
    server.create(pipeline('release', [topic(`team-c.${kept}`)]));
    server.create(pipeline('tenant', [topic(kept)], flow({ topic: kept }), undefined, 'team-c'));

    const dlq = await observed(server, 'team-a', 'dlq', 'DeadLettering', 'TopicNotDeclared');
    expect(condition(dlq, 'DeadLettering')?.message).toBe(
      `spec.flow.deadLetterTopic ${foreign} is not one of spec.topics: not read`,
    );
    expect(dlq.status?.flow?.deadLetters).toBeUndefined();
    // Its own topic is read.
    await observed(server, 'team-a', 'dlq', 'Flowing', 'NoCommittedOffsets');
    const consumed = await observed(server, 'team-a', 'consumed', 'Flowing', 'TopicNotDeclared');
    expect(consumed.status?.flow?.message).toBe(
      `spec.flow.topic ${foreign} is not one of spec.topics: not read`,
    );
    const tenant = await observed(server, 'team-c', 'tenant', 'Flowing', 'TopicNameCollision');
    expect(tenant.status?.flow?.message).toBe(
      `spec.flow.topic team-c.${kept} maps to a topic of the release namespace: not read`,
    );

    // Kafka was never asked about them; it was about the Pipeline's own topic.
    expect(asked()).toContain(`team-a.${own}`);
    expect(asked()).not.toContain(foreign);
    expect(asked()).not.toContain(`team-c.${kept}`);
  });

  it("one topic namespace for all ({name}): another team's topic, declared with its consumer group, is never read (TopicNotOwned); a topic adopted for the Pipeline is", async () => {
    const [theirs, adopted] = [topicName('payments-events'), topicName('flow-adopted')];
    await createServedTopics([adopted]);
    const asked = askedOfKafka();
    const { server } = startController({
      namespaces: [NAMESPACE, 'team-a', 'team-b'],
      topicNameTemplate: '{name}',
      flowPeriodMs: 200,
    });
    server.create(pipeline('payments', [topic(theirs)], {}, undefined, 'team-a'));
    await settled(server, 'team-a', 'payments', 'True');
    // Declaring a name is free: team-b names team-a's topic, and team-a's group, as its flow.
    const intruding = { flow: { consumerGroup: `group-${theirs}`, topic: theirs } };
    server.create(pipeline('intruder', [topic(theirs)], intruding, undefined, 'team-b'));
    const adopting = { flow: { consumerGroup: `group-${adopted}` } };
    server.create(
      pipeline('adopter', [topic(adopted)], adopting, { [ADOPT_TOPICS_ANNOTATION]: adopted }, 'team-a'),
    );

    const intruder = await observed(server, 'team-b', 'intruder', 'Flowing', 'TopicNotOwned');
    expect(condition(intruder, 'Lagging')).toMatchObject({ status: 'Unknown', reason: 'TopicNotOwned' });
    expect(intruder.status?.flow).toEqual({ observedAt: expect.any(String), message: notOwned(theirs) });
    expect(condition(await settled(server, 'team-b', 'intruder', 'False'), 'Ready')?.reason).toBe(
      'TopicConflict',
    );
    // Its own topic, adopted, is read.
    const adopter = await observed(server, 'team-a', 'adopter', 'Flowing', 'NoCommittedOffsets');
    expect(adopter.status?.topics?.[0]).toMatchObject({ name: adopted, managed: true });
    expect(asked()).toContain(adopted);
    expect(asked()).not.toContain(theirs);
  });

  it("a reserved name (Kafka's own, _*) is never read, though declared: ReservedTopicName; the Pipeline's own topic is", async () => {
    const offsets = '__consumer_offsets';
    const schemas = `_${topicName('flow-schemas')}`;
    const own = topicName('flow-beside-schemas');
    await createServedTopics([schemas]);
    const asked = askedOfKafka();
    const { server } = startController({
      namespaces: [NAMESPACE, 'team-b'],
      topicNameTemplate: '{name}',
      flowPeriodMs: 200,
    });
    const flow = (deadLetterTopic?: string) => ({
      flow: { consumerGroup: `group-${own}`, ...(deadLetterTopic ? { deadLetterTopic } : {}) },
    });
    server.create(pipeline('internal', [topic(offsets)], flow(), undefined, 'team-b'));
    server.create(pipeline('schemas', [topic(own), topic(schemas)], flow(schemas), undefined, 'team-b'));

    const internal = await observed(server, 'team-b', 'internal', 'Flowing', 'ReservedTopicName');
    expect(internal.status?.flow?.message).toBe(
      `spec.flow.topic ${offsets} is a reserved name (Kafka's own topics, or CONTROLLER_RESERVED_TOPICS): not read`,
    );
    const beside = await observed(server, 'team-b', 'schemas', 'DeadLettering', 'ReservedTopicName');
    expect(beside.status?.flow?.deadLetters).toBeUndefined();
    await observed(server, 'team-b', 'schemas', 'Flowing', 'NoCommittedOffsets');
    expect(asked()).toContain(own);
    expect(asked()).not.toContain(offsets);
    expect(asked()).not.toContain(schemas);
  });

  it("by default, a namespace named like the release's topic prefix reaches no platform topic that no Pipeline declares (the chart's pipeline.create=false): TopicNotOwned", async () => {
    const base = topicName('platform-made');
    const tenantNs = 'team-p';
    const platform = `${tenantNs}.${base}`; // made without a Pipeline
    await createServedTopics([platform]);
    const asked = askedOfKafka();
    const { server } = startController({ namespaces: [NAMESPACE, tenantNs], flowPeriodMs: 200 });
    const flow = { flow: { consumerGroup: `group-${base}` } };
    server.create(pipeline('tenant', [topic(base)], flow, undefined, tenantNs));

    const tenant = await observed(server, tenantNs, 'tenant', 'Flowing', 'TopicNotOwned');
    expect(tenant.status?.flow?.message).toBe(notOwned(platform));
    const blocked = await settled(server, tenantNs, 'tenant', 'False');
    expect(condition(blocked, 'Ready')?.reason).toBe('AdoptionRequired');
    // Periods after the reconcile, still not read.
    await new Promise((r) => setTimeout(r, 600));
    await observed(server, tenantNs, 'tenant', 'Flowing', 'TopicNotOwned');
    expect(asked()).not.toContain(platform);
  });
});
