/**
 * The controller on the cluster's real API server and the devstack's Kafka: flow health in a
 * Pipeline's status (lag, Flowing, Lagging, DeadLettering, their Events and printer columns),
 * namespaces under the two topic-name rules, and deletion that cannot get stuck. Two controllers
 * run in this process (fast to start), one per rule, each watching a list of two namespaces of
 * this suite; the flow period is 1.5 s so "within two periods" means seconds. The consumer whose
 * flow is read is the real consumer service (devstack's `startServiceProcess`, as `make dev` runs
 * it) on the Pipeline's topics and a store of its own: it is stopped and restarted, and it
 * dead-letters the poison records itself.
 */
import { rmSync } from 'node:fs';
import {
  type ControllerService,
  FORCE_DELETE_ANNOTATION,
  type Pipeline,
} from '@event-observatory/controller';
import { type ServiceProcess, startServiceProcess, tempDataDir } from '@event-observatory/devstack';
import { type CloudEvent, toKafkaRecord } from '@event-observatory/events';
import { migrate } from '@event-observatory/store';
import type { Message, Producer } from 'kafkajs';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import {
  controllerSuite,
  getPipeline,
  pipelineEventReasons,
  startInProcessController,
} from './lib/controller.js';
import type { Manifest, TestNamespace } from './lib/kube.js';

const suite = controllerSuite('flow-e2e');
const { podStack, run, admin, kafka } = suite;
const PERIOD_MS = 1_500;
const DELETION_BOUND_MS = 8_000;
const DEAD = '127.0.0.1:1'; // allowed, but nothing listens: a broker that is down

let producer: Producer;
/** Two namespaces under `{namespace}.{name}`, two under the literal rule. */
let tpl: TestNamespace[] = [];
let lit: TestNamespace[] = [];
let storeUrl: string;
const controllers: ControllerService[] = [];

function startController(namespaces: TestNamespace[], template: string, store?: string): void {
  const { service } = startInProcessController(suite.kubeConfig(), {
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
    CONTROLLER_STORE_URL: store,
  });
  controllers.push(service);
}

