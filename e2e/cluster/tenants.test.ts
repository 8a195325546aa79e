/**
 * Two tenants under one release, on the cluster (kube-router enforcing the chart's policies): the
 * release `t1` watches the tenant namespaces A and B, with one topic namespace for all
 * (`controller.topicNameTemplate={name}`, so a tenant can spell another's Kafka name literally);
 * each tenant has a Pipeline and its own ingest, whose producers authenticate with their service
 * accounts' tokens. Tenant B cannot take A's topic or a reserved one, cannot make the controller
 * use an unlabelled Secret, and its pods reach nothing of the release but ingest. A second release
 * `t2` (its own namespace and CONTROLLER_NAME, the default template `{namespace}.{name}`) watches
 * the same namespaces with Pipelines of its own and loses nothing when `t1` is uninstalled. And a
 * controller killed between recording a topic and creating it, or between creating it and writing
 * the status, leaves no orphan and no topic it refuses as not its own.
 *
 * Kafka is the suite's (devstack, on this machine's address) for both releases, so the test
 * reads it directly; `t1` stores into a database of the suite's PostgreSQL, `t2` into its bundled
 * one. A Kafka outside the cluster is not what the chart's policies guard: they guard the
 * release's own pods and its bundled servers (case 4: t1's pods, t2's PostgreSQL; the bundled
 * Kafka's policy, beside the other clients it admits or refuses, is network-policies.test.ts's).
 */
import { ensureTopics, eventTopicSpec } from '@event-observatory/broker';
import { randomDevSecret } from '@event-observatory/service-kit';
import { beforeAll, describe, expect, it, vi } from 'vitest';
import { condition, controllerSuite, getPipeline } from './lib/controller.js';
import { baseInstall, setArgs } from './lib/helm.js';
import type { Manifest, TestNamespace } from './lib/kube.js';
import { probe } from './lib/netprobe.js';
import { ingestUrl, producerStatuses, serviceAccountIngest } from './lib/service-accounts.js';

const suite = controllerSuite('tenants');
const { cluster, podStack, kube, admin, run } = suite;
const CONTROLLER_ANNOTATION = 'observatory.dev/controller';
const ADOPT_ANNOTATION = 'observatory.dev/adopt-topics';
/** Topics of this run under t1's `{name}` template: `tenants-<run>.<what>`. */
const literal = (what: string) => `tenants-${run}.${what}`;

let r1: TestNamespace;
let r2: TestNamespace;
let a: TestNamespace;
let b: TestNamespace;
/** `observatory.dev/controller` of each release: `<namespace>/<release>`. */
let t1: string;
let t2: string;
/** Tenant A's and B's own topic under t1's `{name}` template. */
const tenantTopic = (ns: TestNamespace) => literal(ns === a ? 'a' : 'b');
/** Reserved names this suite made in Kafka (and deletes again); those that existed stay. */
const reservedMade: string[] = [];

interface TopicDecl {
  name: string;
  partitions: number;
  config?: Record<string, string>;
}

function pipeline(
  name: string,
  controller: string,
  topics: TopicDecl[],
  extra: { annotations?: Record<string, string>; kafka?: Record<string, unknown> } = {},
): Manifest {
  return {
    apiVersion: 'observatory.dev/v1alpha1',
    kind: 'Pipeline',
    metadata: { name, annotations: { [CONTROLLER_ANNOTATION]: controller, ...extra.annotations } },
    spec: {
      ...(extra.kafka ? { kafka: extra.kafka } : {}),
      topics: topics.map((t) => ({ replicationFactor: 1, config: {}, ...t })),
    },
  };
}

/** Waits until the Pipeline's Ready condition of its current generation has `status` (and `reason`). */
async function waitReady(ns: TestNamespace, name: string, status: string, reason?: string, timeout = 90_000) {
  return vi.waitFor(
    async () => {
      const p = await getPipeline(ns, name);
      const ready = condition(p, 'Ready');
      expect(ready?.observedGeneration).toBe(p.metadata.generation);
      expect(ready).toMatchObject({ status, ...(reason ? { reason } : {}) });
      return p;
    },
    { timeout, interval: 1000 },
  );
}

