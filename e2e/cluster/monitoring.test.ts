/**
 * The chart's monitoring in a real Prometheus Operator stack: the operator and a
 * Prometheus it manages (scripts/cluster/prometheus-operator.sh, selecting `release:
 * observatory-monitor` as kube-prometheus-stack selects its release), the chart installed with
 * its ServiceMonitors, PrometheusRule and postgres_exporter on and its NetworkPolicies on. From
 * Prometheus' own API: every component's target is up, the 14 rules are loaded in their 4 groups,
 * IngestProduceFailing fires while the broker is stopped under load and DefaultPartitionNotEmpty
 * while a row sits in the default partition, and both resolve once the fault is gone (their
 * `for:` shortened through `monitoring.prometheusRule.for`).
 *
 * The broker is the suite's own (devstack's Kafka on this machine's address): stopping podStack's
 * would leave the suites after this one without a broker.
 */
import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { type KafkaHandle, startKafka, tempDataDir } from '@event-observatory/devstack';
import { randomDevSecret } from '@event-observatory/service-kit';
import type pg from 'pg';
import { beforeAll, describe, expect, it } from 'vitest';
import { binaryHeaders, ingestToken } from './lib/cloudevents.js';
import {
  ADDON_DEPLOY_TIMEOUT_MS,
  ADDON_SUITE_SETUP_MS,
  cacheDir,
  clusterSetting,
  REPO_ROOT,
} from './lib/cluster.js';
import { baseInstall, setArgs } from './lib/helm.js';
import type { TestNamespace } from './lib/kube.js';
import { ClusterSuite } from './lib/suite.js';

const run = promisify(execFile);
const suite = new ClusterSuite('monitoring');
const { cluster, podStack, kube, run: suffix, topic } = suite;
const RELEASE = 'mon';
/** The label the test Prometheus selects (manifests/prometheus-operator.yaml). */
const PROMETHEUS_RELEASE = 'observatory-monitor';
const PROMETHEUS_NAMESPACE = 'observatory-monitoring';
const COMPONENTS = ['ingest', 'consumer', 'search', 'controller', 'postgres-exporter'];
const monitorRole = `observatory_monitor_${suffix}`;
const authSecret = randomDevSecret();

let dataDir: string;
let kafka: KafkaHandle;
let ns: TestNamespace;
let db: pg.Pool;
let superuser: pg.Pool;
let prometheusUrl: string;

interface Row {
  metric: Record<string, string>;
  value: [number, string];
}

async function api<T>(path: string): Promise<T> {
  const res = await fetch(`${prometheusUrl}/api/v1/${path}`, { signal: AbortSignal.timeout(10_000) });
  const body = (await res.json()) as { status: string; data: T; error?: string };
  if (body.status !== 'success') throw new Error(`Prometheus ${path}: ${body.error}`);
  return body.data;
}

const query = async (expr: string) =>
  (await api<{ result: Row[] }>(`query?query=${encodeURIComponent(expr)}`)).result;

async function until(what: string, check: () => Promise<boolean>, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check().catch(() => false))) {
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs / 1000} s waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 2_000));
  }
}

/** The state of an alert of this release: `firing`, `pending` or undefined (inactive). */
async function alertState(name: string): Promise<string | undefined> {
  const rows = await query(`ALERTS{alertname="${name}", namespace="${ns.name}"}`);
  return rows.find((r) => r.metric.alertstate === 'firing')?.metric.alertstate ?? rows[0]?.metric.alertstate;
}

