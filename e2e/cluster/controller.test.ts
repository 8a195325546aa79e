/**
 * The Pipeline controller against the cluster's real API server and the stack's real Kafka.
 * Controllers run in this process (fast to start and stop; their API traffic goes through a TCP
 * proxy so the suite can cut it), except for leader election, where two replicas of the
 * controller image run as pods. Everything happens in namespaces of this suite; the CRD is
 * applied from crds/pipeline.yaml and left installed (it is cluster-wide and shared).
 */
import { randomUUID } from 'node:crypto';
import { ensureTopics, readTopicStates } from '@event-observatory/broker';
import {
  ADOPT_TOPICS_ANNOTATION,
  type ControllerService,
  PAUSE_ANNOTATION,
  type Pipeline,
  type PipelineTopic,
  UNMANAGED_TOPICS_ANNOTATION,
} from '@event-observatory/controller';
import type { KubeConfig } from '@kubernetes/client-node';
import type { Registry } from 'prom-client';
import { beforeAll, describe, expect, it, vi } from 'vitest';
import {
  condition,
  controllerSuite,
  getPipeline,
  pipelineEventReasons,
  startInProcessController,
} from './lib/controller.js';
import { envList, serviceDeployment } from './lib/deployment.js';
import type { Manifest, TestNamespace } from './lib/kube.js';
import { TcpProxy } from './lib/tcp-proxy.js';

const suite = controllerSuite('controller-e2e');
const { cluster, podStack, kube, run, admin } = suite;
/** A topic name of this run. */
const topicName = (base: string) => `ctl-e2e.${run}.${base}`;

/** Short periods, so the suite waits seconds, not minutes. */
const RESYNC_MS = 5_000;
const WATCH_TIMEOUT = '5s'; // a silent watch is declared stalled after 5 s + 10 s

let ns: TestNamespace;
let proxy: TcpProxy;
let local: { service: ControllerService; registry: Registry };

beforeAll(async () => {
  await suite.start();
  ns = await suite.namespace('controller');
  const kubeConfig = suite.kubeConfig();
  const server = new URL(kubeConfig.getCurrentCluster()?.server ?? '');
  proxy = await TcpProxy.start({ host: server.hostname, port: Number(server.port || 443) });
  suite.onCleanup(() => proxy.close());
  kubeConfig.loadFromOptions({
    ...kubeConfig,
    clusters: kubeConfig.clusters.map((c) => ({ ...c, server: `https://${server.hostname}:${proxy.port}` })),
  });
  local = startLocalController(kubeConfig);
  suite.onCleanup(() => local.service.close());
});

function startLocalController(kubeConfig: KubeConfig) {
  return startInProcessController(kubeConfig, {
    BROKER_BOOTSTRAP_SERVERS: podStack.bootstrapServers,
    CONTROLLER_WATCH_NAMESPACE: ns.name,
    CONTROLLER_LEASE_NAMESPACE: ns.name,
    POD_NAME: `local-${run}`,
    CONTROLLER_RESYNC_PERIOD: `${RESYNC_MS}ms`,
    CONTROLLER_WATCH_TIMEOUT: WATCH_TIMEOUT,
    CONTROLLER_BACKOFF_MIN: '200ms',
    CONTROLLER_BACKOFF_MAX: '3s',
    CONTROLLER_KAFKA_TIMEOUT: '5s',
    CONTROLLER_API_TIMEOUT: '5s', // a call caught by the frozen proxy fails after 5 s
    // The operator lets this run's topics be adopted (nothing is, by default).
    CONTROLLER_ADOPTABLE_TOPICS: topicName('*'),
  });
}

function pipeline(
  name: string,
  topics: PipelineTopic[],
  extra: Partial<Pipeline['spec']> = {},
): Pipeline & Manifest {
  return {
    apiVersion: 'observatory.dev/v1alpha1',
    kind: 'Pipeline',
    metadata: { name, namespace: ns.name },
    spec: { kafka: { bootstrapServers: podStack.bootstrapServers }, topics, ...extra },
  };
}

