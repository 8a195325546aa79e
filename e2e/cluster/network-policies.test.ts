/**
 * The chart's NetworkPolicies, enforced by the cluster (kube-router's firewall, scripts/cluster):
 * the policies rendered from charts/observatory (the ServiceMonitors on, so the scrape policy too)
 * are applied beside stand-in pods that carry each component's labels and its named `http`,
 * `metrics` and `admin` ports (no Kafka or database needed), and client pods probe them. Ingest
 * takes anyone on `http`; consumer, search and controller take only the release's own pods (and
 * the peers of `networkPolicies.allowFrom`), on `http` (and the consumer's `admin`) only; the
 * Prometheus pods of `monitoring.scrapeFrom.namespace` reach every `metrics` port and nothing else,
 * a pod labelled `prometheus` elsewhere no `metrics` port; jobs take nothing; a policed pod's
 * egress goes only to DNS and `networkPolicies.egressTo`. The bundled Kafka's and PostgreSQL's
 * policies (stand-ins labelled `kafka` and `postgresql`, listening on 9092 and 5432) admit only
 * the release's components that are their clients: no other pod of the release reaches Kafka.
 * Those probes assert a steady state: each first waits until the enforcer has programmed its own
 * pod (`settle`), so that a refusal seen is the policy's, not the moment before it applies.
 */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { beforeAll, describe, expect, it } from 'vitest';
import { CHART } from './lib/helm.js';
import type { TestNamespace } from './lib/kube.js';
import { SETTLE, probe as tcpProbe } from './lib/netprobe.js';
import { ClusterSuite } from './lib/suite.js';

const suite = new ClusterSuite('netpol');
const { cluster, podStack, kube } = suite;
const RELEASE = 'np';
const SERVERS = ['ingest', 'consumer', 'search', 'controller', 'jobs'] as const;
/** The evaluation profile's servers (kafka.bundled, database.bundled) and their ports. */
const BUNDLED = { kafka: 9092, postgresql: 5432 } as const;
const OTHER_PORT = 9090; // a port of every stand-in named by no policy
const METRICS_PORT = 9464; // named `metrics`: opened by the scrape policy alone
const ADMIN_PORT = 8081; // named `admin`: opened by the consumer's policy alone
const PROMETHEUS = { 'app.kubernetes.io/name': 'prometheus' };
/** A stand-in no policy of the chart selects, names or admits to: the settling probes' canary. */
const CANARY = 'canary';
const instance = { 'app.kubernetes.io/instance': RELEASE };
const pgPort = Number(new URL(podStack.databaseUrl).port);

let ns: TestNamespace;
let other: TestNamespace;
const podIp = new Map<string, string>();

/** The chart's NetworkPolicy objects for this namespace, as `helm template` renders them. */
async function applyPolicies(allowFrom: unknown[], egressTo: unknown[] = []): Promise<void> {
  const { stdout } = await promisify(execFile)(suite.helm.bin, [
    'template',
    RELEASE,
    CHART,
    '--namespace',
    ns.name,
    ...[...SERVERS, ...Object.keys(BUNDLED)].flatMap((c) => [
      '--show-only',
      `templates/${c}-networkpolicy.yaml`,
    ]),
    '--set',
    'kafka.bundled.enabled=true',
    '--set',
    'database.bundled.enabled=true',
    '--show-only',
    'templates/prometheus-scrape-networkpolicy.yaml',
    '--set',
    'monitoring.serviceMonitor.enabled=true',
    '--set-string',
    `monitoring.scrapeFrom.namespace=${other.name}`,
    '--set-string',
    'kafka.bootstrapServers=kafka:9092',
    '--set-string',
    'database.url=postgres://db:5432/observatory',
    ...['store', 'auth', 'admin', 'application'].flatMap((s) => ['--set-string', `secrets.${s}.name=x`]),
    // Egress of a policed pod: this machine only (where Kafka and PostgreSQL are in these tests).
    '--set-json',
    `networkPolicies.egressTo=${JSON.stringify([{ ipBlock: { cidr: `${podStack.host}/32` } }, ...egressTo])}`,
    '--set-json',
    `networkPolicies.allowFrom=${JSON.stringify(allowFrom)}`,
  ]);
  await ns.kubectl(['apply', '-f', '-'], { input: stdout });
}

