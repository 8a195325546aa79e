/**
 * Issue 33 on the cluster's real API server and the devstack's Kafka: flow health in a
 * Pipeline's status (lag, Flowing, Lagging, DeadLettering, their Events and printer columns),
 * namespaces under the two topic-name rules, and deletion that cannot get stuck. Two controllers
 * run in this process (fast to start), one per rule, each watching a list of two namespaces of
 * this suite; the flow period is 1.5 s so "within two periods" means seconds. The consumer whose
 * lag is measured is a consumer group of this test (kafkajs), so it can be stopped at will.
 */
import { randomUUID } from 'node:crypto';
import {
  type ControllerService,
  FORCE_DELETE_ANNOTATION,
  type Pipeline,
} from '@event-observatory/controller';
import { createDatabase } from '@event-observatory/devstack';
import { createWritePool, migrate } from '@event-observatory/store';
import { KubeConfig } from '@kubernetes/client-node';
import { type Admin, type Consumer, Kafka, logLevel, type Producer } from 'kafkajs';
import { afterAll, beforeAll, describe, expect, inject, it, vi } from 'vitest';
import {
  applyPipelineCrd,
  pipelineEventReasons,
  releaseAndDelete,
  startInProcessController,
} from './lib/controller.js';
import { Kube, type Manifest, type TestNamespace } from './lib/kube.js';

const cluster = inject('cluster');
const podStack = inject('podStack');
const kube = new Kube(cluster.kubeconfig);
const run = randomUUID().slice(0, 6);
const PERIOD_MS = 1_500;
const DELETION_BOUND_MS = 8_000;
const DEAD = '127.0.0.1:1'; // allowed, but nothing listens: a broker that is down

let kafka: Kafka;
let admin: Admin;
let producer: Producer;
/** Two namespaces under `{namespace}.{name}`, two under the literal rule. */
let tpl: TestNamespace[] = [];
let lit: TestNamespace[] = [];
const controllers: ControllerService[] = [];

function startController(namespaces: TestNamespace[], template: string, storeUrl?: string): void {
  const kubeConfig = new KubeConfig();
  kubeConfig.loadFromFile(cluster.kubeconfig);
  const { service } = startInProcessController(kubeConfig, {
    BROKER_BOOTSTRAP_SERVERS: podStack.bootstrapServers,
    CONTROLLER_ALLOWED_BOOTSTRAP: `${podStack.bootstrapServers},${DEAD}`,
    CONTROLLER_WATCH_NAMESPACE: namespaces.map((n) => n.name).join(','),
    CONTROLLER_LEASE_NAMESPACE: namespaces[0]?.name,
    CONTROLLER_TOPIC_NAME_TEMPLATE: template,
    CONTROLLER_FLOW_PERIOD: `${PERIOD_MS}ms`,
    CONTROLLER_FLOW_MAX_LAG: '50',
    CONTROLLER_DELETION_TIMEOUT: `${DELETION_BOUND_MS}ms`,
    CONTROLLER_BACKOFF_MIN: '200ms',
    CONTROLLER_BACKOFF_MAX: '2s',
    CONTROLLER_KAFKA_TIMEOUT: '3s',
    POD_NAME: `flow-${run}-${controllers.length}`,
    CONTROLLER_STORE_URL: storeUrl,
  });
  controllers.push(service);
}

beforeAll(async () => {
  await applyPipelineCrd(kube);
  kafka = new Kafka({
    clientId: 'flow-e2e',
    brokers: [podStack.bootstrapServers],
    logLevel: logLevel.NOTHING,
  });
  admin = kafka.admin();
  producer = kafka.producer();
  await Promise.all([admin.connect(), producer.connect()]);
  [tpl, lit] = [
    await Promise.all([kube.createNamespace('flow-tpl'), kube.createNamespace('flow-tpl')]),
    await Promise.all([kube.createNamespace('flow-lit'), kube.createNamespace('flow-lit')]),
  ];
  // A store holding one event, for status.flow.lastStoredAt.
  const storeUrl = await createDatabase(podStack.databaseUrl, `flow_${run}`);
  await migrate({ url: storeUrl });
  const writer = createWritePool({ url: storeUrl, max: 1 });
  await writer.query(
    `INSERT INTO events.cloud_event (occurred_at, ce_source, ce_id, ce_type, raw) VALUES (now(), 'urn:e2e', '1', 't', '{}')`,
  );
  await writer.end();
  startController(tpl, '{namespace}.{name}');
  startController(lit, '{name}', storeUrl);
});