/** Posts events to the ingest pod directly (a pod without its broker leaves the Service, but is still scraped). */
function load(ingestUrl: string, token: string, maxMs: number): { stop(): Promise<void> } {
  let stopped = false;
  const end = Date.now() + maxMs;
  const worker = async () => {
    while (!stopped && Date.now() < end) {
      await fetch(`${ingestUrl}/v1/events`, {
        method: 'POST',
        headers: binaryHeaders(token, {
          id: randomUUID(),
          source: 'urn:e2e:monitoring',
          type: 'com.example.monitoring.reading',
        }),
        body: '{"load":true}',
        signal: AbortSignal.timeout(20_000),
      }).catch(() => undefined);
      await new Promise((r) => setTimeout(r, 200));
    }
  };
  const workers = [worker(), worker()];
  return {
    async stop() {
      stopped = true;
      await Promise.all(workers);
    },
  };
}

/** The cluster of scripts/cluster runs a NetworkPolicy enforcer when its config names one. */
function enforcesNetworkPolicies(): boolean {
  try {
    return cluster.local && clusterSetting('KUBE_ROUTER_VERSION') !== '';
  } catch {
    return false;
  }
}

async function podIp(namespace: string, selector: string): Promise<string> {
  const pods = await kube.getJson<{ items: { status: { podIP?: string } }[] }>([
    'pods',
    '--namespace',
    namespace,
    '-l',
    selector,
  ]);
  const ip = pods.items[0]?.status.podIP;
  if (!ip) throw new Error(`no pod ${selector} in ${namespace}`);
  return ip;
}

beforeAll(async () => {
  const t0 = Date.now();
  const env = {
    ...process.env,
    OBSERVATORY_CACHE: cacheDir(),
    KUBECONFIG: cluster.kubeconfig,
    PROM_NAMESPACE: PROMETHEUS_NAMESPACE,
    PROM_RELEASE_LABEL: PROMETHEUS_RELEASE,
  };
  // At once: the operator, its CRDs and Prometheus (built once, cached), the exporter's image (a
  // stand-in under the chart's default name, scripts/images), the suite's Kafka and namespace.
  dataDir = tempDataDir('cluster-monitoring');
  suite.onCleanup(() => rmSync(dataDir, { recursive: true, force: true }));
  suite.onCleanup(() => kafka?.stop());
  await Promise.all([
    run(join(REPO_ROOT, 'scripts/cluster/prometheus-operator.sh'), ['deploy'], {
      env,
      timeout: ADDON_DEPLOY_TIMEOUT_MS,
    }),
    run(join(REPO_ROOT, 'scripts/images/postgres-exporter.sh'), [], { env }),
    startKafka({ dataDir: join(dataDir, 'kafka'), host: podStack.host }).then((k) => {
      kafka = k;
    }),
    suite.namespace().then((n) => {
      ns = n;
    }),
  ]);
  await suite.pipelineCrd();

  // The exporter's role, as monitoring/README.md asks an operator to make it: pg_monitor only.
  superuser = suite.pool(podStack.databaseUrl, 1);
  const monitorPassword = randomUUID();
  // sql-witness: creates the exporter's role and plants a default-partition row to fire the alert.
  await superuser.query(`CREATE ROLE ${monitorRole} LOGIN PASSWORD '${monitorPassword}' IN ROLE pg_monitor`);
  suite.onCleanup(() => superuser.query(`DROP ROLE IF EXISTS ${monitorRole}`).catch(() => {}));
  const databaseUrl = await suite.database();
  db = suite.pool(databaseUrl);
  const base = await baseInstall(cluster.images, {
    ns,
    name: 'monitoring-secrets',
    databaseUrl,
    authSecret,
    extra: { MONITOR_PASSWORD: monitorPassword },
  });
  const values: Record<string, string | number | boolean> = {
    ...base.values,
    'kafka.bootstrapServers': kafka.bootstrapServers,
    'kafka.groupId': suite.groupId,
    // The exporter's lib/pq would otherwise insist on TLS, which devstack's PostgreSQL does not offer.
    'database.tls.mode': 'disable',
    'pipeline.topic': topic,
    'ingest.replicas': 1,
    'consumer.replicas': 1,
    'search.replicas': 1,
    'controller.replicas': 1,
    'ingest.extraEnv.BROKER_PROBE_INTERVAL': '1s',
    'consumer.extraEnv.LAG_REFRESH_INTERVAL': '2s',
    'networkPolicies.enabled': true,
    'monitoring.serviceMonitor.enabled': true,
    // The only namespace admitted to the metrics ports (required with the NetworkPolicies on).
    'monitoring.scrapeFrom.namespace': PROMETHEUS_NAMESPACE,
    'monitoring.serviceMonitor.labels.release': PROMETHEUS_RELEASE,
    'monitoring.serviceMonitor.interval': '5s',
    'monitoring.serviceMonitor.scrapeTimeout': '4s',
    'monitoring.prometheusRule.enabled': true,
    'monitoring.prometheusRule.labels.release': PROMETHEUS_RELEASE,
    'monitoring.prometheusRule.for.IngestProduceFailing': '10s',
    'monitoring.prometheusRule.for.DefaultPartitionNotEmpty': '10s',
    'monitoring.postgresExporter.enabled': true,
    'monitoring.postgresExporter.image.pullPolicy': 'Never',
    'monitoring.postgresExporter.user': monitorRole,
    'monitoring.postgresExporter.passwordSecret.name': 'monitoring-secrets',
  };
  await suite.helmInstall(RELEASE, ns, [...setArgs(values), ...base.resourceArgs]);
  // The operator writes the new scrape jobs and rules into a Secret and a ConfigMap at once, but
  // kubelet refreshes mounted ones only about every minute: a restarted Prometheus mounts them now.
  // (A short grace period: its default of 600 s only delays the test.)
  await kube.kubectl([
    'delete',
    'pod',
    '--namespace',
    PROMETHEUS_NAMESPACE,
    'prometheus-observatory-0',
    '--grace-period=1',
  ]);
  await until(
    'Prometheus back and ready',
    async () => {
      prometheusUrl = `http://${await podIp(PROMETHEUS_NAMESPACE, 'app.kubernetes.io/name=prometheus')}:9090`;
      return (await fetch(`${prometheusUrl}/-/ready`, { signal: AbortSignal.timeout(2_000) })).ok;
    },
    120_000,
  );
  suite.log(`stack and chart ready in ${Math.round((Date.now() - t0) / 1000)} s`);
}, ADDON_SUITE_SETUP_MS);