/** A stand-in: a tiny HTTP server on each of its ports, with a component's labels. */
function standIn(component: string) {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: component, labels: { 'app.kubernetes.io/name': component, ...instance } },
    spec: {
      securityContext: { runAsNonRoot: true, runAsUser: 1000 },
      terminationGracePeriodSeconds: 0,
      containers: [
        {
          name: 'main',
          image: cluster.images.ingest,
          imagePullPolicy: 'IfNotPresent',
          command: [
            'node',
            '-e',
            `for (const p of [8080, ${METRICS_PORT}, ${ADMIN_PORT}, ${OTHER_PORT}, ${BUNDLED.kafka}, ${BUNDLED.postgresql}]) require('node:http').createServer((q, s) => s.end('${component}')).listen(p);`,
          ],
          ports: [
            { name: 'http', containerPort: 8080 },
            { name: 'metrics', containerPort: METRICS_PORT },
            { name: 'admin', containerPort: ADMIN_PORT },
            { containerPort: OTHER_PORT },
          ],
          readinessProbe: { tcpSocket: { port: 8080 }, periodSeconds: 1 },
        },
      ],
    },
  };
}

/**
 * A policy of the test's own, for the probe pods labelled SETTLE: egress anywhere but to `canary`.
 * A new pod is unknown to kube-router until its next sync, and until then no egress rule of its
 * own applies, so the canary answers it; once the canary refuses, a sync that knew the pod (its
 * IP in every policy's sets, its own chain) is in force, and so is every policy applied before.
 * Allowing all else keeps the pods' other connections as the policies under test decide them.
 * The canary is a pod no chart policy names: kube-router lets a pod selected by a policy reach
 * that policy's other pods on a port its ingress rule opens (ingest's `http` to an ingest probe).
 */
async function applySettlePolicy(canary: string): Promise<void> {
  await ns.apply({
    apiVersion: 'networking.k8s.io/v1',
    kind: 'NetworkPolicy',
    metadata: { name: 'test-settle' },
    spec: {
      podSelector: { matchLabels: SETTLE },
      policyTypes: ['Egress'],
      egress: [{ to: [{ ipBlock: { cidr: '0.0.0.0/0', except: [`${canary}/32`] } }] }],
    },
  });
}

const probe = tcpProbe.bind(null, cluster.images.ingest);

const at = (component: string, port = 8080) => `${podIp.get(component)}:${port}`;

beforeAll(async () => {
  [ns, other] = await suite.namespaces('netpol', 'netpol-other');
  await applyPolicies([]);
  await ns.apply(...[...SERVERS, ...Object.keys(BUNDLED), CANARY].map(standIn));
  await ns.kubectl(['wait', '--for=condition=Ready', 'pods', '--all', '--timeout=90s'], {
    timeoutMs: 100_000,
  });
  const pods = await kube.getJson<{ items: { metadata: { name: string }; status: { podIP: string } }[] }>([
    'pods',
    '--namespace',
    ns.name,
  ]);
  for (const p of pods.items) podIp.set(p.metadata.name, p.status.podIP);
}, 180_000);