beforeAll(async () => {
  await suite.start();
  producer = kafka.producer();
  await producer.connect();
  suite.onCleanup(() => producer.disconnect());
  // Once the namespaces are gone: the topics of this run.
  suite.onCleanup(async () => {
    const mine = (await admin.listTopics().catch(() => [])).filter((t) => t.includes(run));
    if (mine.length > 0) await admin.deleteTopics({ topics: mine });
  });
  [tpl, lit] = [
    await suite.namespaces('flow-tpl', 'flow-tpl'),
    await suite.namespaces('flow-lit', 'flow-lit'),
  ];
  // The consumer's store, read by the controller for status.flow.lastStoredAt.
  storeUrl = await suite.database();
  await migrate({ url: storeUrl });
  // First in afterAll: the controllers, before their namespaces are released.
  suite.onCleanup(async () => {
    for (const c of controllers) await c.close();
  });
  startController(tpl, '{namespace}.{name}');
  startController(lit, '{name}', storeUrl);
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

const get = getPipeline;

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

describe('flow health in the status, with the real consumer', () => {
  const events = `flow.${run}.events`;
  const dlq = `flow.${run}.dlq`;
  const group = `flow-${run}`;
  const dataDir = tempDataDir('flow-consumer');
  let consumer: ServiceProcess | undefined;
  let load: NodeJS.Timeout | undefined;
  let sent = 0;

  const event = (n: number): CloudEvent => ({
    specversion: '1.0',
    id: `flow-${run}-${n}`,
    source: 'urn:e2e:flow',
    type: 'com.example.reading',
    time: new Date().toISOString(),
    subject: `device-${n % 7}`, // the key is source#subject: seven keys over the three partitions
    datacontenttype: 'application/json',
    extensions: {},
    data: Buffer.from(JSON.stringify({ n })),
  });
  const send = (n: number) =>
    producer.send({ topic: events, messages: Array.from({ length: n }, () => toKafkaRecord(event(sent++))) });
  /** A record the consumer cannot decode (no ce_id, ce_type): it dead-letters it as malformed. */
  const poison = (n: number): Message[] =>
    Array.from({ length: n }, (_, i) => ({
      key: `p${i}`,
      value: Buffer.from('{}'),
      headers: { ce_specversion: '1.0', ce_source: 's' },
    }));

  afterAll(async () => {
    clearInterval(load);
    await consumer?.kill();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('under load: lag in status.flow and the LAG column, Flowing=True, lastStoredAt from what the consumer stored', async () => {
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
    await send(30);
    consumer = await startServiceProcess({
      name: 'consumer',
      instance: `flow-consumer-${run}`,
      dataDir,
      env: {
        BROKER_BOOTSTRAP_SERVERS: podStack.bootstrapServers,
        BROKER_TOPIC: events,
        BROKER_DLQ_TOPIC: dlq,
        BROKER_GROUP_ID: group,
        DATABASE_URL: storeUrl,
        ADMIN_AUTH_ENABLED: 'false',
        OTEL_SDK_DISABLED: 'true',
        LOG_LEVEL: 'warn',
        CONSUMER_BATCH_WINDOW: '50ms',
        BROKER_SESSION_TIMEOUT: '10s',
      },
    });
    load = setInterval(() => void send(20).catch(() => {}), 200);
    const p = await waitFor(async () => {
      expect(await conditions(ns, 'flow', 'Flowing', 'Lagging')).toEqual([
        expect.stringMatching(/^Flowing=True\/(Consuming|CaughtUp)$/),
        'Lagging=False/WithinThreshold',
      ]);
      const q = await get(ns, 'flow');
      expect(Date.parse(q.status?.flow?.lastStoredAt ?? '')).toBeGreaterThan(Date.now() - 60_000);
      // A partition shows once the group has committed on it: all three, under this load.
      expect(q.status?.flow?.partitions).toHaveLength(3);
      return q;
    }, 45_000);
    expect(p.status?.flow?.lag).toBeGreaterThanOrEqual(0);
    expect(p.status?.flow?.deadLetters).toBe(0);
    expect(Date.parse(p.status?.flow?.observedAt ?? '')).toBeGreaterThan(Date.now() - 60_000);
    const table = await ns.kubectl(['get', 'pipelines']);
    expect(table).toMatch(/NAME\s+TOPICS\s+READY\s+LAG\s+DLQ\s+FLOWING\s+AGE/);
    expect(table).toMatch(/flow\s+2\/2\s+True\s+\d+\s+0\s+True/);
    const wide = await ns.kubectl(['get', 'pipelines', '-o', 'wide']);
    expect(wide).toMatch(/REASON\s+LAGGING\s+DEADLETTERING\s+DLQ\/MIN\s+OBSERVED/);
  });

  it('the consumer stopped: Lagging within four periods, with an Event', async () => {
    const ns = lit[0] as TestNamespace;
    await consumer?.stop(); // SIGTERM: it drains, commits and leaves the group
    // Two readings tell a stop (two periods); a reading takes longer than a period when the node is
    // loaded (the other cluster suites' rollouts), then the status write and kubectl's answer.
    await waitFor(
      async () => {
        expect(await conditions(ns, 'flow', 'Flowing', 'Lagging')).toEqual([
          'Flowing=False/NoProgress',
          expect.stringMatching(/^Lagging=True\/(ConsumerStalled|LagAboveThreshold)$/),
        ]);
      },
      4 * PERIOD_MS + 4_000,
    );
    await waitFor(
      async () =>
        expect(await eventReasons(ns, 'flow')).toEqual(expect.arrayContaining(['FlowStopped', 'Lagging'])),
      5_000,
    );
  });

  it('poison records: the consumer dead-letters them, DeadLettering with its rate and an Event; recovered: every condition clears', async () => {
    const ns = lit[0] as TestNamespace;
    await consumer?.restart();
    const poisoning = setInterval(
      () => void producer.send({ topic: events, messages: poison(5) }).catch(() => {}),
      300,
    );
    try {
      // The restarted consumer's start and join took past 30 s on a loaded node.
      await waitFor(async () => {
        expect(await conditions(ns, 'flow', 'DeadLettering')).toEqual([
          'DeadLettering=True/DeadLettersGrowing',
        ]);
        const flow = (await get(ns, 'flow')).status?.flow;
        expect(flow?.deadLetters).toBeGreaterThan(0);
        expect(flow?.deadLettersPerMinute).toBeGreaterThan(0);
      }, 60_000);
      expect(await eventReasons(ns, 'flow')).toContain('DeadLettering');
    } finally {
      clearInterval(poisoning);
    }
    clearInterval(load);
    await waitFor(async () => {
      expect(await conditions(ns, 'flow', 'Flowing', 'Lagging', 'DeadLettering')).toEqual([
        'Flowing=True/CaughtUp',
        'Lagging=False/WithinThreshold',
        'DeadLettering=False/NoNewDeadLetters',
      ]);
    }, 60_000);
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
      expect(p.status?.conditions?.map((c) => c.type).sort()).toEqual([
        'Conflict',
        'Ready',
        'Reconciling',
        'Stalled',
      ]);
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
