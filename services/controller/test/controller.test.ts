/**
 * The controller's fast tier: the whole loop (informer, work queue, reconciler, Kafka handler) in
 * this process, against an in-memory API server (fake-api-server.ts) and the devstack's real
 * Kafka, as Strimzi tests its topic operator with a real Kafka and a mocked Kubernetes. No root,
 * no cluster. The cluster suite (e2e/cluster/controller.test.ts) stays the end-to-end proof on a
 * real API server: CRD validation, RBAC, the image, leader election across pods.
 */
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createAdminClient, readAdminBrokerConfig, readTopicStates } from '@event-observatory/broker';
import { securedClientEnv } from '@event-observatory/devstack';
import { createLogger } from '@event-observatory/service-kit';
import { Registry } from 'prom-client';
import { afterAll, afterEach, beforeAll, describe, expect, inject, it, vi } from 'vitest';
import { Controller } from '../src/controller.js';
import { KafkaHandler } from '../src/kafka-handler.js';
import { createControllerMetrics } from '../src/metrics.js';
import {
  ADOPT_TOPICS_ANNOTATION,
  API_VERSION,
  FINALIZER,
  KIND,
  PAUSE_ANNOTATION,
  type Pipeline,
  type PipelineSpec,
  type PipelineTopic,
  UNMANAGED_TOPICS_ANNOTATION,
} from '../src/pipeline/types.js';
import { Reconciler } from '../src/reconciler.js';
import { FakeApiServer } from './fake-api-server.js';

const { bootstrapServers, secured } = inject('kafka');
const run = randomUUID().slice(0, 6);
/** A topic name of this run. */
const topicName = (base: string) => `ctl-fast.${run}.${base}`;
const NAMESPACE = 'observatory';
const log = createLogger({ service: 'controller', level: process.env.CONTROLLER_TEST_LOG_LEVEL ?? 'silent' });
const retentionDay = '86400000';

/** Shared like the service's: one admin client per Kafka cluster. */
let kafka: KafkaHandler;
/** The test's own view of Kafka. */
let admin: ReturnType<typeof createAdminClient>;
let stopController: (() => Promise<void>) | undefined;

beforeAll(async () => {
  kafka = new KafkaHandler({ clientId: 'controller-fast', requestTimeoutMs: 5_000, logger: log });
  admin = createAdminClient({
    clientId: 'controller-fast-witness',
    bootstrapServers: [bootstrapServers],
    requestTimeoutMs: 5_000,
  });
  await admin.connect();
});

afterEach(async () => {
  await stopController?.();
  stopController = undefined;
});

afterAll(async () => {
  await kafka?.close();
  await admin?.disconnect();
});

interface LoopOptions {
  /** Default a minute: longer than any test, so only watch events and retries reconcile. */
  resyncMs?: number;
  watchTimeoutMs?: number;
  stallMs?: number;
  /** CONTROLLER_ALLOWED_BOOTSTRAP; default the plaintext broker only. */
  allowedServers?: string[];
  /** Default: the shared handler on the PLAINTEXT listener. */
  kafka?: KafkaHandler;
  defaultServers?: string[];
}

/** A fresh API server and the controller loop on it, stopped after the test. */
function startController(opts: LoopOptions = {}) {
  const server = new FakeApiServer();
  const registry = new Registry();
  const metrics = createControllerMetrics(registry);
  const defaultServers = opts.defaultServers ?? [bootstrapServers];
  const controller = new Controller({
    api: server,
    reconciler: new Reconciler({
      api: server,
      kafka: opts.kafka ?? kafka,
      defaultServers,
      allowedServers: opts.allowedServers ?? defaultServers,
      log,
    }),
    metrics,
    namespaces: [NAMESPACE],
    defaultServers,
    resyncMs: opts.resyncMs ?? 60_000,
    watchTimeoutMs: opts.watchTimeoutMs ?? 60_000,
    stallMs: opts.stallMs ?? 70_000,
    backoff: { initialMs: 50, maxMs: 400 },
    log,
  });
  const stopping = new AbortController();
  const running = controller.run(stopping.signal);
  stopController = async () => {
    stopping.abort();
    await running;
  };
  /** The sum of a counter's or gauge's values with these labels. */
  const metric = async (name: string, labels: Record<string, string> = {}) => {
    const values = (await registry.getSingleMetric(name)?.get())?.values ?? [];
    return values
      .filter((v) => Object.entries(labels).every(([k, l]) => v.labels[k] === l))
      .reduce((sum, v) => sum + v.value, 0);
  };
  return { server, metric };
}

