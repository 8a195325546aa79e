/**
 * The Helm chart (charts/observatory) on the real cluster: `helm install` with the images of
 * `make images` and the suite's Kafka (its SASL_SSL listener: a SCRAM-SHA-512 user, the run's CA,
 * both from Secrets as Strimzi makes them) and PostgreSQL; every pod Ready; the migration hook ran once;
 * an event POSTed through the ingest Service is stored and found through the search Service; a
 * Pipeline naming another secured listener (mutual TLS) and its Secrets gets its topic; the
 * CronJobs (every minute here) run to completion and show in the store and the consumer's meters;
 * `helm upgrade` with changed values rolls the pods under a steady load without a failed request
 * and without losing or doubling an acknowledged event; `helm uninstall` leaves only what the deletion policy keeps.
 */
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { withKafkaAdmin } from '@event-observatory/devstack';
import { randomDevSecret } from '@event-observatory/service-kit';
import type pg from 'pg';
import { beforeAll, describe, expect, it } from 'vitest';
import { binaryHeaders, ingestToken } from './lib/cloudevents.js';
import { REPO_ROOT } from './lib/cluster.js';
import { baseInstall, CHART, setArgs } from './lib/helm.js';
import { httpRequest } from './lib/http.js';
import type { TestNamespace } from './lib/kube.js';
import { ClusterSuite } from './lib/suite.js';

const suite = new ClusterSuite('chart');
const { cluster, podStack, kube, helm, run: suffix, topic } = suite;
const RELEASE = 'obs';
const authSecret = randomDevSecret();
const { secured } = podStack;
const kafkaUser = secured.users[0] as { username: string; password: string };
const PROMETHEUS_CRDS = ['servicemonitors', 'prometheusrules'].map((crd) =>
  join(REPO_ROOT, `cdk8s/vendor/prometheus-operator-crds/monitoring.coreos.com_${crd}.yaml`),
);

let ns: TestNamespace;
let db: pg.Pool;
let token: string;
let values: Record<string, string | number | boolean>;
/** Small requests for every component (baseInstall). */
let resourceArgs: string[];

/** `clusterIP:port` of a component's Service: `http` (8080) unless told, e.g. `metrics` (9464). */
function serviceAddress(component: string, port = 8080): Promise<string> {
  return kube.serviceAddress(ns.name, `${RELEASE}-${component}`, port);
}

function postEvent(ingest: string, id: string, subject = 'chart-e2e') {
  return httpRequest(ingest, '/v1/events', {
    method: 'POST',
    headers: binaryHeaders(token, { id, source: '/chart-e2e', type: 'com.example.chart.test', subject }),
    body: JSON.stringify({ id }),
  });
}

async function eventually<T>(
  what: string,
  timeoutMs: number,
  probe: () => Promise<T | undefined>,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe().catch(() => undefined);
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs / 1000} s waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 1000));
  }
}

async function storedCounts(ids: string[]): Promise<Map<string, number>> {
  const { rows } = await db.query<{ ce_id: string; n: string }>(
    // sql-witness: checks what the deployed services stored, in its own SQL.
    'SELECT ce_id, count(*) AS n FROM events.cloud_event WHERE ce_id = ANY($1) GROUP BY ce_id',
    [ids],
  );
  return new Map(rows.map((r) => [r.ce_id, Number(r.n)]));
}

/** Waits until the Pipeline `name` of the namespace is Ready=True. */
function pipelineReady(name: string) {
  return eventually(`the Pipeline ${name} to be Ready`, 60_000, async () => {
    const p = await kube.getJson<{ status?: { conditions?: { type: string; status: string }[] } }>([
      'pipeline',
      name,
      '--namespace',
      ns.name,
    ]);
    return p.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') ? p : undefined;
  });
}