afterAll(async () => {
  for (const c of controllers) await c.close();
  for (const ns of [...tpl, ...lit]) await releaseAndDelete(ns);
  const mine = (await admin?.listTopics())?.filter((t) => t.includes(run)) ?? [];
  if (mine.length > 0) await admin.deleteTopics({ topics: mine });
  await producer?.disconnect();
  await admin?.disconnect();
});

function pipeline(ns: TestNamespace, name: string, spec: Partial<Pipeline['spec']>): Pipeline & Manifest {
  return {
    apiVersion: 'observatory.dev/v1alpha1',
    kind: 'Pipeline',
    metadata: { name, namespace: ns.name },
    spec: {
      kafka: { bootstrapServers: podStack.bootstrapServers },
      deletionPolicy: 'Retain',
      topics: [],
      ...spec,
    },
  };
}

async function get(ns: TestNamespace, name: string): Promise<Pipeline> {
  return JSON.parse(await ns.kubectl(['get', 'pipeline', name, '-o', 'json'])) as Pipeline;
}

/** `type=status/reason` of the Pipeline's conditions of these types. */
async function conditions(ns: TestNamespace, name: string, ...types: string[]): Promise<string[]> {
  const p = await get(ns, name);
  return types.map((type) => {
    const c = p.status?.conditions?.find((x) => x.type === type);
    return `${type}=${c?.status}/${c?.reason}`;
  });
}

const eventReasons = pipelineEventReasons;

const waitFor = <T>(check: () => Promise<T>, timeout: number) =>
  vi.waitFor(check, { timeout, interval: 250 });

