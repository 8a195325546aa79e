/**
 * Prometheus on the cluster (issue 15): Debian's Prometheus runs beside the cluster and discovers
 * the ingest pods through the Kubernetes API (lib/kubernetes-sd.ts, as Prometheus' own Kubernetes
 * SD would) with the scrape job the Prometheus Operator would
 * generate from the platform's ServiceMonitor endpoint (monitoring/scrape), with the 13 rules of
 * monitoring/alerts. Under load, the broker is stopped, and IngestProduceFailing becomes pending
 * (its `for: 5m` is the promtool tests' business).
 *
 * The broker is one of this suite's own (devstack's Kafka on this machine's address, as podStack's):
 * stopping podStack's would leave the suites after this one without a broker.
 */
import { randomUUID } from 'node:crypto';
import { readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { ensureTopics, eventTopicSpec } from '@event-observatory/broker';
import {
  type KafkaHandle,
  type PrometheusHandle,
  repoRoot,
  startKafka,
  startPrometheus,
  tempDataDir,
} from '@event-observatory/devstack';
import { randomDevSecret, signDevToken } from '@event-observatory/service-kit';
import { Kafka, logLevel } from 'kafkajs';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { envList, serviceDeployment } from './lib/deployment.js';
import { Kube, type TestNamespace } from './lib/kube.js';
import { startKubernetesSd } from './lib/kubernetes-sd.js';
import { platformEndpoint, serviceMonitorScrapeConfig } from './lib/service-monitor.js';

const cluster = inject('cluster');
const podStack = inject('podStack');
const kube = new Kube(cluster.kubeconfig);
const topic = `cluster-alerts.${randomUUID().slice(0, 8)}`;
const secret = randomDevSecret();
const labels = { app: 'ingest' };
const REPLICAS = 2;

let dataDir: string;
let kafka: KafkaHandle;
let ns: TestNamespace;
let prometheus: PrometheusHandle;
let sd: Awaited<ReturnType<typeof startKubernetesSd>>;
let podUrls: string[];

/** Rows of an instant query (empty on error). */
async function rows(expr: string): Promise<{ metric: Record<string, string>; value: [number, string] }[]> {
  return (await prometheus.query(expr)).body.data?.result ?? [];
}

async function until(what: string, check: () => Promise<boolean>, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check().catch(() => false))) {
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs / 1000} s waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 1_000));
  }
}

/**
 * Posts events to every pod directly (a pod that lost its broker is taken out of the Service, but
 * it is still scraped, and its failures are what the alert is about) until `stop` or `maxMs`.
 */
function load(token: string, maxMs: number): { stop(): Promise<void>; statuses: Map<number, number> } {
  const statuses = new Map<number, number>();
  let stopped = false;
  const end = Date.now() + maxMs;
  const worker = async (url: string) => {
    while (!stopped && Date.now() < end) {
      const res = await fetch(`${url}/v1/events`, {
        method: 'POST',
        headers: {
          authorization: `Bearer ${token}`,
          'content-type': 'application/json',
          'ce-specversion': '1.0',
          'ce-id': randomUUID(),
          'ce-source': 'urn:e2e:cluster-alerts',
          'ce-type': 'com.example.alerts.reading',
          'ce-time': new Date().toISOString(),
        },
        body: '{"load":true}',
        signal: AbortSignal.timeout(20_000),
      }).catch(() => undefined);
      if (res) statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1);
      await new Promise((r) => setTimeout(r, 100));
    }
  };
  const workers = podUrls.flatMap((url) => [worker(url), worker(url)]);
  return {
    statuses,
    async stop() {
      stopped = true;
      await Promise.all(workers);
    },
  };
}

