/**
 * The fast tier's fixture: the whole loop (informer, work queue, reconciler, both handlers) in
 * this process, against an in-memory API server (`@event-observatory/controller/testing`) and the
 * devstack's real Kafka (kafka-setup.ts), as Strimzi tests its topic operator with a real Kafka
 * and a mocked Kubernetes. No root, no cluster. The cluster suite (e2e/cluster/controller.test.ts)
 * stays the end-to-end proof on a real API server: CRD validation, RBAC, the image, leader
 * election across pods.
 *
 * A test file calls `useFastTier()` once at its top; it opens the shared Kafka handler and the
 * test's own admin client before the file and stops each test's controller after it.
 */
import { randomUUID } from 'node:crypto';
import { createAdminClient, ensureTopics, readTopicStates } from '@event-observatory/broker';
import { withKafkaAdmin } from '@event-observatory/devstack';
import { createLogger } from '@event-observatory/service-kit';
import { Registry } from 'prom-client';
import { afterAll, afterEach, beforeAll, expect, inject, vi } from 'vitest';
import { Controller } from '../src/controller.js';
import { FlowObserver } from '../src/flow-observer.js';
import { KafkaHandler } from '../src/kafka-handler.js';
import type { PipelineApi } from '../src/kube/api.js';
import { createControllerMetrics } from '../src/metrics.js';
import { releaseNamespaceFirst } from '../src/model/naming.js';
import { DEFAULT_RESERVED_TOPICS } from '../src/model/safety.js';
import {
  ADOPT_TOPICS_ANNOTATION,
  API_VERSION,
  KIND,
  type Pipeline,
  type PipelineSpec,
  type PipelineTopic,
} from '../src/pipeline/types.js';
import { Reconciler, type ReconcilerOptions } from '../src/reconciler.js';
import { FakeApiServer } from '../src/testing/fake-api-server.js';

export const { bootstrapServers, secured } = inject('kafka');
const run = randomUUID().slice(0, 6);
/** A topic name of this run. */
export const topicName = (base: string) => `ctl-fast.${run}.${base}`;
export const NAMESPACE = 'observatory';
/** The stamp of the fixture's controller (the chart's `<namespace>/<release>`). */
export const CONTROLLER_NAME = `${NAMESPACE}/obs`;
export const log = createLogger({
  service: 'controller',
  level: process.env.CONTROLLER_TEST_LOG_LEVEL ?? 'silent',
});
export const retentionDay = '86400000';

/** Shared like the service's: one admin client per Kafka cluster. */
let kafka: KafkaHandler;
/** The test's own view of Kafka: a witness independent of the handler under test. */
let admin: ReturnType<typeof createAdminClient>;
/** Run after each test, in the order registered. */
let cleanups: Array<() => Promise<void>> = [];

export function useFastTier(): void {
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
    const pending = cleanups;
    cleanups = [];
    for (const cleanup of pending) await cleanup();
  });

  afterAll(async () => {
    await kafka?.close();
    await admin?.disconnect();
  });
}

/** The shared Kafka handler (on the PLAINTEXT listener). */
export const sharedKafka = () => kafka;

/** The test's own Kafka admin client. */
export const witness = () => admin;

/**
 * Makes topics as another client would, and returns once every partition is served: kafkajs' own
 * wait for leaders reads the metadata, which under KRaft can name a topic before its broker hosts
 * it (UNKNOWN_TOPIC_OR_PARTITION, which kafkajs does not retry), while `ensureTopics` also asks the
 * leaders. On an admin of its own, not the witness: a kafkajs admin refreshes every topic it has
 * read from then on, and fails for good once another client deletes one.
 */
export async function createServedTopics(names: string[], partitions = 1): Promise<void> {
  const specs = names.map((name) => ({ name, partitions, replicationFactor: 1, configs: {} }));
  await withKafkaAdmin(bootstrapServers, (creator) => ensureTopics(creator, specs));
}

