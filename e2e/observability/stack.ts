/**
 * The observed stack: ingest, consumer and search built by their public factories and served on
 * ephemeral ports, postgres_exporter, the two jobs, and a real Prometheus scraping all three every
 * second with the alert rules of monitoring/alerts loaded; then a little traffic that touches every
 * meter an operator watches.
 */
import { randomUUID } from 'node:crypto';
import { readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import {
  type PrometheusHandle,
  repoRoot,
  startPostgresExporter,
  startPrometheus,
  tempDataDir,
} from '@event-observatory/devstack';
import { createJobsService, readJobsConfig } from '@event-observatory/jobs';
import { createSearchService, DEFAULT_ALLOWED_HOSTS } from '@event-observatory/search';
import { createLogger, createMetrics, serveApp, serveMetrics } from '@event-observatory/service-kit';
import type { Kafka } from 'kafkajs';
import pg from 'pg';
import {
  createPipelineTopics,
  createSuiteDatabase,
  startConsumer,
  startIngest,
  testKafka,
} from '../support/services.js';

const SECRET = 'e2e-observability-secret-0123456789abcdef';
/** More distinct types than the 50 a `type` tag keeps, so the cap shows. */
export const DISTINCT_TYPES = 56;
/** Events the traffic gets accepted: 20 single ones, a batch of one per type, one of a foreign type. */
const ACCEPTED = 20 + DISTINCT_TYPES + 1;

export interface ObservedStack {
  prometheus: PrometheusHandle;
  /** Base URL of each service's metrics listener, by the `service` tag it reports. */
  metricsUrls: Record<'ingest' | 'consumer' | 'search', string>;
  topic: string;
  close(): Promise<void>;
}

export async function startObservedStack(): Promise<ObservedStack> {
  const closers: (() => Promise<unknown>)[] = [];
  const close = async () => {
    for (const c of closers) await c().catch(() => {});
  };
  try {
    const id = randomUUID().slice(0, 8);
    const topic = `e2e.observability.${id}`;
    const kafka = testKafka();
    await createPipelineTopics(topic);
    const databaseUrl = await createSuiteDatabase(`e2e_observability_${id}`);
    const consumer = await startConsumer({ topic, databaseUrl, group: `e2e-${id}` });
    closers.push(() => consumer.close());
    const ingest = await startIngest({ topic, secret: SECRET, knownTypes: ['com.example.*'] });
    closers.unshift(() => ingest.close());

    const { registry: searchRegistry } = createMetrics({ service: 'search', version: 'e2e' });
    const search = createSearchService({
      config: {
        allowedHosts: DEFAULT_ALLOWED_HOSTS.split(','),
        secret: `e2e-observability-cursor-${id}-0123456789`,
      },
      databaseUrl,
      registry: searchRegistry,
      tailPollMs: 250,
    });
    const searchServer = await serveApp(search.app, { host: '127.0.0.1', port: 0, drainMs: 1000 });
    const searchMetrics = await serveMetrics(searchRegistry, { host: '127.0.0.1', port: 0 });
    closers.unshift(async () => {
      search.endTails();
      await searchServer.close();
      await search.close();
      await searchMetrics.close();
    });

    const dataDir = tempDataDir('observability');
    closers.push(async () => rmSync(dataDir, { recursive: true, force: true }));
    const exporter = await startPostgresExporter({ dataDir, databaseUrl });
    closers.unshift(() => exporter.stop());
    const alerts = join(repoRoot(), 'monitoring', 'alerts');
    const prometheus = await startPrometheus({
      dataDir,
      ruleFiles: readdirSync(alerts).map((f) => join(alerts, f)),
      targets: [
        { job: 'ingest', address: new URL(ingest.metricsUrl).host, service: 'ingest' },
        { job: 'consumer', address: new URL(consumer.metricsUrl).host, service: 'consumer' },
        { job: 'search', address: new URL(searchMetrics.url).host, service: 'search' },
        { job: 'postgres-exporter', address: exporter.address, service: 'postgres-exporter' },
      ],
    });
    closers.unshift(() => prometheus.stop());

    const jobs = createJobsService({
      config: readJobsConfig({}),
      databaseUrl,
      logger: createLogger({ service: 'jobs', level: 'error' }),
    });
    closers.unshift(() => jobs.close());

    // Counters must be scraped before they move, or rate() and increase() see no change.
    await until('a first scrape of every target', async () => {
      const { body } = await prometheus.query('count(up == 1) == 4');
      return (body.data?.result.length ?? 0) > 0;
    });
    await sendTraffic(ingest.url, consumer.adminUrl, ingest.token, kafka, topic, id);
    await jobs.run('partition-maintenance');
    await jobs.run('rollup-refresh');
    const db = new pg.Pool({ connectionString: databaseUrl, max: 1 });
    closers.push(() => db.end());
    await until('every accepted event stored', async () => {
      // sql-witness: counts what the pipeline stored, in its own SQL.
      const { rows } = await db.query('SELECT count(*)::int AS n FROM events.cloud_event');
      return rows[0].n >= ACCEPTED;
    });
    await until('the poison record dead-lettered and scraped', async () => {
      const { body } = await prometheus.query('sum(consume_records_poison_total{reason="malformed"}) >= 1');
      return (body.data?.result.length ?? 0) > 0;
    });
    // A replay plan (dry run) of the dead letter: counted as skipped.
    await until('a replay planned and scraped', async () => {
      await fetch(`${consumer.adminUrl}/admin/dlq:replay`, { method: 'POST' });
      const { body } = await prometheus.query('sum(dlq_replay_records_total{outcome="skipped"}) >= 1');
      return (body.data?.result.length ?? 0) > 0;
    });
    await browseSearch(searchServer.url);
    await new Promise((r) => setTimeout(r, 3_000)); // a few more scrapes after the last change
    return {
      prometheus,
      metricsUrls: { ingest: ingest.metricsUrl, consumer: consumer.metricsUrl, search: searchMetrics.url },
      topic,
      close,
    };
  } catch (err) {
    await close();
    throw err;
  }
}

async function sendTraffic(
  ingestUrl: string,
  consumerAdminUrl: string,
  token: string,
  kafka: Kafka,
  topic: string,
  id: string,
): Promise<void> {
  const post = (path: string, contentType: string, body: string, headers: Record<string, string> = {}) =>
    fetch(`${ingestUrl}${path}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': contentType, ...headers },
      body,
    });
  const time = () => new Date(Date.now() - 5_000).toISOString();
  for (let i = 0; i < 20; i++) {
    const res = await post(
      '/v1/events',
      'application/json',
      JSON.stringify({ i, deviceId: `dev-${i % 4}` }),
      {
        'ce-specversion': '1.0',
        'ce-id': `bin-${i}`,
        'ce-source': `urn:e2e:${id}`,
        'ce-type': 'com.example.obs.reading',
        'ce-time': time(),
      },
    );
    if (res.status !== 200) throw new Error(`binary event refused: ${res.status} ${await res.text()}`);
  }
  const batch = Array.from({ length: DISTINCT_TYPES }, (_, i) => ({
    specversion: '1.0',
    id: `batch-${i}`,
    source: `urn:e2e:${id}`,
    type: `com.example.obs.kind${i}`,
    time: time(),
    datacontenttype: 'application/json',
    data: { i },
  }));
  const res = await post(
    '/v1/events:batchCreate',
    'application/cloudevents-batch+json',
    JSON.stringify(batch),
  );
  if (res.status !== 200) throw new Error(`batch refused: ${res.status} ${await res.text()}`);
  // One unrecognised type, one malformed request, one unauthenticated request.
  await post(
    '/v1/events',
    'application/cloudevents+json',
    JSON.stringify({ ...batch[0], id: 'other', type: 'org.elsewhere.thing' }),
  );
  await post('/v1/events', 'application/cloudevents+json', '{ not json');
  await fetch(`${ingestUrl}/v1/events`, { method: 'POST' });
  // A record no consumer can decode: dead-lettered as malformed.
  const producer = kafka.producer({ allowAutoTopicCreation: false });
  await producer.connect();
  await producer.send({ topic, messages: [{ key: 'poison', value: 'not a cloudevent' }] });
  await producer.disconnect();
  // Lifecycle commands on the consumer's admin listener.
  for (const path of ['/admin/consumer:pause', '/admin/consumer:resume'])
    await fetch(`${consumerAdminUrl}${path}`, { method: 'POST' });
}

/** The overview, a search with text, its next page, and a live tail held open for a moment. */
async function browseSearch(searchUrl: string): Promise<void> {
  for (const path of ['/', '/events?q=reading', '/events?t=1h']) {
    const res = await fetch(`${searchUrl}${path}`);
    if (res.status !== 200) throw new Error(`search ${path}: ${res.status}`);
  }
  const tail = new AbortController();
  const res = await fetch(`${searchUrl}/events/tail`, { signal: tail.signal });
  await new Promise((r) => setTimeout(r, 1_500)); // scraped while open
  tail.abort();
  await res.body?.cancel().catch(() => {});
}

export async function until(what: string, check: () => Promise<boolean>, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check().catch(() => false))) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 250));
  }
}