/** Names of every object of the release's kinds left in the namespace (defaults excluded). */
async function leftovers(): Promise<string[]> {
  const kinds =
    'deployments,replicasets,pods,services,configmaps,secrets,serviceaccounts,roles,rolebindings,poddisruptionbudgets,networkpolicies,cronjobs,jobs,ingresses,servicemonitors,prometheusrules,pipelines,leases';
  const list = await kube.getJson<{ items: { kind: string; metadata: { name: string } }[] }>([
    kinds,
    '--namespace',
    ns.name,
  ]);
  const defaults = new Set([
    'ConfigMap/kube-root-ca.crt',
    'ServiceAccount/default',
    // The suite's own Secrets, made before the install.
    'Secret/chart-secrets',
    'Secret/kafka-cluster-ca-cert',
    'Secret/kafka-user',
  ]);
  return list.items.map((o) => `${o.kind}/${o.metadata.name}`).filter((n) => !defaults.has(n));
}

beforeAll(async () => {
  const t0 = Date.now();
  for (const crd of PROMETHEUS_CRDS) await kube.kubectl(['apply', '--server-side', '-f', crd]);
  await suite.pipelineCrd();
  ns = await suite.namespace();

  const databaseUrl = await suite.database();
  db = suite.pool(databaseUrl);
  token = await ingestToken(authSecret);
  const base = await baseInstall(cluster.images, { ns, name: 'chart-secrets', databaseUrl, authSecret });
  // As Strimzi makes them: the cluster CA's Secret, and a KafkaUser's Secret (password, and a
  // client certificate for the mutual-TLS listener); labelled so a Pipeline may name them.
  const credentials = { 'observatory.dev/pipeline-credentials': 'true' };
  await ns.apply({
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { name: 'kafka-cluster-ca-cert', labels: credentials },
    stringData: { 'ca.crt': readFileSync(secured.caFile, 'utf8') },
  });
  await ns.apply({
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { name: 'kafka-user', labels: credentials },
    stringData: {
      password: kafkaUser.password,
      'user.crt': readFileSync(secured.clientCertFile, 'utf8'),
      'user.key': readFileSync(secured.clientKeyFile, 'utf8'),
    },
  });
  values = {
    ...base.values,
    // Every Kafka client of the release over SASL_SSL (the suite reads back over PLAINTEXT).
    'kafka.bootstrapServers': secured.saslSsl,
    'kafka.tls.enabled': true,
    'kafka.tls.caSecret.name': 'kafka-cluster-ca-cert',
    'kafka.sasl.mechanism': 'SCRAM-SHA-512',
    'kafka.sasl.username': kafkaUser.username,
    'kafka.sasl.passwordSecret.name': 'kafka-user',
    // Helm's --set splits at commas unless escaped.
    'controller.allowedBootstrapServers': `${secured.saslSsl}\\,${secured.ssl}`,
    'kafka.groupId': suite.groupId,
    'pipeline.topic': topic,
    // The uninstall test proves the opt-in path: a Delete Pipeline's topic goes with it.
    'controller.deleteTopicsOnUninstall': true,
    // The topics do not exist: the controller creates them from the chart's Pipeline.
    'ingest.replicas': 1,
    'consumer.replicas': 1,
    'search.replicas': 1,
    // Search's login is on (local by default): this suite reads with a service-account token.
    'search.auth.bearer.serviceAccounts': true,
    'controller.replicas': 1,
    'jobs.partitionMaintenance.schedule': '*/1 * * * *',
    'jobs.rollupRefresh.schedule': '*/1 * * * *',
    'monitoring.serviceMonitor.enabled': true,
    // Required with the ServiceMonitors and NetworkPolicies: the only namespace admitted to scrape.
    'monitoring.scrapeFrom.namespace': 'monitoring',
    'monitoring.prometheusRule.enabled': true,
    'monitoring.dashboard.enabled': true,
  };
  resourceArgs = base.resourceArgs;
  await suite.helmInstall(RELEASE, ns, [...setArgs(values), ...resourceArgs]);
  suite.log(`installed in ${Math.round((Date.now() - t0) / 1000)} s`);
}, 480_000);