const get = (name: string, namespace = ns) => getPipeline(namespace, name);

/** Waits until the Pipeline's Ready condition has `status` for its current generation. */
async function waitReady(name: string, status: 'True' | 'False', timeout = 30_000, namespace = ns) {
  return vi.waitFor(
    async () => {
      const p = await get(name, namespace);
      const ready = condition(p, 'Ready');
      expect(ready?.status).toBe(status);
      expect(ready?.observedGeneration).toBe(p.metadata.generation);
      expect(p.status?.observedGeneration).toBe(p.metadata.generation);
      return p;
    },
    { timeout, interval: 250 },
  );
}

async function kafkaTopic(name: string, keys: string[] = []) {
  return (await readTopicStates(admin, [name], keys)).get(name);
}

function eventReasons(name: string, namespace = ns): Promise<string[]> {
  return pipelineEventReasons(namespace, name);
}

async function patchSpec(name: string, patch: object, type: 'merge' | 'json' = 'merge') {
  await ns.kubectl(['patch', 'pipeline', name, `--type=${type}`, '-p', JSON.stringify(patch)]);
}

async function metric(line: RegExp): Promise<number> {
  const text = await local.registry.metrics();
  const match = text.split('\n').find((l) => line.test(l));
  return match ? Number(match.split(' ').at(-1)) : Number.NaN;
}

const retentionDay = '86400000';
const events = topicName('events');
const dlq = topicName('dlq');