describe('flow health in the status', () => {
  const events = `flow.${run}.events`;
  const dlq = `flow.${run}.dlq`;
  const group = `flow-${run}`;
  let consumer: Consumer | undefined;
  let load: NodeJS.Timeout | undefined;

  async function startConsumer() {
    consumer = kafka.consumer({ groupId: group, heartbeatInterval: 500, sessionTimeout: 6_000 });
    await consumer.connect();
    await consumer.subscribe({ topic: events, fromBeginning: true });
    await consumer.run({ autoCommitInterval: 200, autoCommitThreshold: 50, eachMessage: async () => {} });
  }
  const send = (topic: string, n: number) =>
    producer.send({ topic, messages: Array.from({ length: n }, (_, i) => ({ key: String(i), value: 'x' })) });

  afterAll(async () => {
    clearInterval(load);
    await consumer?.disconnect();
  });

  it('under load: lag in status.flow and the LAG column, Flowing=True', async () => {
    const ns = lit[0] as TestNamespace;
    await ns.apply(
      pipeline(ns, 'flow', {
        topics: [
          { name: events, partitions: 3, replicationFactor: 1 },
          { name: dlq, partitions: 1, replicationFactor: 1 },
        ],
        flow: { consumerGroup: group, deadLetterTopic: dlq },
      }),
    );
    await waitFor(
      async () => expect(await conditions(ns, 'flow', 'Ready')).toEqual(['Ready=True/Reconciled']),
      30_000,
    );
    await send(events, 30);
    await startConsumer();
    load = setInterval(() => void send(events, 20).catch(() => {}), 200);
    const p = await waitFor(async () => {
      expect(await conditions(ns, 'flow', 'Flowing', 'Lagging')).toEqual([
        expect.stringMatching(/^Flowing=True\/(Consuming|CaughtUp)$/),
        'Lagging=False/WithinThreshold',
      ]);
      return get(ns, 'flow');
    }, 30_000);
    expect(p.status?.flow?.lag).toBeGreaterThanOrEqual(0);
    expect(p.status?.flow?.partitions).toHaveLength(3);
    expect(p.status?.flow?.deadLetters).toBe(0);
    expect(Date.parse(p.status?.flow?.observedAt ?? '')).toBeGreaterThan(Date.now() - 60_000);
    expect(Date.parse(p.status?.flow?.lastStoredAt ?? '')).toBeGreaterThan(Date.now() - 300_000);
    const table = await ns.kubectl(['get', 'pipelines']);
    expect(table).toMatch(/NAME\s+TOPICS\s+READY\s+LAG\s+DLQ\s+FLOWING\s+AGE/);
    expect(table).toMatch(/flow\s+2\/2\s+True\s+\d+\s+0\s+True/);
    const wide = await ns.kubectl(['get', 'pipelines', '-o', 'wide']);
    expect(wide).toMatch(/REASON\s+LAGGING\s+DEADLETTERING\s+DLQ\/MIN\s+OBSERVED/);
  });

  it('the consumer stopped: Lagging within two periods, with an Event', async () => {
    const ns = lit[0] as TestNamespace;
    await consumer?.disconnect();
    consumer = undefined;
    const stopped = Date.now();
    await waitFor(
      async () => {
        expect(await conditions(ns, 'flow', 'Flowing', 'Lagging')).toEqual([
          'Flowing=False/NoProgress',
          expect.stringMatching(/^Lagging=True\/(ConsumerStalled|LagAboveThreshold)$/),
        ]);
      },
      2 * PERIOD_MS + 2_000,
    ); // two periods, plus a write and kubectl's answer
    expect(Date.now() - stopped).toBeLessThan(2 * PERIOD_MS + 2_000);
    await waitFor(
      async () =>
        expect(await eventReasons(ns, 'flow')).toEqual(expect.arrayContaining(['FlowStopped', 'Lagging'])),
      5_000,
    );
  });

  it('poison records: DeadLettering with its rate and an Event; recovered: every condition clears', async () => {
    const ns = lit[0] as TestNamespace;
    const poison = setInterval(() => void send(dlq, 5).catch(() => {}), 300);
    try {
      await waitFor(async () => {
        expect(await conditions(ns, 'flow', 'DeadLettering')).toEqual([
          'DeadLettering=True/DeadLettersGrowing',
        ]);
        const flow = (await get(ns, 'flow')).status?.flow;
        expect(flow?.deadLetters).toBeGreaterThan(0);
        expect(flow?.deadLettersPerMinute).toBeGreaterThan(0);
      }, 10_000);
      expect(await eventReasons(ns, 'flow')).toContain('DeadLettering');
    } finally {
      clearInterval(poison);
    }
    clearInterval(load);
    await startConsumer();
    await waitFor(async () => {
      expect(await conditions(ns, 'flow', 'Flowing', 'Lagging', 'DeadLettering')).toEqual([
        'Flowing=True/CaughtUp',
        'Lagging=False/WithinThreshold',
        'DeadLettering=False/NoNewDeadLetters',
      ]);
    }, 30_000);
    expect(await eventReasons(ns, 'flow')).toEqual(
      expect.arrayContaining(['FlowResumed', 'LagRecovered', 'DeadLetteringStopped']),
    );
  });

  it('spec.flow removed: status.flow and the flow conditions go', async () => {
    const ns = lit[0] as TestNamespace;
    await ns.kubectl([
      'patch',
      'pipeline',
      'flow',
      '--type=json',
      '-p',
      '[{"op":"remove","path":"/spec/flow"}]',
    ]);
    await waitFor(async () => {
      const p = await get(ns, 'flow');
      expect(p.status?.flow).toBeUndefined();
      expect(p.status?.conditions?.map((c) => c.type).sort()).toEqual(['Conflict', 'Ready']);
    }, 10_000);
  });
});

describe('namespaces and the topic-name rule', () => {
  const orders = `ns.${run}.orders`;

  it('{namespace}.{name}: the same name in two namespaces gives two topics, both Ready', async () => {
    for (const ns of tpl)
      await ns.apply(
        pipeline(ns, 'orders', { topics: [{ name: orders, partitions: 1, replicationFactor: 1 }] }),
      );
    for (const ns of tpl)
      await waitFor(
        async () => expect(await conditions(ns, 'orders', 'Ready')).toEqual(['Ready=True/Reconciled']),
        30_000,
      );
    const topics = await admin.listTopics();
    for (const ns of tpl) expect(topics).toContain(`${ns.name}.${orders}`);
    expect(topics).not.toContain(orders);
    expect((await get(tpl[0] as TestNamespace, 'orders')).status?.topics?.[0]?.name).toBe(
      `${tpl[0]?.name}.${orders}`,
    );
  });

  it('literal names: the newer Pipeline reports Conflict naming the owner; deleting the owner leaves the topic to it', async () => {
    const [older, newer] = lit as [TestNamespace, TestNamespace];
    await older.apply(
      pipeline(older, 'orders', {
        deletionPolicy: 'Delete',
        topics: [{ name: orders, partitions: 1, replicationFactor: 1 }],
      }),
    );
    await waitFor(
      async () => expect(await conditions(older, 'orders', 'Ready')).toEqual(['Ready=True/Reconciled']),
      30_000,
    );
    // creationTimestamp has seconds: within one second the tie goes by namespace/name instead.
    await new Promise((r) => setTimeout(r, 1_100));
    await newer.apply(
      pipeline(newer, 'orders', { topics: [{ name: orders, partitions: 1, replicationFactor: 1 }] }),
    );
    await waitFor(async () => {
      expect(await conditions(newer, 'orders', 'Ready', 'Conflict')).toEqual([
        'Ready=False/TopicConflict',
        'Conflict=True/TopicClaimedByOlderPipeline',
      ]);
      const p = await get(newer, 'orders');
      expect(p.status?.topics?.[0]).toMatchObject({
        phase: 'Conflict',
        message: expect.stringContaining(`${older.name}/orders`),
      });
    }, 30_000);
    // The owner goes under Delete: the topic another Pipeline claims stays, and passes to it.
    await older.kubectl(['delete', 'pipeline', 'orders', '--wait=true', '--timeout=30s']);
    expect(await admin.listTopics()).toContain(orders);
    expect(await eventReasons(older, 'orders')).toContain('TopicsRetained');
    await waitFor(
      async () => expect(await conditions(newer, 'orders', 'Ready')).toEqual(['Ready=True/Reconciled']),
      30_000,
    );
  });
});