describe('the chart on the cluster', () => {
  it('brings every pod to Ready', async () => {
    const pods = await kube.getJson<{
      items: {
        metadata: { name: string; labels: Record<string, string> };
        status: { phase: string; conditions?: { type: string; status: string }[] };
      }[];
    }>([
      'pods',
      '--namespace',
      ns.name,
      '-l',
      `app.kubernetes.io/instance=${RELEASE},app.kubernetes.io/name in (ingest,consumer,search,controller)`,
    ]);
    // The CronJobs' pods (every minute here) come and go; the services' pods must all be Ready.
    const services = pods.items;
    expect(services.map((p) => p.metadata.labels['app.kubernetes.io/name']).sort()).toEqual([
      'consumer',
      'controller',
      'ingest',
      'search',
    ]);
    for (const pod of services) {
      expect(pod.status.conditions?.find((c) => c.type === 'Ready')?.status, pod.metadata.name).toBe('True');
    }
  });

  it("made the controller create the Pipeline's topics (Ready), which ingest and the consumer use", async () => {
    expect(await pipelineReady(`${RELEASE}-events`)).toBeDefined();
    const topics = await withKafkaAdmin(podStack.bootstrapServers, (admin) => admin.listTopics());
    expect(topics).toEqual(expect.arrayContaining([topic, `${topic}.dlq`]));
  });

  it('passes every Kafka client the SASL_SSL settings, the password only as a mounted file', async () => {
    for (const component of ['ingest', 'consumer', 'controller']) {
      const map = await kube.getJson<{ data: Record<string, string> }>([
        'configmap',
        `${RELEASE}-${component}`,
        '--namespace',
        ns.name,
      ]);
      expect(map.data).toMatchObject({
        BROKER_BOOTSTRAP_SERVERS: secured.saslSsl,
        BROKER_SECURITY_PROTOCOL: 'SASL_SSL',
        BROKER_SASL_PASSWORD_FILE: '/etc/observatory/kafka/sasl-password',
      });
      expect(JSON.stringify(map)).not.toContain(kafkaUser.password);
    }
  });

  it('lets a Pipeline name another allowlisted listener with Strimzi-style Secrets (mutual TLS): its topic is made', async () => {
    const own = `chart-e2e-mtls.${suffix}`;
    await ns.apply({
      apiVersion: 'observatory.dev/v1alpha1',
      kind: 'Pipeline',
      metadata: { name: 'mtls' },
      spec: {
        kafka: {
          bootstrapServers: secured.ssl,
          tls: { trustedCertificates: [{ secretName: 'kafka-cluster-ca-cert', certificate: 'ca.crt' }] },
          authentication: {
            type: 'tls',
            certificateAndKey: { secretName: 'kafka-user', certificate: 'user.crt', key: 'user.key' },
          },
        },
        topics: [{ name: own, partitions: 1, replicationFactor: 1 }],
      },
    });
    await pipelineReady('mtls');
    expect(await withKafkaAdmin(podStack.bootstrapServers, (admin) => admin.listTopics())).toContain(own);
    await kube.kubectl(['delete', 'pipeline', 'mtls', '--namespace', ns.name, '--wait']);
  });

  it('ran the migration once, as a hook Job that is gone after succeeding', async () => {
    const { rows } = await db.query<{ name: string; n: string }>(
      'SELECT name, count(*) AS n FROM events.schema_migration GROUP BY name ORDER BY name',
    );
    expect(rows.length).toBeGreaterThan(5);
    expect(rows.every((r) => r.n === '1')).toBe(true);
    const jobs = await kube.getJson<{ items: unknown[] }>([
      'jobs',
      '--namespace',
      ns.name,
      '-l',
      'app.kubernetes.io/name=migration',
    ]);
    expect(jobs.items).toEqual([]);
    const consumer = (await ns.readyPods('app.kubernetes.io/name=consumer'))[0] as string;
    expect(await ns.logs(consumer)).not.toMatch(/migrations done|applying migration/i);
  });

  it('stores an event POSTed through the ingest Service and finds it through the search Service', async () => {
    const ingest = await serviceAddress('ingest');
    const id = `chart-${randomUUID()}`;
    const subject = `subject-${suffix}`;
    const res = await eventually('ingest to answer', 30_000, async () => {
      const r = await postEvent(ingest, id, subject);
      return r.status === 200 ? r : undefined;
    });
    expect(res.status).toBe(200);
    const uid = await eventually('the event in the store', 60_000, async () => {
      const { rows } = await db.query<{ event_uid: string }>(
        'SELECT event_uid FROM events.cloud_event WHERE ce_id = $1',
        [id],
      );
      return rows[0]?.event_uid;
    });
    const search = await serviceAddress('search');
    const anonymous = await httpRequest(search, `/events?subject=${subject}`, {
      headers: { host: `${RELEASE}-search` },
    });
    expect(anonymous.status, 'search refuses a reader without login').not.toBe(200);
    const token = await ns.serviceAccountToken(`${RELEASE}-ingest`, 'observatory-search');
    const page = await httpRequest(search, `/events?subject=${subject}`, {
      headers: { host: `${RELEASE}-search`, authorization: `Bearer ${token}` },
    });
    expect(page.status).toBe(200);
    expect(page.body).toContain(`/events/${uid}`);
  });

  it('runs both CronJobs to completion; their runs show in the store and in the exported meters', async () => {
    const succeeded = await eventually('a successful Job of each CronJob', 200_000, async () => {
      const jobs = await kube.getJson<{
        items: { metadata: { name: string }; status: { succeeded?: number } }[];
      }>(['jobs', '--namespace', ns.name]);
      const done = jobs.items.filter((j) => (j.status.succeeded ?? 0) > 0).map((j) => j.metadata.name);
      const both = ['partition-maintenance', 'rollup-refresh'].every((n) =>
        done.some((d) => d.startsWith(`${RELEASE}-${n}-`)),
      );
      return both ? done : undefined;
    });
    expect(succeeded.length).toBeGreaterThanOrEqual(2);
    const { rows } = await db.query<{ job: string }>(
      "SELECT DISTINCT job FROM events.maintenance_run WHERE outcome = 'success' ORDER BY job",
    );
    expect(rows.map((r) => r.job)).toEqual(['partition-maintenance', 'rollup-refresh']);
    const consumer = await serviceAddress('consumer', 9464); // its metrics port
    const metrics = await eventually('the maintenance meters on the consumer', 90_000, async () => {
      const { body } = await httpRequest(consumer, '/metrics');
      return /maintenance_last_success_timestamp_seconds\{[^}]*job="rollup-refresh"/.test(body)
        ? body
        : undefined;
    });
    expect(metrics).toMatch(
      /maintenance_last_success_timestamp_seconds\{[^}]*job="partition-maintenance"[^}]*\} \d/,
    );
  }, 420_000);

  it('accepts the monitoring objects (Prometheus Operator CRDs) and labels the dashboard for the Grafana sidecar', async () => {
    const monitors = await kube.getJson<{ items: { metadata: { name: string } }[] }>([
      'servicemonitors',
      '--namespace',
      ns.name,
    ]);
    expect(monitors.items.map((m) => m.metadata.name).sort()).toEqual([
      'obs-consumer',
      'obs-controller',
      'obs-ingest',
      'obs-search',
    ]);
    const rule = await kube.getJson<{ spec: { groups: { rules: unknown[] }[] } }>([
      'prometheusrule',
      `${RELEASE}-alerts`,
      '--namespace',
      ns.name,
    ]);
    expect(rule.spec.groups.flatMap((g) => g.rules)).toHaveLength(14);
    const dashboards = await kube.getJson<{ items: unknown[] }>([
      'configmaps',
      '--namespace',
      ns.name,
      '-l',
      'grafana_dashboard=1',
    ]);
    expect(dashboards.items).toHaveLength(1);
  });

  it('rolls every pod on helm upgrade with changed values, losing and doubling no acknowledged event under load', async () => {
    const before = new Set(
      (
        await kube.getJson<{ items: { metadata: { name: string } }[] }>([
          'pods',
          '--namespace',
          ns.name,
          '-l',
          'app.kubernetes.io/part-of=event-observatory',
        ])
      ).items.map((p) => p.metadata.name),
    );
    const ingest = await serviceAddress('ingest');
    const acknowledged: string[] = [];
    // Every request that did not get 200: a refused or reset connection, or an error status.
    const failed: string[] = [];
    let loading = true;
    const load = (async () => {
      for (let n = 0; loading && n < 2000; n++) {
        const id = `upgrade-${suffix}-${n}`;
        const res = await postEvent(ingest, id).catch((e: NodeJS.ErrnoException) => ({
          status: 0,
          body: e.code ?? e.message,
        }));
        if (res.status === 200) acknowledged.push(id);
        else failed.push(`${id}: ${res.status} ${res.body.slice(0, 120)}`);
        await new Promise((r) => setTimeout(r, 100));
      }
    })();
    try {
      values['ingest.logLevel'] = 'debug';
      values['consumer.logLevel'] = 'debug';
      values['search.logLevel'] = 'debug';
      await helm.run([
        'upgrade',
        RELEASE,
        CHART,
        '--namespace',
        ns.name,
        '--wait',
        '--timeout',
        '6m',
        ...setArgs(values),
        ...resourceArgs,
      ]);
      await new Promise((r) => setTimeout(r, 3000));
    } finally {
      loading = false;
      await load;
    }
    // Old pods still terminating (the consumer drains for up to 75 s) do not count.
    const after = await ns.pods('app.kubernetes.io/name in (ingest,consumer,search)');
    expect(after).toHaveLength(3);
    expect(after.filter((p) => before.has(p.metadata.name))).toEqual([]);
    process.stderr.write(
      `[chart] upgrade under load: ${acknowledged.length} acknowledged, ${failed.length} failed\n`,
    );
    // The preStop delay keeps each old pod serving until it has left the endpoints, and its drain
    // answers `connection: close`: no request is refused, reset or answered with an error.
    expect(failed).toEqual([]);
    expect(acknowledged.length).toBeGreaterThan(20);
    const counts = await eventually('every acknowledged event in the store', 120_000, async () => {
      const c = await storedCounts(acknowledged);
      return c.size === acknowledged.length ? c : undefined;
    });
    expect([...counts.values()].every((n) => n === 1)).toBe(true);
  }, 420_000);

  it('helm uninstall leaves nothing of the release; the topics and the data stay (deletion policy Retain); a Delete Pipeline goes first, with its topic', async () => {
    const stored = Number((await db.query('SELECT count(*) AS n FROM events.cloud_event')).rows[0].n);
    // A Delete Pipeline holds a finalizer: the pre-delete hook deletes it (the controller stamped
    // it as the release's) while the controller still runs, which deletes its topic
    // (controller.deleteTopicsOnUninstall) and lets it go (else it would stay, stuck, in leftovers).
    const doomed = `chart-e2e-doomed.${suffix}`;
    await ns.apply({
      apiVersion: 'observatory.dev/v1alpha1',
      kind: 'Pipeline',
      metadata: { name: 'doomed' },
      spec: { deletionPolicy: 'Delete', topics: [{ name: doomed, partitions: 1, replicationFactor: 1 }] },
    });
    await pipelineReady('doomed');
    expect(await withKafkaAdmin(podStack.bootstrapServers, (admin) => admin.listTopics())).toContain(doomed);
    // The chart's own Pipeline is Retain: no finalizer, so Helm deleting it together with the
    // controller leaves nothing stuck (the leftovers include pipelines).
    await helm.run(['uninstall', RELEASE, '--namespace', ns.name, '--wait']);
    const left = await eventually('the release objects to go', 120_000, async () => {
      const l = await leftovers();
      return l.length === 0 ? l : undefined;
    });
    expect(left).toEqual([]);
    const topics = await withKafkaAdmin(podStack.bootstrapServers, (admin) => admin.listTopics());
    expect(topics).toContain(topic);
    expect(topics).not.toContain(doomed);
    expect(Number((await db.query('SELECT count(*) AS n FROM events.cloud_event')).rows[0].n)).toBe(stored);
    const reasons = await kube.getJson<{ items: { reason: string }[] }>([
      'events',
      '--namespace',
      ns.name,
      '--field-selector',
      'involvedObject.name=doomed',
    ]);
    expect(reasons.items.map((e) => e.reason)).not.toContain('TopicsLeftBehind');
  }, 420_000);
});