/** Runs `cleanup` after the test (after the controller has stopped). */
export function afterTest(cleanup: () => Promise<void>): void {
  cleanups.push(cleanup);
}

export interface LoopOptions {
  /** Default a minute: longer than any test, so only watch events and retries reconcile. */
  resyncMs?: number;
  watchTimeoutMs?: number;
  stallMs?: number;
  /** CONTROLLER_ALLOWED_BOOTSTRAP; default the plaintext broker only. */
  allowedServers?: string[];
  /** CONTROLLER_ALLOWED_BOOTSTRAP as clusters (`;` between them); default one cluster of `allowedServers`. */
  allowedClusters?: string[][];
  /** Default: the shared handler on the PLAINTEXT listener. */
  kafka?: KafkaHandler;
  defaultServers?: string[];
  /** Default: this file's namespace only (the controller's own). */
  namespaces?: string[];
  /** CONTROLLER_TOPIC_NAME_TEMPLATE; default unset (per namespace). */
  topicNameTemplate?: string;
  /** CONTROLLER_ADOPTABLE_TOPICS; default this run's topics (`ctl-fast.<run>.*`). */
  adoptableTopics?: string[];
  /** CONTROLLER_NAME; default `CONTROLLER_NAME` of this file. */
  controllerName?: string;
  /** A server of another controller's test: default a fresh one. */
  server?: FakeApiServer;
  /** CONTROLLER_RESERVED_TOPICS; default the controller's. */
  reservedTopics?: string[];
  /** CONTROLLER_DELETION_TIMEOUT; default the controller's (5 min). */
  deletionTimeoutMs?: number;
  /** CONTROLLER_BACKOFF_MIN / _MAX; default 50 ms to 400 ms. */
  backoff?: { initialMs: number; maxMs: number };
  /** CONTROLLER_FLOW_PERIOD; default unset: no flow observer. */
  flowPeriodMs?: number;
}

/** A fresh API server and the controller loop on it, stopped after the test. */
export function startController(opts: LoopOptions = {}) {
  const server = opts.server ?? new FakeApiServer();
  const registry = new Registry();
  const metrics = createControllerMetrics(registry);
  const defaultServers = opts.defaultServers ?? [bootstrapServers];
  const allowedClusters = opts.allowedClusters ?? [opts.allowedServers ?? defaultServers];
  const topicRules = {
    reserved: opts.reservedTopics ?? DEFAULT_RESERVED_TOPICS,
    adoptable: opts.adoptableTopics ?? [topicName('*')],
  };
  const flow =
    opts.flowPeriodMs === undefined
      ? undefined
      : {
          periodMs: opts.flowPeriodMs,
          observer: new FlowObserver({
            api: server,
            kafka: opts.kafka ?? kafka,
            defaultServers,
            allowedClusters,
            home: releaseNamespaceFirst(opts.topicNameTemplate, NAMESPACE),
            topicRules,
            thresholds: { maxLag: 100, maxDeadLettersPerMinute: 0 },
            rule: { ratio: 0.1, maxIntervalMs: 60_000 },
            log,
          }),
        };
  const controller = new Controller({
    api: server,
    reconciler: new Reconciler({
      api: server,
      kafka: opts.kafka ?? kafka,
      defaultServers,
      allowedClusters,
      ...(opts.deletionTimeoutMs !== undefined ? { deletionTimeoutMs: opts.deletionTimeoutMs } : {}),
      controllerName: opts.controllerName ?? CONTROLLER_NAME,
      topicNameTemplate: opts.topicNameTemplate,
      ownNamespace: NAMESPACE,
      topicRules,
      ...(flow ? { flow: flow.observer } : {}),
      log,
    }),
    metrics,
    namespaces: opts.namespaces ?? [NAMESPACE],
    ...(flow ? { flow } : {}),
    defaultServers,
    resyncMs: opts.resyncMs ?? 60_000,
    watchTimeoutMs: opts.watchTimeoutMs ?? 60_000,
    stallMs: opts.stallMs ?? 70_000,
    backoff: opts.backoff ?? { initialMs: 50, maxMs: 400 },
    log,
  });
  const stopping = new AbortController();
  const running = controller.run(stopping.signal);
  afterTest(async () => {
    stopping.abort();
    await running;
  });
  /** The sum of a counter's or gauge's values with these labels. */
  const metric = async (name: string, labels: Record<string, string> = {}) => {
    const values = (await registry.getSingleMetric(name)?.get())?.values ?? [];
    return values
      .filter((v) => Object.entries(labels).every(([k, l]) => v.labels[k] === l))
      .reduce((sum, v) => sum + v.value, 0);
  };
  return { server, metric };
}