function pipeline(
  name: string,
  topics: PipelineTopic[],
  spec: Partial<PipelineSpec> = {},
  annotations?: Record<string, string>,
): Omit<Pipeline, 'status'> {
  return {
    apiVersion: API_VERSION,
    kind: KIND,
    metadata: { name, namespace: NAMESPACE, ...(annotations ? { annotations } : {}) },
    spec: { topics, ...spec },
  };
}

const meta = (name: string) => ({ namespace: NAMESPACE, name });

function condition(p: Pipeline | undefined, type: string) {
  return p?.status?.conditions?.find((c) => c.type === type);
}

/** Waits until the Pipeline's Ready condition has `status` for its current generation. */
function waitReady(server: FakeApiServer, name: string, status: 'True' | 'False', timeout = 15_000) {
  return vi.waitFor(
    () => {
      const p = server.get(meta(name));
      expect(condition(p, 'Ready')?.status).toBe(status);
      expect(condition(p, 'Ready')?.observedGeneration).toBe(p?.metadata.generation);
      expect(p?.status?.observedGeneration).toBe(p?.metadata.generation);
      return p as Pipeline;
    },
    { timeout, interval: 50 },
  );
}

async function kafkaTopic(name: string, keys: string[] = []) {
  return (await readTopicStates(admin, [name], keys)).get(name);
}

function reasons(server: FakeApiServer, name: string): string[] {
  return server.events.filter((e) => e.object === `${NAMESPACE}/${name}`).map((e) => e.reason);
}

function setPartitions(server: FakeApiServer, name: string, index: number, partitions: number) {
  server.update(meta(name), (p) => {
    const topic = p.spec.topics[index];
    if (topic) topic.partitions = partitions;
  });
}

/** Creates a Pipeline `name` with one topic of one partition, named after it; returns the topic. */
function createWithTopic(server: FakeApiServer, name: string, spec: Partial<PipelineSpec> = {}): string {
  const topic = topicName(name);
  server.create(pipeline(name, [{ name: topic, partitions: 1, replicationFactor: 1 }], spec));
  return topic;
}

/**
 * Creates a topic in Kafka, then a Pipeline `name` declaring it (with a retention) and, unless
 * `adopt` is false, the adopt annotation naming it; returns the topic.
 */