describe('the chart in a Prometheus Operator stack', () => {
  it("has every component's ServiceMonitor selected and its target up, through the NetworkPolicies", async () => {
    const up = `up{namespace="${ns.name}"}`;
    await until(
      `${COMPONENTS.length} targets up`,
      async () => (await query(`${up} == 1`)).length === COMPONENTS.length,
      120_000,
    );
    const targets = await query(up);
    expect(targets.map((t) => t.metric.service).sort()).toEqual(
      COMPONENTS.map((c) => `${RELEASE}-${c}`).sort(),
    );
    for (const t of targets)
      expect(t.metric, t.metric.service).toMatchObject({ endpoint: 'metrics', job: t.metric.service });
    // The exporter logs in with its pg_monitor role and reaches the database.
    expect((await query(`pg_up{namespace="${ns.name}"}`))[0]?.value[1]).toBe('1');
  });

  // Only where the cluster enforces NetworkPolicies (scripts/cluster names its enforcer): there the
  // targets above are up through `<release>-prometheus-scrape`, and this shows it admits no one else.
  it.runIf(enforcesNetworkPolicies())(
    'refuses the metrics ports to a pod that is not Prometheus',
    async () => {
      const targets = await Promise.all(
        ['consumer', 'postgres-exporter'].map(async (c) => {
          const ip = await podIp(
            ns.name,
            `app.kubernetes.io/instance=${RELEASE},app.kubernetes.io/name=${c}`,
          );
          return `${ip}:${c === 'consumer' ? 9464 : 9187}`;
        }),
      );
      const script = `
      const net = require('node:net');
      const once = (address) => new Promise((done) => {
        const [host, port] = address.split(':');
        const s = net.connect({ host, port: Number(port), timeout: 2000 });
        s.on('connect', () => { s.destroy(); done('open'); });
        s.on('timeout', () => { s.destroy(); done('blocked'); });
        s.on('error', () => done('blocked'));
      });
      Promise.all(JSON.parse(process.env.TARGETS).map(once)).then((r) => console.log(JSON.stringify(r)));`;
      const stranger = await kube.createNamespace('monitoring-stranger');
      try {
        const { phase, logs } = await stranger.runPod('probe', {
          image: cluster.images.ingest,
          command: ['node', '-e', script],
          env: { TARGETS: JSON.stringify(targets) },
        });
        expect(phase, logs).toBe('Succeeded');
        expect(JSON.parse(logs.trim().split('\n').at(-1) ?? '[]')).toEqual(['blocked', 'blocked']);
      } finally {
        await stranger.delete();
      }
    },
  );

  it('has the 14 rules loaded in their 4 groups, scoped to the release', async () => {
    await until(
      'the PrometheusRule loaded',
      async () =>
        (await api<{ groups: { file: string }[] }>('rules')).groups.some((g) => g.file.includes(ns.name)),
      60_000,
    );
    const { groups } = await api<{
      groups: { name: string; file: string; rules: { name: string; query: string; health: string }[] }[];
    }>('rules');
    const ours = groups.filter((g) => g.file.includes(`${ns.name}-${RELEASE}-alerts`));
    expect(ours.map((g) => g.name).sort()).toEqual(['availability', 'maintenance', 'pipeline', 'storage']);
    const rules = ours.flatMap((g) => g.rules);
    expect(rules).toHaveLength(14);
    for (const r of rules) {
      expect(r.query, r.name).toContain(`namespace="${ns.name}"`);
      expect(r.health, r.name).toBe('ok');
    }
  });

  it('fires IngestProduceFailing and DefaultPartitionNotEmpty under their faults, and resolves both after', async () => {
    const token = await ingestToken(authSecret);
    const ingestUrl = `http://${await podIp(ns.name, `app.kubernetes.io/instance=${RELEASE},app.kubernetes.io/name=ingest`)}:8080`;
    const traffic = load(ingestUrl, token, 300_000);
    try {
      await until(
        'successful sends scraped',
        async () =>
          (
            await query(
              `sum(broker_produce_latency_seconds_count{namespace="${ns.name}", outcome="success"}) > 5`,
            )
          ).length > 0,
        90_000,
      );
      expect(await alertState('IngestProduceFailing')).toBeUndefined();
      expect(await alertState('DefaultPartitionNotEmpty')).toBeUndefined();

      // The faults: the broker crashes; an event of a month without a partition (stored in the default one).
      await kafka.kill();
      await db.query(
        `INSERT INTO events.cloud_event (occurred_at, ce_source, ce_id, ce_type, raw)
         VALUES ('2099-01-01T00:00:00Z', 'urn:e2e:monitoring', $1, 'com.example.monitoring.stray', '{}')`,
        [suffix],
      );
      await until(
        'both alerts firing',
        async () =>
          (await alertState('IngestProduceFailing')) === 'firing' &&
          (await alertState('DefaultPartitionNotEmpty')) === 'firing',
        150_000,
      );
      const [firing] = await query(
        `ALERTS{alertname="IngestProduceFailing", namespace="${ns.name}", alertstate="firing"}`,
      );
      expect(firing?.metric).toMatchObject({ severity: 'critical', topic });

      // The faults gone: the broker back, the stray row moved out (here: deleted).
      await kafka.start();
      await db.query(`DELETE FROM events.cloud_event_default WHERE ce_id = $1`, [suffix]);
      await until(
        'both alerts resolved',
        async () =>
          (await alertState('IngestProduceFailing')) === undefined &&
          (await alertState('DefaultPartitionNotEmpty')) === undefined,
        150_000,
      );
    } finally {
      await traffic.stop();
    }
  });
});