/**
 * A reconciler alone on `api`, the shared Kafka and this tier's one cluster, no loop: for tests that
 * hand it the objects themselves (a stale one, a crash between two writes).
 */
export function bareReconciler(api: PipelineApi, options: Partial<ReconcilerOptions> = {}): Reconciler {
  return new Reconciler({
    api,
    kafka,
    defaultServers: [bootstrapServers],
    allowedClusters: [[bootstrapServers]],
    controllerName: CONTROLLER_NAME,
    log,
    ...options,
  });
}

export function pipeline(
  name: string,
  topics: PipelineTopic[],
  spec: Partial<PipelineSpec> = {},
  annotations?: Record<string, string>,
  namespace = NAMESPACE,
): Omit<Pipeline, 'status'> {
  return {
    apiVersion: API_VERSION,
    kind: KIND,
    metadata: { name, namespace, ...(annotations ? { annotations } : {}) },
    spec: { topics, ...spec },
  };
}

export const meta = (name: string) => ({ namespace: NAMESPACE, name });

export function condition(p: Pipeline | undefined, type: string) {
  return p?.status?.conditions?.find((c) => c.type === type);
}

/** How long a wait on the controller's Kafka work may take: vitest's one-second default is
 * shorter than a topic deletion on a loaded machine. */
export const PATIENCE = { timeout: 15_000, interval: 50 };

/** Waits until the Pipeline's Ready condition has `status` for its current generation. */
export function waitReady(
  server: FakeApiServer,
  name: string,
  status: 'True' | 'False',
  timeout = PATIENCE.timeout,
) {
  return vi.waitFor(
    () => {
      const p = server.get(meta(name));
      expect(condition(p, 'Ready')?.status).toBe(status);
      expect(condition(p, 'Ready')?.observedGeneration).toBe(p?.metadata.generation);
      expect(p?.status?.observedGeneration).toBe(p?.metadata.generation);
      return p as Pipeline;
    },
    { ...PATIENCE, timeout },
  );
}

export async function kafkaTopic(name: string, keys: string[] = []) {
  return (await readTopicStates(admin, [name], keys)).get(name);
}

export function reasons(server: FakeApiServer, name: string): string[] {
  return server.events.filter((e) => e.object === `${NAMESPACE}/${name}`).map((e) => e.reason);
}

export function setPartitions(server: FakeApiServer, name: string, index: number, partitions: number) {
  server.update(meta(name), (p) => {
    const topic = p.spec.topics[index];
    if (topic) topic.partitions = partitions;
  });
}

/** Creates a Pipeline `name` with one topic of one partition, named after it; returns the topic. */
export function createWithTopic(
  server: FakeApiServer,
  name: string,
  spec: Partial<PipelineSpec> = {},
): string {
  const topic = topicName(name);
  server.create(pipeline(name, [{ name: topic, partitions: 1, replicationFactor: 1 }], spec));
  return topic;
}

/**
 * Creates a topic in Kafka, then a Pipeline `name` declaring it (with a retention) and, unless
 * `adopt` is false, the adopt annotation naming it; returns the topic.
 */
export async function adoptTopic(
  server: FakeApiServer,
  name: string,
  partitions: { existing: number; declared: number },
  adopt = true,
) {
  const topic = topicName(name);
  await createServedTopics([topic], partitions.existing);
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