async function adoptTopic(
  server: FakeApiServer,
  name: string,
  partitions: { existing: number; declared: number },
  adopt = true,
) {
  const topic = topicName(name);
  await admin.createTopics({ topics: [{ topic, numPartitions: partitions.existing, replicationFactor: 1 }] });
  const config = { 'retention.ms': retentionDay };
  server.create(
    pipeline(
      name,
      [{ name: topic, partitions: partitions.declared, replicationFactor: 1, config }],
      {},
      adopt ? { [ADOPT_TOPICS_ANNOTATION]: topic } : undefined,
    ),
  );
  return topic;
}

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
    expect(server.events.filter((e) => e.type === 'Warning').map((e) => e.reason)).toEqual(['ChangeRefused']);
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
    await admin.alterConfigs({
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
    await vi.waitFor(() => expect(reasons(server, 'drift')).toContain('ConfigsUpdated'));
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
    // The older Pipeline created it: handed over without the adopt annotation when that one goes.
    expect(second.status?.topics?.[0]).toMatchObject({ name: shared, phase: 'Conflict', managed: true });
    expect(reasons(server, 'second')).toEqual(['TopicConflict']);
    expect((await kafkaTopic(shared, ['cleanup.policy']))?.configs['cleanup.policy']).toBe('compact');

    server.delete(meta('first')); // Retain, no finalizer: gone at once, the topic stays
    expect(server.get(meta('first'))).toBeUndefined();
    const tookOver = await waitReady(server, 'second', 'True');
    expect(condition(tookOver, 'Conflict')?.status).toBe('False');
    expect((await kafkaTopic(shared, ['cleanup.policy']))?.configs['cleanup.policy']).toBe('delete');
  });

  it('changes nothing while paused (ReconciliationPaused=True), and catches up when resumed', async () => {
    const resyncMs = 300;
    const { server } = startController({ resyncMs });
    const held = createWithTopic(server, 'paused');
    await waitReady(server, 'paused', 'True');
    server.update(meta('paused'), (p) => {
      p.metadata.annotations = { [PAUSE_ANNOTATION]: 'true' };
    });
    await vi.waitFor(() =>
      expect(condition(server.get(meta('paused')), 'ReconciliationPaused')?.status).toBe('True'),
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
    await admin.createTopics({ topics: [{ topic: untouched, numPartitions: 2, replicationFactor: 1 }] });
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
    await vi.waitFor(() => expect(server.get(meta('partly'))).toBeUndefined());
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
    expect(server.events.map((e) => e.reason)).toEqual(['ChangeRefused']);

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

describe('spec.kafka: a secured cluster, credentials from Secrets', () => {
  const allowedServers = [bootstrapServers, secured.saslSsl, secured.ssl];
  const user = secured.users[0] as { username: string; password: string };
  const putSecrets = (server: FakeApiServer) => {
    // As Strimzi makes them: the cluster CA's Secret and a KafkaUser's Secret.
    server.putSecret(NAMESPACE, 'cluster-ca-cert', { 'ca.crt': readFileSync(secured.caFile, 'utf8') });
    server.putSecret(NAMESPACE, 'observatory-user', {
      password: user.password,
      'user.crt': readFileSync(secured.clientCertFile, 'utf8'),
      'user.key': readFileSync(secured.clientKeyFile, 'utf8'),
    });
  };
  const tls = { trustedCertificates: [{ secretName: 'cluster-ca-cert', certificate: 'ca.crt' }] };

  it('creates topics over SASL_SSL with a SCRAM-SHA-512 user (scram-sha-512, passwordSecret)', async () => {
    const { server } = startController({ allowedServers });
    putSecrets(server);
    const topic = createWithTopic(server, 'scram', {
      kafka: {
        bootstrapServers: secured.saslSsl,
        tls,
        authentication: {
          type: 'scram-sha-512',
          username: user.username,
          passwordSecret: { secretName: 'observatory-user', password: 'password' },
        },
      },
    });
    await waitReady(server, 'scram', 'True');
    expect((await kafkaTopic(topic))?.partitions).toBe(1);
  });

  it('creates topics over mutual TLS (type tls, certificateAndKey)', async () => {
    const { server } = startController({ allowedServers });
    putSecrets(server);
    const topic = createWithTopic(server, 'mtls', {
      kafka: {
        bootstrapServers: secured.ssl,
        tls,
        authentication: {
          type: 'tls',
          certificateAndKey: { secretName: 'observatory-user', certificate: 'user.crt', key: 'user.key' },
        },
      },
    });
    await waitReady(server, 'mtls', 'True');
    expect((await kafkaTopic(topic))?.partitions).toBe(1);
  });

  it('a missing Secret: Ready=False KafkaAccessInvalid naming it (no secret value), retried until it appears', async () => {
    const { server } = startController({ allowedServers });
    const topic = createWithTopic(server, 'waiting', {
      kafka: {
        bootstrapServers: secured.saslSsl,
        tls,
        authentication: {
          type: 'scram-sha-256',
          username: user.username,
          passwordSecret: { secretName: 'observatory-user', password: 'password' },
        },
      },
    });
    const p = await waitReady(server, 'waiting', 'False');
    expect(condition(p, 'Ready')?.reason).toBe('KafkaAccessInvalid');
    expect(condition(p, 'Ready')?.message).toContain(`Secret ${NAMESPACE}/cluster-ca-cert`);
    expect(await kafkaTopic(topic)).toBeUndefined();
    putSecrets(server);
    await waitReady(server, 'waiting', 'True');
    expect(JSON.stringify(server.get(meta('waiting')))).not.toContain(user.password);
    expect(JSON.stringify(server.events)).not.toContain(user.password);
  });

  it('a wrong password: Ready=False KafkaError, the topic not created, the password nowhere in status or Events', async () => {
    const { server } = startController({ allowedServers });
    putSecrets(server);
    server.putSecret(NAMESPACE, 'wrong', { password: 'not-the-password' });
    const topic = createWithTopic(server, 'denied', {
      kafka: {
        bootstrapServers: secured.saslSsl,
        tls,
        authentication: {
          type: 'scram-sha-512',
          username: user.username,
          passwordSecret: { secretName: 'wrong', password: 'password' },
        },
      },
    });
    const p = await waitReady(server, 'denied', 'False');
    expect(condition(p, 'Ready')?.reason).toBe('KafkaError');
    expect(await kafkaTopic(topic)).toBeUndefined();
    expect(JSON.stringify([server.get(meta('denied')), server.events])).not.toContain('not-the-password');
  });
});

describe('deletion policy', () => {
  it('Retain: no finalizer, the Pipeline goes at once and its topics stay; switching to Delete adds the finalizer, back removes it', async () => {
    const { server, metric } = startController();
    const kept = createWithTopic(server, 'retainer');
    expect((await waitReady(server, 'retainer', 'True')).metadata.finalizers).toBeUndefined();

    const policy = (deletionPolicy: 'Retain' | 'Delete') =>
      server.update(meta('retainer'), (p) => {
        p.spec.deletionPolicy = deletionPolicy;
      });
    policy('Delete');
    await vi.waitFor(() => expect(server.get(meta('retainer'))?.metadata.finalizers).toEqual([FINALIZER]));
    policy('Retain');
    await vi.waitFor(() => expect(server.get(meta('retainer'))?.metadata.finalizers).toBeUndefined());

    server.delete(meta('retainer'));
    expect(server.get(meta('retainer'))).toBeUndefined();
    await vi.waitFor(async () => expect(await metric('controller_topics_managed')).toBe(0));
    expect((await kafkaTopic(kept))?.partitions).toBe(1);
  });

  it('Delete: the finalizer holds the Pipeline until its topics are deleted', async () => {
    const { server } = startController();
    const doomed = createWithTopic(server, 'deleter', {
      deletionPolicy: 'Delete',
    });
    expect((await waitReady(server, 'deleter', 'True')).metadata.finalizers).toEqual([FINALIZER]);
    expect(await kafkaTopic(doomed)).toBeDefined();

    server.delete(meta('deleter'));
    expect(server.get(meta('deleter'))?.metadata.deletionTimestamp).toBeDefined(); // held
    await vi.waitFor(() => expect(server.get(meta('deleter'))).toBeUndefined());
    expect(await kafkaTopic(doomed)).toBeUndefined();
    expect(server.events.filter((e) => e.reason === 'TopicDeleted').map((e) => e.message)).toEqual([
      `deleted ${doomed}`,
    ]);
  });

  it('Delete while paused: the finalizer goes, the topics stay', async () => {
    const { server } = startController();
    const paused = createWithTopic(server, 'careful', {
      deletionPolicy: 'Delete',
    });
    await waitReady(server, 'careful', 'True');
    server.update(meta('careful'), (p) => {
      p.metadata.annotations = { [PAUSE_ANNOTATION]: 'true' };
    });
    await vi.waitFor(() =>
      expect(condition(server.get(meta('careful')), 'ReconciliationPaused')?.status).toBe('True'),
    );
    server.delete(meta('careful'));
    await vi.waitFor(() => expect(server.get(meta('careful'))).toBeUndefined());
    expect(await kafkaTopic(paused)).toBeDefined();
    expect(server.events.find((e) => e.reason === 'TopicsRetained')?.message).toBe(
      `kept ${paused}: reconciliation is paused`,
    );
  });
});

describe('failures', () => {
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
    const reconciler = new Reconciler({
      api: server,
      kafka,
      defaultServers: [bootstrapServers],
      allowedServers: [bootstrapServers],
      log,
    });
    const late = topicName('late');
    const stale = server.create(
      pipeline('stale', [{ name: late, partitions: 1, replicationFactor: 1 }], { deletionPolicy: 'Delete' }),
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

  it('Kafka unreachable: Ready=False KafkaError, topics in Error, retried with backoff, one Warning for the same message', async () => {
    const { server, metric } = startController({ allowedServers: [bootstrapServers, '127.0.0.1:1'] });
    createWithTopic(server, 'unreachable', { kafka: { bootstrapServers: '127.0.0.1:1' } });
    const p = await waitReady(server, 'unreachable', 'False');
    expect(condition(p, 'Ready')?.reason).toBe('KafkaError');
    expect(p.status?.topics?.[0]).toMatchObject({
      phase: 'Error',
      message: expect.stringMatching(/^Kafka: /),
    });
    // Retried (the same failure again): still the one Warning.
    await vi.waitFor(
      async () =>
        expect(await metric('controller_reconciles_total', { outcome: 'failure' })).toBeGreaterThanOrEqual(2),
      { timeout: 15_000 },
    );
    expect(server.events.filter((e) => e.type === 'Warning').map((e) => e.reason)).toEqual([
      'ReconcileFailed',
    ]);
  });

  it('a failed list is retried after the backoff', async () => {
    const { server, metric } = startController();
    server.failNext('listPipelines');
    createWithTopic(server, 'listed');
    await waitReady(server, 'listed', 'True');
    expect(await metric('controller_watch_restarts_total', { reason: 'error' })).toBe(1);
  });
});

describe('the watch', () => {
  it('410 Gone after the history was compacted: lists again and reconciles what changed meanwhile', async () => {
    const { server, metric } = startController();
    const a = createWithTopic(server, 'changed');
    const b = createWithTopic(server, 'removed', { deletionPolicy: 'Delete' });
    await waitReady(server, 'changed', 'True');
    await waitReady(server, 'removed', 'True');

    // The connection drops; before the controller watches again, three changes are made and the
    // history that held them is compacted away, so it cannot resume where it was.
    expect(server.endWatches()).toBe(1);
    setPartitions(server, 'changed', 0, 2);
    server.delete(meta('removed'));
    const c = createWithTopic(server, 'added');
    server.compact();

    await waitReady(server, 'added', 'True');
    await waitReady(server, 'changed', 'True');
    await vi.waitFor(() => expect(server.get(meta('removed'))).toBeUndefined());
    expect((await kafkaTopic(a))?.partitions).toBe(2);
    expect((await kafkaTopic(c))?.partitions).toBe(1);
    expect(await kafkaTopic(b)).toBeUndefined();
    expect(await metric('controller_watch_restarts_total', { reason: 'gone' })).toBe(1);
    expect(server.openWatches).toBe(1);
  });

  it('resumes a watch the server ended, and lists again after one that went silent (stalled)', async () => {
    const { server, metric } = startController({ watchTimeoutMs: 1_000, stallMs: 2_000 });
    const quiet = createWithTopic(server, 'watched');
    await waitReady(server, 'watched', 'True');
    // The server ends each watch after its 1 s timeout; the informer watches on from where it was.
    await vi.waitFor(() => expect(server.watchesStarted).toBeGreaterThanOrEqual(2), { timeout: 5_000 });
    setPartitions(server, 'watched', 0, 2);
    await vi.waitFor(async () => expect((await kafkaTopic(quiet))?.partitions).toBe(2), { interval: 100 });
    expect(await metric('controller_watch_restarts_total')).toBe(0); // resumed, never listed again

    // Frozen: nothing arrives and nothing ends; only the stall watchdog ends it and lists again.
    expect(server.freezeWatches()).toBe(1);
    setPartitions(server, 'watched', 0, 3);
    await vi.waitFor(async () => expect((await kafkaTopic(quiet))?.partitions).toBe(3), {
      timeout: 10_000,
      interval: 100,
    });
    expect(await metric('controller_watch_restarts_total', { reason: 'stalled' })).toBe(1);
  });
});

describe('on a secured Kafka (the BROKER_* security settings)', () => {
  /** A handler and loop configured as the service is, from `env`, on the listener `env` names. */
  async function securedController(env: Record<string, string>) {
    const config = readAdminBrokerConfig(env, 'controller-secured');
    const handler = new KafkaHandler({
      clientId: config.clientId,
      requestTimeoutMs: 5_000,
      security: config.security,
      logger: log,
    });
    const loop = startController({ kafka: handler, defaultServers: config.bootstrapServers });
    const stop = stopController;
    stopController = async () => {
      await stop?.();
      await handler.close();
    };
    return loop;
  }

  it.each([
    ['SASL_SSL', securedClientEnv(secured, 'SASL_SSL')],
    ['SSL with a client certificate', securedClientEnv(secured, 'SSL')],
  ])('creates the declared topics over %s', async (listener, env) => {
    const { server } = await securedController(env);
    const name = `secured-${listener.split(' ')[0]!.toLowerCase().replace('_', '-')}`;
    const topic = createWithTopic(server, name);
    const p = await waitReady(server, name, 'True');
    expect(p.status?.topics?.[0]).toMatchObject({ name: topic, phase: 'Ready', partitions: 1 });
    expect((await kafkaTopic(topic))?.partitions).toBe(1); // seen over PLAINTEXT
  });

  it.each([
    [
      'a wrong password',
      { ...securedClientEnv(secured, 'SASL_SSL'), BROKER_SASL_PASSWORD: 'wrong' },
      /authentication failed.*\(BROKER_SASL_USERNAME, BROKER_SASL_PASSWORD\)$/,
    ],
    [
      'a plaintext client on the TLS port',
      { BROKER_BOOTSTRAP_SERVERS: secured.saslSsl },
      /listener requires TLS or SASL \(BROKER_SECURITY_PROTOCOL=PLAINTEXT\)$/,
    ],
  ])('with %s: Ready=False KafkaError saying why, one Warning, no topic', async (_, env, reason) => {
    const { server } = await securedController(env);
    const name = `refused-${randomUUID().slice(0, 4)}`;
    const topic = createWithTopic(server, name);
    const p = await waitReady(server, name, 'False');
    expect(condition(p, 'Ready')).toMatchObject({
      reason: 'KafkaError',
      message: expect.stringMatching(reason),
    });
    expect(p.status?.topics?.[0]?.message).toMatch(reason);
    const warnings = server.events.filter((e) => e.type === 'Warning' && e.object === `${NAMESPACE}/${name}`);
    expect(warnings).toHaveLength(1);
    expect(warnings[0]?.message).toMatch(reason);
    expect(JSON.stringify(p)).not.toContain(secured.users[0]!.password);
    expect(await kafkaTopic(topic)).toBeUndefined();
  });
});