describe('the chart NetworkPolicies, enforced', () => {
  it('admit the release pods to every http port, refuse other ports, and refuse everyone at jobs', async () => {
    const seen = await probe(
      ns,
      'peer',
      { 'app.kubernetes.io/name': 'peer', ...instance },
      {
        ingest: at('ingest'),
        consumer: at('consumer'),
        search: at('search'),
        controller: at('controller'),
        consumerAdmin: at('consumer', ADMIN_PORT),
        searchAdmin: at('search', ADMIN_PORT),
        searchMetrics: at('search', METRICS_PORT),
        searchOtherPort: at('search', OTHER_PORT),
        jobs: at('jobs'),
      },
    );
    expect(seen).toEqual({
      ingest: 'open',
      consumer: 'open',
      search: 'open',
      controller: 'open',
      consumerAdmin: 'open',
      searchAdmin: 'blocked',
      searchMetrics: 'blocked',
      searchOtherPort: 'blocked',
      jobs: 'blocked',
    });
  });

  it('admit the Prometheus pods of monitoring.scrapeFrom.namespace to every metrics port and nothing else', async () => {
    const targets = {
      ingestMetrics: at('ingest', METRICS_PORT),
      consumerMetrics: at('consumer', METRICS_PORT),
      searchMetrics: at('search', METRICS_PORT),
      controllerMetrics: at('controller', METRICS_PORT),
      consumer: at('consumer'),
      consumerAdmin: at('consumer', ADMIN_PORT),
      search: at('search'),
      controller: at('controller'),
      jobsMetrics: at('jobs', METRICS_PORT),
    };
    const [prometheus, elsewhere] = await Promise.all([
      probe(other, 'prometheus', PROMETHEUS, targets),
      // The same label in a namespace not named: admitted nowhere but ingest's public port.
      probe(ns, 'prometheus-elsewhere', PROMETHEUS, { ...targets, ingest: at('ingest') }),
    ]);
    expect(prometheus).toEqual({
      ingestMetrics: 'open',
      consumerMetrics: 'open',
      searchMetrics: 'open',
      controllerMetrics: 'open',
      consumer: 'blocked',
      consumerAdmin: 'blocked',
      search: 'blocked',
      controller: 'blocked',
      jobsMetrics: 'blocked',
    });
    expect(elsewhere).toEqual({
      ingestMetrics: 'blocked',
      consumerMetrics: 'blocked',
      searchMetrics: 'blocked',
      controllerMetrics: 'blocked',
      consumer: 'blocked',
      consumerAdmin: 'blocked',
      search: 'blocked',
      controller: 'blocked',
      jobsMetrics: 'blocked',
      ingest: 'open',
    });
  });

  it('refuse a pod of another release or another namespace everywhere but ingest', async () => {
    const targets = {
      ingest: at('ingest'),
      consumer: at('consumer'),
      search: at('search'),
      controller: at('controller'),
    };
    const expected = { ingest: 'open', consumer: 'blocked', search: 'blocked', controller: 'blocked' };
    const [stranger, outsider] = await Promise.all([
      probe(ns, 'stranger', { 'app.kubernetes.io/instance': 'another-release' }, targets),
      // The release's own labels do not count from another namespace.
      probe(other, 'outsider', { 'app.kubernetes.io/name': 'peer', ...instance }, targets),
    ]);
    expect(stranger).toEqual(expected);
    expect(outsider).toEqual(expected);
  });

  it("limit a policed pod's egress to egressTo (this machine) and DNS", async () => {
    const seen = await probe(
      ns,
      'jobs-client',
      { 'app.kubernetes.io/name': 'jobs', ...instance },
      {
        postgresOnHost: `${podStack.host}:${pgPort}`,
        search: at('search'),
        dns: '10.96.0.10:53',
      },
    );
    expect(seen).toEqual({ postgresOnHost: 'open', search: 'blocked', dns: 'open' });
  });

  it('admit the peers of networkPolicies.allowFrom (a namespace) to search', async () => {
    await applyPolicies([
      { namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': other.name } } },
    ]);
    const seen = await probe(
      other,
      'admitted',
      { 'app.kubernetes.io/name': 'prometheus' },
      {
        search: at('search'),
        jobs: at('jobs'),
      },
    );
    expect(seen).toEqual({ search: 'open', jobs: 'blocked' });
  });

  it('admit to the bundled Kafka only ingest, consumer and controller, to PostgreSQL only its clients', async () => {
    // The release's pods may connect to the two servers (egressTo narrowed to them, as an operator
    // would): what is refused below is refused by the servers' own policies.
    await applyPolicies(
      [],
      [
        { podSelector: { matchLabels: { 'app.kubernetes.io/name': 'kafka' } } },
        { podSelector: { matchLabels: { 'app.kubernetes.io/name': 'postgresql' } } },
      ],
    );
    await applySettlePolicy(podIp.get(CANARY) ?? '');
    const bundled = {
      kafka: at('kafka', BUNDLED.kafka),
      postgresql: at('postgresql', BUNDLED.postgresql),
    };
    const clients = [
      'ingest',
      'consumer',
      'controller',
      'search',
      'jobs',
      'migration',
      'postgres-exporter',
      'test',
    ];
    const [stranger, ...seen] = await Promise.all([
      // Another release's consumer is not this release's.
      probe(
        ns,
        'stranger-consumer',
        { 'app.kubernetes.io/name': 'consumer', 'app.kubernetes.io/instance': 'another-release' },
        bundled,
        at(CANARY),
      ),
      ...clients.map((c) =>
        probe(ns, `${c}-to-bundled`, { 'app.kubernetes.io/name': c, ...instance }, bundled, at(CANARY)),
      ),
    ]);
    expect(Object.fromEntries(clients.map((c, i) => [c, seen[i]]))).toEqual({
      ingest: { kafka: 'open', postgresql: 'blocked' },
      consumer: { kafka: 'open', postgresql: 'open' },
      controller: { kafka: 'open', postgresql: 'blocked' },
      search: { kafka: 'blocked', postgresql: 'open' },
      jobs: { kafka: 'blocked', postgresql: 'open' },
      migration: { kafka: 'blocked', postgresql: 'open' },
      'postgres-exporter': { kafka: 'blocked', postgresql: 'open' },
      // The helm test pod: neither.
      test: { kafka: 'blocked', postgresql: 'blocked' },
    });
    expect(stranger).toEqual({ kafka: 'blocked', postgresql: 'blocked' });
  }, 240_000);
});