beforeAll(async () => {
  dataDir = tempDataDir('cluster-alerts');
  kafka = await startKafka({ dataDir: join(dataDir, 'kafka'), host: podStack.host });
  const admin = new Kafka({
    clientId: 'cluster-alerts',
    brokers: [kafka.bootstrapServers],
    logLevel: logLevel.NOTHING,
  }).admin();
  await admin.connect();
  await ensureTopics(admin, [{ ...eventTopicSpec(topic), partitions: 3 }]);
  await admin.disconnect();

  ns = await kube.createNamespace('observe-alerts');
  await ns.apply(
    serviceDeployment({
      name: 'ingest',
      image: cluster.images.ingest,
      replicas: REPLICAS,
      env: envList({
        BROKER_BOOTSTRAP_SERVERS: kafka.bootstrapServers,
        BROKER_TOPIC: topic,
        BROKER_PROBE_INTERVAL: '1s',
        AUTH_SECRET: secret,
        OTEL_TRACES_EXPORTER: 'none',
      }),
      readiness: { periodSeconds: 2 },
    }),
    {
      apiVersion: 'v1',
      kind: 'Service',
      metadata: { name: 'ingest', labels },
      spec: { selector: labels, ports: [{ name: 'http', port: 8080, targetPort: 'http' }] },
    },
  );
  await ns.rolloutStatus('ingest', 180_000);
  const pods = await kube.getJson<{ items: { status: { podIP: string } }[] }>([
    'pods',
    '--namespace',
    ns.name,
    '-l',
    'app=ingest',
  ]);
  podUrls = pods.items.map((p) => `http://${p.status.podIP}:8080`);

  const alerts = join(repoRoot(), 'monitoring', 'alerts');
  sd = await startKubernetesSd(kube, ns.name);
  prometheus = await startPrometheus({
    dataDir,
    interval: '2s',
    ruleFiles: readdirSync(alerts).map((f) => join(alerts, f)),
    scrapeConfigs: [
      serviceMonitorScrapeConfig({
        name: 'ingest',
        namespace: ns.name,
        matchLabels: labels,
        endpoint: platformEndpoint(),
        sdUrl: sd.url,
        interval: '2s',
      }),
    ],
  });
}, 420_000);

afterAll(async () => {
  await prometheus?.stop();
  await sd?.close();
  await ns?.delete();
  await kafka?.stop();
  if (dataDir) rmSync(dataDir, { recursive: true, force: true });
});

describe('Prometheus beside the cluster, scraping through the ServiceMonitor relabelling', () => {
  it('discovers every ingest pod and labels its series as the Prometheus Operator would', async () => {
    await until(
      `${REPLICAS} ingest pods up`,
      async () => (await rows(`up{namespace="${ns.name}"} == 1`)).length === REPLICAS,
      90_000,
    );
    const series = await rows(`broker_produce_latency_seconds_count{namespace="${ns.name}"}`);
    expect(series.length).toBeGreaterThan(0);
    for (const { metric } of series) {
      // The service's own `service` tag collides with the target's and becomes exported_service.
      expect(metric).toMatchObject({
        exported_service: 'ingest',
        service: 'ingest',
        job: 'ingest',
        endpoint: 'http',
        namespace: ns.name,
        container: 'ingest',
      });
      expect(metric.pod).toMatch(/^ingest-/);
    }
  });

  it('sees IngestProduceFailing pending when the broker stops under load, and not before', async () => {
    const traffic = load(await signDevToken({ secret, scopes: ['events:write'], ttl: '1h' }), 240_000);
    try {
      const alert = `ALERTS{alertname="IngestProduceFailing", namespace="${ns.name}"}`;
      await until(
        'successful sends scraped',
        async () =>
          (
            await rows(
              `sum(broker_produce_latency_seconds_count{namespace="${ns.name}", outcome="success"}) > 20`,
            )
          ).length > 0,
        90_000,
      );
      expect(await rows(alert)).toEqual([]);

      await kafka.stop();
      await until(
        'IngestProduceFailing pending',
        async () => (await rows(`${alert} == 1`)).length > 0,
        150_000,
      );
      const [pending] = await rows(alert);
      expect(pending?.metric).toMatchObject({ alertstate: 'pending', severity: 'critical', topic });
      expect(traffic.statuses.get(503) ?? 0).toBeGreaterThan(0);
    } finally {
      await traffic.stop();
    }
  });
});