describe('deletion that cannot get stuck', () => {
  /** A Delete Pipeline whose topic exists, then whose broker is "down" (a server where nothing listens). */
  async function stranded(ns: TestNamespace, name: string) {
    const topic = `del.${run}.${name}`;
    await ns.apply(
      pipeline(ns, name, {
        deletionPolicy: 'Delete',
        topics: [{ name: topic, partitions: 1, replicationFactor: 1 }],
      }),
    );
    await waitFor(
      async () => expect(await conditions(ns, name, 'Ready')).toEqual(['Ready=True/Reconciled']),
      30_000,
    );
    await ns.kubectl([
      'patch',
      'pipeline',
      name,
      '--type=merge',
      '-p',
      JSON.stringify({ spec: { kafka: { bootstrapServers: DEAD } } }),
    ]);
    await waitFor(
      async () => expect(await conditions(ns, name, 'Ready')).toEqual(['Ready=False/KafkaError']),
      30_000,
    );
    return topic;
  }
  const gone = async (ns: TestNamespace, name: string) =>
    expect((await ns.kubectl(['get', 'pipelines', '-o', 'name'])).split('\n')).not.toContain(
      `pipeline.observatory.dev/${name}`,
    );

  it('broker down: held while deletion fails, removed after the bound with an Event naming what was left', async () => {
    const ns = lit[1] as TestNamespace;
    const topic = await stranded(ns, 'bounded');
    const asked = Date.now();
    await ns.kubectl(['delete', 'pipeline', 'bounded', '--wait=false']);
    await new Promise((r) => setTimeout(r, 3_000));
    expect(await ns.kubectl(['get', 'pipelines', '-o', 'name'])).toContain('bounded');
    await waitFor(() => gone(ns, 'bounded'), DELETION_BOUND_MS + 8_000);
    expect(Date.now() - asked).toBeGreaterThanOrEqual(DELETION_BOUND_MS - 1_000);
    const out = await ns.kubectl([
      'get',
      'events',
      '--field-selector',
      'reason=TopicsLeftBehind',
      '-o',
      'json',
    ]);
    const messages = (JSON.parse(out) as { items: Array<{ message: string }> }).items.map((e) => e.message);
    expect(messages).toEqual([
      expect.stringMatching(
        new RegExp(`deletion failed .*left ${topic.replaceAll('.', '\\.')} in Kafka ${DEAD}`),
      ),
    ]);
    expect(await admin.listTopics()).toContain(topic); // left behind, as the Event says
  });

  it(`${FORCE_DELETE_ANNOTATION}: removed at once`, async () => {
    const ns = lit[1] as TestNamespace;
    await stranded(ns, 'forced');
    await ns.kubectl(['annotate', 'pipeline', 'forced', `${FORCE_DELETE_ANNOTATION}=true`]);
    const asked = Date.now();
    await ns.kubectl(['delete', 'pipeline', 'forced', '--wait=true', '--timeout=20s']);
    expect(Date.now() - asked).toBeLessThan(5_000);
    expect(await eventReasons(ns, 'forced')).toContain('TopicsLeftBehind');
  });
});