/** Partitions and the configs `keys` of `topic` as Kafka has them. */
async function topicState(topic: string, keys: string[]) {
  const [meta] = (await admin.fetchTopicMetadata({ topics: [topic] })).topics;
  const { resources } = await admin.describeConfigs({
    includeSynonyms: false,
    resources: [{ type: 2, name: topic, configNames: keys }],
  });
  const configs = Object.fromEntries(
    (resources[0]?.configEntries ?? []).map((e) => [e.configName, e.configValue]),
  );
  return { partitions: meta?.partitions.length, configs };
}

/** Records retained in `topic`, all partitions. */
async function records(topic: string): Promise<number> {
  return (await admin.fetchTopicOffsets(topic)).reduce((n, p) => n + Number(p.high), 0);
}

async function topicsStartingWith(prefix: string): Promise<string[]> {
  return (await admin.listTopics()).filter((t) => t.startsWith(prefix)).sort();
}

/**
 * A release watching A and B on the suite's Kafka, with `extraArgs`: on a database of the suite's
 * PostgreSQL and a Secret of its own, or (`bundledDatabase`) its own bundled PostgreSQL.
 */
async function installRelease(
  release: string,
  ns: TestNamespace,
  opts: { bundledDatabase?: boolean; extraArgs?: string[] } = {},
) {
  const base = opts.bundledDatabase
    ? await baseInstall(cluster.images)
    : await baseInstall(cluster.images, {
        ns,
        name: `${release}-secrets`,
        databaseUrl: await suite.database(`_${release}`),
        authSecret: randomDevSecret(),
      });
  await suite.helmInstall(release, ns, [
    ...setArgs({
      ...base.values,
      'kafka.bootstrapServers': podStack.bootstrapServers,
      'database.bundled.enabled': opts.bundledDatabase ?? false,
      'kafka.groupId': `${suite.groupId}-${release}`,
      'pipeline.topic': `${suite.topic}.${release}`,
      'pipeline.partitions': 1,
      'ingest.replicas': 1,
      'consumer.replicas': 1,
      'search.replicas': 1,
      'controller.replicas': 1,
      'controller.preStopDelaySeconds': 1,
      'jobs.enabled': false,
    }),
    '--set-json',
    `controller.watchNamespaces=${JSON.stringify([a.name, b.name])}`,
    ...base.resourceArgs,
    ...(opts.extraArgs ?? []),
  ]);
}

beforeAll(async () => {
  await suite.start();
  [r1, r2, a, b] = await suite.namespaces('tenants-r1', 'tenants-r2', 'tenants-a', 'tenants-b');
  t1 = `${r1.name}/t1`;
  t2 = `${r2.name}/t2`;
  suite.onCleanup(async () => {
    const made = [
      ...(await topicsStartingWith(literal(''))),
      ...(await topicsStartingWith(`${a.name}.`)),
      ...(await topicsStartingWith(`${b.name}.`)),
      ...(await topicsStartingWith(suite.topic)),
      ...reservedMade,
    ];
    if (made.length > 0) await admin.deleteTopics({ topics: made });
  });
  // Kafka's and its tools' topics a tenant might name: a schema registry's and Kafka Connect's.
  const reserved = ['_schemas', 'connect-offsets'].map((name) => ({
    name,
    partitions: 1,
    replicationFactor: 1,
    configs: {},
  }));
  const { topics } = await ensureTopics(admin, reserved);
  reservedMade.push(...topics.filter((t) => t.action === 'created').map((t) => t.name));
  await Promise.all([
    // --set-json: `--set` reads `{name}` as a list.
    installRelease('t1', r1, { extraArgs: ['--set-json', 'controller.topicNameTemplate="{name}"'] }),
    // t2 with its bundled PostgreSQL: a server in the cluster whose policy case 4 tries from B.
    installRelease('t2', r2, { bundledDatabase: true }),
    // Each tenant's own ingest, on its topic, granting its own service accounts.
    ...[a, b].map((ns) =>
      ns.apply(
        ...serviceAccountIngest({
          image: cluster.images.ingest,
          bootstrapServers: podStack.bootstrapServers,
          topic: tenantTopic(ns),
          subjectScopes: `system:serviceaccount:${ns.name}:*=events:write`,
        }),
      ),
    ),
  ]);
  suite.log('both releases installed');
}, 480_000);