describe('Pipeline controller on a real API server and Kafka', () => {
  it('creates the declared topics with their partitions and configs, and reports Ready=True for the current generation', async () => {
    await ns.apply(
      pipeline('main', [
        { name: events, partitions: 3, replicationFactor: 1, config: { 'retention.ms': retentionDay } },
        { name: dlq, partitions: 1, replicationFactor: 1, config: { 'cleanup.policy': 'compact' } },
      ]),
    );
    const p = await waitReady('main', 'True');
    expect(p.metadata.finalizers ?? []).not.toContain('observatory.dev/topics'); // Retain: no finalizer
    expect(await kafkaTopic(events, ['retention.ms'])).toMatchObject({
      partitions: 3,
      replicationFactor: 1,
      configs: { 'retention.ms': retentionDay },
    });
    expect((await kafkaTopic(dlq, ['cleanup.policy']))?.configs['cleanup.policy']).toBe('compact');
    expect(p.status?.topics).toEqual([
      {
        name: events,
        phase: 'Ready',
        partitions: 3,
        replicationFactor: 1,
        config: { 'retention.ms': retentionDay },
        managed: true, // kept: the CRD's status schema has it
      },
      {
        name: dlq,
        phase: 'Ready',
        partitions: 1,
        replicationFactor: 1,
        config: { 'cleanup.policy': 'compact' },
        managed: true,
      },
    ]);
    expect(await eventReasons('main')).toContain('TopicCreated');

    const table = await ns.kubectl(['get', 'pipelines']);
    expect(table).toMatch(/NAME\s+TOPICS\s+READY\s+LAG\s+DLQ\s+FLOWING\s+AGE/);
    expect(table).toMatch(/main\s+2\/2\s+True\s/);
    // The Ready condition's reason is a wide column.
    expect(await ns.kubectl(['get', 'pipelines', '-o', 'wide'])).toMatch(
      /main\s+2\/2\s+True\s.*\sReconciled(\s|$)/m,
    );
    expect(await metric(/^controller_reconciles_total\{.*outcome="success"/)).toBeGreaterThan(0);
    expect(await metric(/^controller_topics_managed/)).toBe(2);
    expect(await metric(/^controller_leader/)).toBe(1);
  });

  it('gives a Pipeline no controller has reconciled status.observedGeneration 0, which kstatus (Helm --wait) reads as in progress', async () => {
    const unwatched = await suite.namespace('unwatched');
    await unwatched.apply({
      ...pipeline('unseen', [{ name: topicName('unseen'), partitions: 1, replicationFactor: 1 }]),
      metadata: { name: 'unseen', namespace: unwatched.name },
    });
    const p = await get('unseen', unwatched);
    expect(p.metadata.generation).toBe(1);
    expect(p.status).toEqual({ observedGeneration: 0 });
  });

  it('raises partitions in Kafka when the spec raises them', async () => {
    await patchSpec('main', [{ op: 'replace', path: '/spec/topics/0/partitions', value: 5 }], 'json');
    const p = await waitReady('main', 'True');
    expect(p.status?.topics?.[0]?.partitions).toBe(5);
    expect((await kafkaTopic(events))?.partitions).toBe(5);
    expect(await eventReasons('main')).toContain('PartitionsIncreased');
  });

  it('is refused by the API server with a clear message: negative partitions, fewer partitions, unknown cleanup policy, a __ name, tls login without TLS', async () => {
    const bad = (topics: PipelineTopic[], extra: Partial<Pipeline['spec']> = {}) =>
      ns.apply(pipeline(`bad-${randomUUID().slice(0, 4)}`, topics, extra));
    await expect(bad([{ name: topicName('neg'), partitions: -1, replicationFactor: 1 }])).rejects.toThrow(
      /spec\.topics\[0\]\.partitions.*should be greater than or equal to 1/,
    );
    await expect(bad([{ name: '__consumer_offsets', partitions: 1, replicationFactor: 1 }])).rejects.toThrow(
      /topic names starting with __ are reserved for Kafka internal topics/,
    );
    const certificateAndKey = { secretName: 'user', certificate: 'user.crt', key: 'user.key' };
    await expect(
      bad([{ name: topicName('mtls'), partitions: 1, replicationFactor: 1 }], {
        kafka: {
          bootstrapServers: podStack.bootstrapServers,
          authentication: { type: 'tls', certificateAndKey },
        },
      }),
    ).rejects.toThrow(/authentication type tls needs tls/);
    await expect(
      bad([
        {
          name: topicName('policy'),
          partitions: 1,
          replicationFactor: 1,
          config: { 'cleanup.policy': 'shred' },
        },
      ]),
    ).rejects.toThrow(/cleanup\.policy must be one of delete, compact, compact,delete, delete,compact/);
    await expect(
      patchSpec('main', [{ op: 'replace', path: '/spec/topics/0/partitions', value: 2 }], 'json'),
    ).rejects.toThrow(/partitions may not decrease: Kafka cannot remove partitions from a topic/);
    await expect(
      patchSpec('main', [{ op: 'replace', path: '/spec/topics/0/replicationFactor', value: 3 }], 'json'),
    ).rejects.toThrow(/replicationFactor is immutable/);
  });

  it('takes over an existing topic only with the adopt annotation; one with more partitions than declared: Ready=False with the reason, partitions untouched', async () => {
    const existing = topicName('existing');
    await ensureTopics(admin, [{ name: existing, partitions: 4, replicationFactor: 1, configs: {} }]);
    await ns.apply(
      pipeline('adopter', [
        { name: existing, partitions: 2, replicationFactor: 1, config: { 'retention.ms': retentionDay } },
      ]),
    );
    const blocked = await waitReady('adopter', 'False');
    expect(condition(blocked, 'Ready')?.reason).toBe('AdoptionRequired');
    expect((await kafkaTopic(existing, ['retention.ms']))?.configs['retention.ms']).not.toBe(retentionDay);
    await ns.kubectl(['annotate', 'pipeline', 'adopter', `${ADOPT_TOPICS_ANNOTATION}=${existing}`]);
    const p = await vi.waitFor(
      async () => {
        const q = await get('adopter');
        expect(condition(q, 'Ready')?.reason).toBe('PartitionDecreaseRefused');
        return q;
      },
      { timeout: 15_000, interval: 250 },
    );
    const ready = condition(p, 'Ready');
    expect(ready?.reason).toBe('PartitionDecreaseRefused');
    expect(ready?.message).toContain(
      `${existing}: has 4 partitions, spec asks 2; partitions are never decreased`,
    );
    expect(p.status?.topics?.[0]).toMatchObject({ name: existing, phase: 'Refused', partitions: 4 });
    // Refused only what Kafka cannot do: the config was still applied.
    expect(await kafkaTopic(existing, ['retention.ms'])).toMatchObject({
      partitions: 4,
      configs: { 'retention.ms': retentionDay },
    });
    const described = await ns.kubectl(['describe', 'pipeline', 'adopter']);
    expect(described).toMatch(/Reason:\s+PartitionDecreaseRefused/);
    expect(described).toMatch(/Warning\s+ChangeRefused/);
    expect(await metric(/^controller_reconciles_total\{.*outcome="failure"/)).toBeGreaterThan(0);
  });

  it('sets a config changed directly in Kafka back within the resync period', async () => {
    // Changed again when a resync lands between the change and the read that proves it.
    await vi.waitFor(
      async () => {
        await admin.alterConfigs({
          validateOnly: false,
          resources: [{ type: 2, name: events, configEntries: [{ name: 'retention.ms', value: '1234' }] }],
        });
        expect((await kafkaTopic(events, ['retention.ms']))?.configs['retention.ms']).toBe('1234');
      },
      { timeout: 10_000, interval: 500 },
    );
    const started = Date.now();
    await vi.waitFor(
      async () =>
        expect((await kafkaTopic(events, ['retention.ms']))?.configs['retention.ms']).toBe(retentionDay),
      { timeout: RESYNC_MS + 5_000, interval: 250 },
    );
    expect(Date.now() - started).toBeLessThan(RESYNC_MS + 5_000);
    await vi.waitFor(async () => expect(await eventReasons('main')).toContain('ConfigsUpdated'), {
      timeout: 5_000,
    });
  });

  it('changes nothing while paused (ReconciliationPaused=True), and catches up when resumed', async () => {
    await ns.kubectl(['annotate', 'pipeline', 'main', `${PAUSE_ANNOTATION}=true`]);
    await vi.waitFor(
      async () => expect(condition(await get('main'), 'ReconciliationPaused')?.status).toBe('True'),
      {
        timeout: 15_000,
        interval: 250,
      },
    );
    await patchSpec('main', [{ op: 'replace', path: '/spec/topics/0/partitions', value: 6 }], 'json');
    await new Promise((r) => setTimeout(r, RESYNC_MS + 1_000)); // a resync passes: still nothing
    expect((await kafkaTopic(events))?.partitions).toBe(5);
    // Observed and left alone, as a paused Deployment: Helm's --wait does not hang on it.
    const paused = await get('main');
    expect(paused.status?.observedGeneration).toBe(paused.metadata.generation);
    expect(condition(paused, 'Reconciling')).toMatchObject({ status: 'False', reason: 'Paused' });

    await ns.kubectl(['annotate', 'pipeline', 'main', `${PAUSE_ANNOTATION}-`]);
    const p = await waitReady('main', 'True');
    expect(condition(p, 'ReconciliationPaused')).toBeUndefined();
    expect((await kafkaTopic(events))?.partitions).toBe(6);
  });

  it('gives a topic claimed by two Pipelines to the older; the newer reports the conflict and takes over when the older is deleted (Retain keeps the topics)', async () => {
    await ns.apply(
      pipeline('newer', [
        { name: dlq, partitions: 1, replicationFactor: 1, config: { 'cleanup.policy': 'delete' } },
      ]),
    );
    const newer = await waitReady('newer', 'False');
    expect(condition(newer, 'Ready')?.reason).toBe('TopicConflict');
    expect(condition(newer, 'Conflict')).toMatchObject({
      status: 'True',
      reason: 'TopicClaimedByOlderPipeline',
    });
    expect(condition(newer, 'Conflict')?.message).toContain(`managed by the older Pipeline ${ns.name}/main`);
    expect((await kafkaTopic(dlq, ['cleanup.policy']))?.configs['cleanup.policy']).toBe('compact');

    await ns.kubectl(['delete', 'pipeline', 'main', '--wait=true', '--timeout=30s']);
    expect(await kafkaTopic(events)).toBeDefined(); // deletionPolicy Retain (default)
    const tookOver = await waitReady('newer', 'True');
    expect(condition(tookOver, 'Conflict')?.status).toBe('False');
    // A broker applies an altered config from the metadata log a moment after it answers the alter.
    await vi.waitFor(
      async () =>
        expect((await kafkaTopic(dlq, ['cleanup.policy']))?.configs['cleanup.policy']).toBe('delete'),
      { timeout: 10_000, interval: 250 },
    );
  });

  it('deletes the managed topics with deletionPolicy Delete, never an unmanaged one', async () => {
    const doomed = topicName('doomed');
    const kept = topicName('kept');
    const p = pipeline(
      'deleter',
      [
        { name: doomed, partitions: 1, replicationFactor: 1 },
        { name: kept, partitions: 1, replicationFactor: 1 },
      ],
      { deletionPolicy: 'Delete' },
    );
    p.metadata.annotations = { [UNMANAGED_TOPICS_ANNOTATION]: kept };
    await ensureTopics(admin, [{ name: kept, partitions: 2, replicationFactor: 1, configs: {} }]);
    await ns.apply(p);
    const ready = await waitReady('deleter', 'True');
    expect(ready.metadata.finalizers).toContain('observatory.dev/topics');
    expect(ready.status?.topics?.map((t) => [t.name, t.phase, t.partitions])).toEqual([
      [doomed, 'Ready', 1],
      [kept, 'Unmanaged', 2],
    ]);
    await ns.kubectl(['delete', 'pipeline', 'deleter', '--wait=true', '--timeout=30s']);
    // Kafka deletes asynchronously: a broker's metadata may still list the topic for a moment after
    // DeleteTopics returned, and a metadata request for it then fails instead of answering "absent".
    await vi.waitFor(async () => expect(await kafkaTopic(doomed)).toBeUndefined(), {
      timeout: 10_000,
      interval: 250,
    });
    expect((await kafkaTopic(kept))?.partitions).toBe(2);
  });

  it('keeps reconciling when its watch connection is reset, and when it silently stops delivering (stall)', async () => {
    const watched = topicName('watched');
    await ns.apply(pipeline('watched', [{ name: watched, partitions: 1, replicationFactor: 1 }]));
    await waitReady('watched', 'True');

    const errors = () => metric(/^controller_watch_restarts_total\{.*reason="error"/);
    const errorsBefore = await errors();
    // Each watch ends after WATCH_TIMEOUT and the next may open a new connection: a reset that lands
    // between the two cuts only an idle socket. It is repeated until one cuts a watch.
    await vi.waitFor(
      async () => {
        expect(proxy.resetAll()).toBeGreaterThan(0);
        expect(await errors()).toBeGreaterThan(Number.isNaN(errorsBefore) ? 0 : errorsBefore);
      },
      { timeout: 20_000, interval: 1_000 },
    );
    await patchSpec('watched', [{ op: 'replace', path: '/spec/topics/0/partitions', value: 2 }], 'json');
    await vi.waitFor(async () => expect((await kafkaTopic(watched))?.partitions).toBe(2), {
      timeout: 15_000,
      interval: 250,
    });

    // Frozen: nothing arrives and nothing ends. Only the stall watchdog (5 s timeout + 10 s) ends it;
    // the cache would otherwise keep the old spec forever. The new spec may reach Kafka before the
    // watchdog fires (a status write from the stale cache conflicts and the object is read again),
    // so each of the two is awaited on its own. A freeze that lands while the watch is between two
    // requests catches only other sockets, so it is repeated until a watch stalls.
    proxy.freezeAll();
    await patchSpec('watched', [{ op: 'replace', path: '/spec/topics/0/partitions', value: 3 }], 'json');
    await vi.waitFor(async () => expect((await kafkaTopic(watched))?.partitions).toBe(3), {
      timeout: 30_000,
      interval: 500,
    });
    await vi.waitFor(
      async () => {
        proxy.freezeAll();
        expect(await metric(/^controller_watch_restarts_total\{.*reason="stalled"/)).toBeGreaterThan(0);
      },
      { timeout: 45_000, interval: 1_000 },
    );
    // And reconciling goes on after the stall.
    await patchSpec('watched', [{ op: 'replace', path: '/spec/topics/0/partitions', value: 4 }], 'json');
    await vi.waitFor(async () => expect((await kafkaTopic(watched))?.partitions).toBe(4), {
      timeout: 30_000,
      interval: 500,
    });
  });
});

describe('two controller replicas as pods', () => {
  let podNs: TestNamespace;
  const LEASE_SECONDS = 6;
  const RETRY_SECONDS = 1;

  beforeAll(async () => {
    podNs = await suite.namespace('controller-pods');
    // In afterAll, the controllers before their namespace: alive, they would put the finalizer
    // back, and killed mid-way by the namespace deletion they could leave it on.
    suite.onCleanup(() =>
      podNs.kubectl([
        'delete',
        'deployment',
        'controller',
        '--ignore-not-found',
        '--cascade=foreground',
        '--wait=true',
        '--timeout=60s',
      ]),
    );
    await podNs.apply(
      { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'controller' } },
      {
        // The README's RBAC table, namespaced (CONTROLLER_WATCH_NAMESPACE is set).
        apiVersion: 'rbac.authorization.k8s.io/v1',
        kind: 'Role',
        metadata: { name: 'controller' },
        rules: [
          { apiGroups: ['observatory.dev'], resources: ['pipelines'], verbs: ['list', 'watch', 'patch'] },
          { apiGroups: ['observatory.dev'], resources: ['pipelines/status'], verbs: ['patch'] },
          { apiGroups: [''], resources: ['events'], verbs: ['create'] },
          { apiGroups: [''], resources: ['secrets'], verbs: ['get'] },
          // Its own Lease by name, made here as the chart makes it (no `create`).
          {
            apiGroups: ['coordination.k8s.io'],
            resources: ['leases'],
            resourceNames: ['observatory-controller'],
            verbs: ['get', 'update'],
          },
        ],
      },
      {
        apiVersion: 'coordination.k8s.io/v1',
        kind: 'Lease',
        metadata: { name: 'observatory-controller' },
        spec: {},
      },
      {
        apiVersion: 'rbac.authorization.k8s.io/v1',
        kind: 'RoleBinding',
        metadata: { name: 'controller' },
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'controller' },
        subjects: [{ kind: 'ServiceAccount', name: 'controller', namespace: podNs.name }],
      },
      serviceDeployment({
        name: 'controller',
        image: cluster.images.controller,
        replicas: 2,
        serviceAccountName: 'controller',
        env: [
          { name: 'POD_NAME', valueFrom: { fieldRef: { fieldPath: 'metadata.name' } } },
          { name: 'POD_NAMESPACE', valueFrom: { fieldRef: { fieldPath: 'metadata.namespace' } } },
          ...envList({
            CONTROLLER_WATCH_NAMESPACE: podNs.name,
            BROKER_BOOTSTRAP_SERVERS: podStack.bootstrapServers,
            CONTROLLER_LEASE_DURATION: `${LEASE_SECONDS}s`,
            CONTROLLER_RENEW_DEADLINE: '4s',
            CONTROLLER_RETRY_PERIOD: `${RETRY_SECONDS}s`,
            // As if the leader crashed: no hand-over, the standby must wait for the lease to expire.
            CONTROLLER_LEASE_RELEASE_ON_SHUTDOWN: 'false',
            CONTROLLER_RESYNC_PERIOD: '30s',
          }),
        ],
        readiness: { periodSeconds: 1 },
        liveness: true,
        cpuRequest: '20m',
      }),
    );
    await podNs.rolloutStatus('controller');
  });

  async function holder(): Promise<{ holder: string; transitions: number; acquired: number }> {
    const lease = await kube.getJson<{
      spec: { holderIdentity?: string; leaseTransitions?: number; acquireTime?: string };
    }>(['lease', 'observatory-controller', '--namespace', podNs.name]);
    return {
      holder: lease.spec.holderIdentity ?? '',
      transitions: lease.spec.leaseTransitions ?? 0,
      acquired: Date.parse(lease.spec.acquireTime ?? ''),
    };
  }

  it('has one leader; when its pod is killed a surviving replica takes over within the lease duration and reconciles a change made meanwhile', async () => {
    const pods = await podNs.readyPods('app=controller');
    expect(pods).toHaveLength(2);
    const leader = await vi.waitFor(
      async () => {
        const { holder: h } = await holder();
        expect(pods).toContain(h);
        return h;
      },
      { timeout: 20_000, interval: 250 },
    );
    const standby = pods.find((p) => p !== leader) as string;
    expect(await podNs.logs(leader)).toContain('became leader');
    expect(await podNs.logs(standby)).not.toContain('became leader');

    const topic = topicName('failover');
    const p = pipeline('failover', [{ name: topic, partitions: 1, replicationFactor: 1 }]);
    p.metadata.namespace = podNs.name;
    await podNs.apply(p);
    await waitReady('failover', 'True', 30_000, podNs);

    const before = await holder();
    const killed = Date.now();
    await podNs.kubectl(['delete', 'pod', leader, '--grace-period=0', '--force', '--wait=false']);
    await podNs.kubectl([
      'patch',
      'pipeline',
      'failover',
      '--type=json',
      '-p',
      JSON.stringify([{ op: 'replace', path: '/spec/topics/0/partitions', value: 2 }]),
    ]);
    const next = await vi.waitFor(
      async () => {
        const now = await holder();
        expect(now.holder).not.toBe(leader);
        expect(now.holder).not.toBe('');
        return now;
      },
      { timeout: (LEASE_SECONDS + 10) * 1000, interval: 200 },
    );
    // The new holder stamps the time it took the lease: no kubectl latency in the figure.
    const takeoverMs = next.acquired - killed;
    // The standby, or the pod the Deployment made in place of the killed one: whichever retries
    // first after the lease expired takes it (CI saw the replacement win).
    const survivors = (await podNs.pods('app=controller')).map((pod) => pod.metadata.name);
    expect(survivors).toContain(next.holder);
    expect(next.transitions).toBe(before.transitions + 1);
    // Not released: taken after the lease expired. The standby counts the lease from when it saw
    // the last renewal (up to one retry period after it) and looks again every retry period, so
    // the bound is the lease duration plus two retry periods; plus 4 s because a force-deleted
    // pod's process lives on (and may renew) until the kubelet kills it, and for the API requests
    // on a loaded 2-core machine.
    expect(takeoverMs).toBeLessThanOrEqual((LEASE_SECONDS + 2 * RETRY_SECONDS + 4) * 1000);
    expect(takeoverMs).toBeGreaterThanOrEqual((LEASE_SECONDS - 2) * 1000);
    await vi.waitFor(async () => expect((await kafkaTopic(topic))?.partitions).toBe(2), {
      timeout: 20_000,
      interval: 250,
    });
    await waitReady('failover', 'True', 20_000, podNs);
    process.stderr.write(
      `[controller e2e] leader ${leader} killed; ${next.holder} took over after ${takeoverMs} ms (standby ${standby})\n`,
    );
  });
});