describe('two tenants under one release', () => {
  it('each tenant has a Pipeline of the release and a service-account producer whose events reach its topic', async () => {
    // The event topics' configs: ingest is Ready only on a topic that fits its largest event.
    const eventTopic = (name: string) => ({ name, partitions: 3, config: eventTopicSpec(name).configs });
    for (const ns of [a, b]) await ns.apply(pipeline('events', t1, [eventTopic(tenantTopic(ns))]));
    for (const ns of [a, b]) {
      const p = await waitReady(ns, 'events', 'True', 'Reconciled');
      expect(p.metadata.annotations?.[CONTROLLER_ANNOTATION]).toBe(t1);
    }
    await Promise.all([a.rolloutStatus('ingest', 150_000), b.rolloutStatus('ingest', 150_000)]);
    const [fromA, fromB] = await Promise.all([
      producerStatuses(a, cluster.images.ingest, ingestUrl(a)),
      producerStatuses(b, cluster.images.ingest, ingestUrl(b)),
    ]);
    // B's token at A's ingest: verified, granted nothing there. (After B's first producer: two
    // applies of its ServiceAccount at once may both try to create it.)
    const bAtA = await producerStatuses(b, cluster.images.ingest, ingestUrl(a));
    expect([fromA, fromB, bAtA]).toEqual(['200 401', '200 401', '403 401']);
    expect(await records(literal('a'))).toBe(1);
    expect(await records(literal('b'))).toBe(1);
  });

  it("B cannot take A's topic, even named literally with adopt-topics '*', nor a reserved one: Kafka untouched", async () => {
    const before = await topicState(literal('a'), ['retention.ms']);
    await b.apply(
      pipeline('steal', t1, [{ name: literal('a'), partitions: 6, config: { 'retention.ms': '60000' } }], {
        annotations: { [ADOPT_ANNOTATION]: '*' },
      }),
      pipeline(
        'reserved',
        t1,
        [
          { name: '_schemas', partitions: 2 },
          { name: 'connect-offsets', partitions: 2 },
        ],
        { annotations: { [ADOPT_ANNOTATION]: '*' } },
      ),
    );
    const steal = await waitReady(b, 'steal', 'False');
    // A's Pipeline is older and manages the topic: the conflict is found before any adoption.
    expect(condition(steal, 'Ready')).toMatchObject({
      reason: 'TopicConflict',
      message: expect.stringContaining(`managed by the older Pipeline ${a.name}/events`),
    });
    const reserved = await waitReady(b, 'reserved', 'False', 'ReservedTopicName');
    expect(reserved.status?.topics?.map((t) => [t.name, t.phase, t.managed])).toEqual([
      ['_schemas', 'Blocked', false],
      ['connect-offsets', 'Blocked', false],
    ]);
    expect(await topicState(literal('a'), ['retention.ms'])).toEqual(before);
    expect(before.partitions).toBe(3);
    for (const topic of ['_schemas', 'connect-offsets'])
      expect((await topicState(topic, [])).partitions).toBe(1);
    // Kafka's own `__` topics do not even reach the controller: the API server refuses them.
    await expect(
      b.apply(pipeline('internal', t1, [{ name: '__consumer_offsets', partitions: 50 }])),
    ).rejects.toThrow(/topic names starting with __ are reserved for Kafka internal topics/);
    await b.kubectl(['delete', 'pipeline', 'steal', 'reserved']);
  });

  it('B cannot make the controller use an unlabelled Secret; its RBAC reads Secrets only in the watched namespaces', async () => {
    await b.apply(
      { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'kafka-user' }, stringData: { password: 'x' } },
      pipeline('creds', t1, [{ name: literal('b.creds'), partitions: 1 }], {
        kafka: {
          authentication: {
            type: 'scram-sha-512',
            username: 'tenant-b',
            passwordSecret: { secretName: 'kafka-user', password: 'password' },
          },
        },
      }),
    );
    const creds = await waitReady(b, 'creds', 'False', 'CredentialsNotLabelled');
    expect(condition(creds, 'Ready')?.message).toContain('kafka-user');
    expect(await topicsStartingWith(literal('b.creds'))).toEqual([]);
    const sa = (
      await r1.kubectl([
        'get',
        'deployment',
        't1-controller',
        '-o',
        'jsonpath={.spec.template.spec.serviceAccountName}',
      ])
    ).trim();
    const canI = (verb: string, resource: string, ns: TestNamespace) =>
      kube
        .kubectl([
          'auth',
          'can-i',
          verb,
          resource,
          '-n',
          ns.name,
          `--as=system:serviceaccount:${r1.name}:${sa}`,
        ])
        .then((out) => out.trim())
        // `can-i` answers `no` with exit status 1.
        .catch((e: Error) => (/: exit 1:/.test(e.message) ? 'no' : Promise.reject(e)));
    // The chart README: `get` on Secrets is a Role in the release's namespace and each watched one
    // (the label decides what is used); never `list`, never in a namespace it does not watch.
    expect({
      getInB: await canI('get', 'secrets/kafka-user', b),
      listInB: await canI('list', 'secrets', b),
      getElsewhere: await canI('get', 'secrets/t2-store', r2),
    }).toEqual({ getInB: 'yes', listInB: 'no', getElsewhere: 'no' });
    await b.kubectl(['delete', 'pipeline', 'creds']);
  });

  it("a pod of B reaches the release's ingest and nothing else of it, nor the bundled PostgreSQL of t2", async () => {
    const podIps = async (ns: TestNamespace, release: string) => {
      const pods = await kube.getJson<{
        items: { metadata: { labels: Record<string, string> }; status: { podIP: string } }[];
      }>(['pods', '--namespace', ns.name, '-l', `app.kubernetes.io/instance=${release}`]);
      return (component: string) => {
        const ip = pods.items.find((p) => p.metadata.labels['app.kubernetes.io/name'] === component)?.status
          .podIP;
        if (!ip) throw new Error(`no pod of ${release}'s ${component} in ${ns.name}`);
        return ip;
      };
    };
    const [ip, t2Ip] = await Promise.all([podIps(r1, 't1'), podIps(r2, 't2')]);
    const seen = await probe(
      cluster.images.ingest,
      b,
      'tenant-b-client',
      {},
      {
        ingest: `${ip('ingest')}:8080`,
        consumer: `${ip('consumer')}:8080`,
        consumerAdmin: `${ip('consumer')}:8081`,
        search: `${ip('search')}:8080`,
        controller: `${ip('controller')}:8080`,
        t2Postgresql: `${t2Ip('postgresql')}:5432`,
      },
    );
    expect(seen).toEqual({
      ingest: 'open',
      consumer: 'blocked',
      consumerAdmin: 'blocked',
      search: 'blocked',
      controller: 'blocked',
      t2Postgresql: 'blocked',
    });
  });

  it('a controller killed before its status is written leaves no orphan topic: the Pipeline becomes Ready with its topic managed', async () => {
    const role = `${r1.name}-t1-controller`;
    const rules = (await kube.getJson<{ rules: { resources: string[] }[] }>(['role', role, '-n', a.name]))
      .rules;
    const patchRules = (r: unknown[]) =>
      a.kubectl(['patch', 'role', role, '--type=merge', '-p', JSON.stringify({ rules: r })]);
    // 1. No status write, no topic: the controller records a topic as the Pipeline's (status,
    //    phase Creating) before it creates it, so with `pipelines/status` taken away it creates
    //    nothing, and a crash after the record finds the topic recognised as its own.
    await patchRules(rules.filter((r) => !r.resources.includes('pipelines/status')));
    await a.apply(pipeline('norecord', t1, [{ name: literal('a.norecord'), partitions: 2 }]));
    const [pod] = await r1.readyPods('app.kubernetes.io/name=controller');
    await vi.waitFor(
      async () => {
        const lines = (await r1.logs(pod as string)).split('\n');
        expect(lines.some((l) => l.includes(`${a.name}/norecord`) && /forbidden/i.test(l))).toBe(true);
      },
      { timeout: 60_000, interval: 1000 },
    );
    expect(await topicsStartingWith(literal('a.norecord'))).toEqual([]);
    // 2. Killed (scaled to nothing); meanwhile the state a crash right after the create leaves:
    //    a Pipeline whose status records its topic Creating, and the topic made.
    await r1.kubectl(['scale', 'deployment', 't1-controller', '--replicas=0']);
    await r1.waitFor(`pod/${pod}`, 'delete', 60_000);
    await patchRules(rules);
    await a.apply(pipeline('created', t1, [{ name: literal('a.created'), partitions: 2 }]));
    await a.kubectl([
      'patch',
      'pipeline',
      'created',
      '--subresource=status',
      '--type=merge',
      '-p',
      JSON.stringify({
        status: {
          topics: [
            { name: literal('a.created'), phase: 'Creating', message: 'being created', managed: true },
          ],
        },
      }),
    ]);
    const made = await admin.createTopics({
      topics: [{ topic: literal('a.created'), numPartitions: 2, replicationFactor: 1 }],
    });
    // Made here, and no controller has seen the Pipeline yet.
    expect(made).toBe(true);
    expect((await getPipeline(a, 'created')).status?.conditions).toBeUndefined();
    // 3. Back: both Ready, their topics managed, none made twice or left over.
    await r1.kubectl(['scale', 'deployment', 't1-controller', '--replicas=1']);
    for (const name of ['norecord', 'created']) {
      const p = await waitReady(a, name, 'True', 'Reconciled', 150_000);
      expect(p.status?.topics?.map((t) => [t.phase, t.managed])).toEqual([['Ready', true]]);
    }
    expect(await topicsStartingWith(literal('a.'))).toEqual([literal('a.created'), literal('a.norecord')]);
  }, 300_000);

  it('a second release watching the same namespaces keeps its Pipelines Ready, their topics and records, when the first is uninstalled', async () => {
    await a.apply(pipeline('r2', t2, [{ name: 'events', partitions: 2 }]));
    await b.apply(pipeline('r2', t2, [{ name: 'events', partitions: 2 }]));
    const r2Topics = [`${a.name}.events`, `${b.name}.events`];
    for (const ns of [a, b]) {
      const p = await waitReady(ns, 'r2', 'True', 'Reconciled');
      expect(p.status?.topics?.map((t) => t.name)).toEqual([`${ns.name}.events`]);
    }
    const producer = suite.kafka.producer();
    await producer.connect();
    for (const topic of r2Topics) await producer.send({ topic, messages: [{ value: 'kept' }] });
    await producer.disconnect();
    const t1Topics = [literal('a'), literal('b'), literal('a.created'), literal('a.norecord')];
    const t1Records = await Promise.all(t1Topics.map(records));

    await suite.helm.run(['uninstall', 't1', '--namespace', r1.name, '--wait']);
    // t2's controller still reconciles its own (a change to one is applied) and has taken none of t1's.
    await a.kubectl([
      'patch',
      'pipeline',
      'r2',
      '--type=json',
      '-p',
      '[{"op":"replace","path":"/spec/topics/0/partitions","value":3}]',
    ]);
    const afterA = await waitReady(a, 'r2', 'True', 'Reconciled');
    expect(afterA.status?.topics?.[0]?.partitions).toBe(3);
    expect(condition(await getPipeline(b, 'r2'), 'Ready')?.status).toBe('True');
    for (const topic of r2Topics) expect(await records(topic)).toBe(1);
    // t1's Pipelines (Retain) stay, still stamped as t1's, and so do their topics and records.
    expect((await getPipeline(a, 'events')).metadata.annotations?.[CONTROLLER_ANNOTATION]).toBe(t1);
    expect(await Promise.all(t1Topics.map(records))).toEqual(t1Records);
  });
});
