/**
 * The chart's Ingress and Gateway API HTTPRoute of the ingestion API, through a real controller:
 * Traefik v3 (scripts/cluster/traefik.sh builds and installs it). The two objects are rendered
 * from charts/observatory and applied beside the ingest image (a Deployment and the Service name
 * the chart gives it) publishing into the suite's Kafka. Through the Ingress (TLS with the Secret
 * of `ingest.ingress.tlsSecret`) and through the HTTPRoute (a Gateway's HTTP and HTTPS listeners):
 * `/openapi.json` and `/docs` answer, an unrouted path does not, and a batch of nearly 8 MiB is
 * accepted whole. Our own cluster only (Traefik's image is imported into its containerd).
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { request } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { randomDevSecret, signDevToken } from '@event-observatory/service-kit';
import { beforeAll, describe, expect, it } from 'vitest';
import { ADDON_DEPLOY_TIMEOUT_MS, ADDON_SUITE_SETUP_MS, REPO_ROOT } from './lib/cluster.js';
import { ingestManifests } from './lib/deployment.js';
import { CHART, setArgs } from './lib/helm.js';
import { createEventTopic } from './lib/kafka.js';
import type { TestNamespace } from './lib/kube.js';
import { ClusterSuite } from './lib/suite.js';

const run = promisify(execFile);
const suite = new ClusterSuite('ingress');
const { cluster, podStack, kube, topic } = suite;
const RELEASE = 'ing';
const HOST = 'events.observatory.test';
const GATEWAY_HOST = 'gateway.observatory.test';
const secret = randomDevSecret();
const certDir = mkdtempSync(join(tmpdir(), 'ingress-e2e-'));
suite.onCleanup(() => rmSync(certDir, { recursive: true, force: true }));

let ns: TestNamespace;
let token: string;
let traefik: string; // the ClusterIP of Traefik's Service (this machine reaches it through kube-proxy)
let ca: string;

interface Reply {
  status: number;
  body: string;
}

/** One request to Traefik for `host` (HTTP on 80, or HTTPS on 443 verified against our CA, SNI = host). */
function call(tls: boolean, host: string, path: string, opts: { method?: string; body?: string } = {}) {
  const headers: Record<string, string | number> = { host };
  if (opts.body !== undefined) {
    headers.authorization = `Bearer ${token}`;
    headers['content-type'] = 'application/cloudevents-batch+json';
    headers['content-length'] = Buffer.byteLength(opts.body);
  }
  const options = { host: traefik, path, method: opts.method ?? 'GET', headers, timeout: 30_000 };
  return new Promise<Reply>((done, fail) => {
    const onResponse = (res: import('node:http').IncomingMessage) => {
      let body = '';
      res.on('data', (c: Buffer) => {
        body += c.toString();
      });
      res.on('end', () => done({ status: res.statusCode ?? 0, body }));
    };
    const req = tls
      ? request({ ...options, port: 443, servername: host, ca }, onResponse)
      : httpRequest({ ...options, port: 80 }, onResponse);
    req.on('timeout', () => req.destroy(new Error('timed out')));
    req.on('error', fail);
    req.end(opts.body);
  });
}

/** Traefik applies new routes within a few seconds: retry until `path` answers 200. */
async function routed(tls: boolean, host: string, path: string): Promise<Reply> {
  const deadline = Date.now() + 60_000;
  for (;;) {
    const reply = await call(tls, host, path).catch((e: Error) => ({ status: 0, body: e.message }));
    if (reply.status === 200 || Date.now() > deadline) return reply;
    await new Promise((r) => setTimeout(r, 1000));
  }
}

/** A batch of 8 events of about 1 MiB each: just under INGEST_MAX_BATCH_BYTES (8 MiB). */
function bigBatch(): string {
  const data = 'x'.repeat(1_040_000);
  const events = Array.from({ length: 8 }, (_, i) => ({
    specversion: '1.0',
    id: `${topic}-${i}`,
    source: '/ingress-e2e',
    type: 'com.example.ingress.test',
    time: new Date().toISOString(),
    datacontenttype: 'application/json',
    data: { i, data },
  }));
  return JSON.stringify(events);
}

/** The whole batch reached ingest and every event was accepted (an entry's error is shown if not). */
async function expectBatchAccepted(reply: Reply): Promise<void> {
  expect(reply.status, reply.body.slice(0, 300)).toBe(200);
  const body = JSON.parse(reply.body) as { created: number; failed: number; entries: unknown[] };
  expect(body.failed, JSON.stringify(body.entries[0]).slice(0, 400)).toBe(0);
  expect(body.created).toBe(8);
}

beforeAll(async () => {
  if (!cluster.local) return;
  const env = { ...process.env, KUBECONFIG: cluster.kubeconfig };
  suite.onCleanup(() =>
    run(join(REPO_ROOT, 'scripts/cluster/traefik.sh'), ['delete'], { env }).catch(() => {}),
  );
  await run(join(REPO_ROOT, 'scripts/cluster/traefik.sh'), [], { env, timeout: ADDON_DEPLOY_TIMEOUT_MS });
  [traefik] = (await kube.serviceAddress('observatory-traefik', 'traefik', 80)).split(':') as [string];

  await createEventTopic(podStack.bootstrapServers, topic);
  token = await signDevToken({ secret, scopes: ['events:write'], ttl: '1h' });

  // One self-signed certificate naming both hosts: the Ingress's TLS Secret and the Gateway's.
  await run('openssl', [
    ...['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-days', '1'],
    ...['-subj', `/CN=${HOST}`, '-addext', `subjectAltName=DNS:${HOST},DNS:${GATEWAY_HOST}`],
    ...['-keyout', join(certDir, 'tls.key'), '-out', join(certDir, 'tls.crt')],
  ]);
  ca = readFileSync(join(certDir, 'tls.crt'), 'utf8');

  ns = await suite.namespace();
  const name = `${RELEASE}-ingest`; // the Service name the chart's Ingress and HTTPRoute point at
  await ns.apply(
    ...ingestManifests({
      name,
      image: cluster.images.ingest,
      bootstrapServers: podStack.bootstrapServers,
      topic,
      authSecret: secret,
      env: { LOG_LEVEL: 'WARN' },
      readiness: { periodSeconds: 1 },
    }),
    {
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: 'ingest-tls' },
      type: 'kubernetes.io/tls',
      stringData: { 'tls.crt': ca, 'tls.key': readFileSync(join(certDir, 'tls.key'), 'utf8') },
    },
    {
      apiVersion: 'gateway.networking.k8s.io/v1',
      kind: 'Gateway',
      metadata: { name: 'observatory' },
      spec: {
        gatewayClassName: 'observatory-traefik',
        listeners: [
          { name: 'http', protocol: 'HTTP', port: 8000, hostname: GATEWAY_HOST },
          {
            name: 'https',
            protocol: 'HTTPS',
            port: 8443,
            hostname: GATEWAY_HOST,
            tls: { mode: 'Terminate', certificateRefs: [{ name: 'ingest-tls' }] },
          },
        ],
      },
    },
  );
  const { stdout } = await run(suite.helm.bin, [
    ...['template', RELEASE, CHART, '--namespace', ns.name],
    ...['--show-only', 'templates/ingest-ingress.yaml', '--show-only', 'templates/ingest-httproute.yaml'],
    ...setArgs({
      'kafka.bootstrapServers': 'kafka:9092',
      'database.url': 'postgres://db:5432/observatory',
      'secrets.store.name': 'x',
      'secrets.auth.name': 'x',
      'secrets.admin.name': 'x',
      'secrets.application.name': 'x',
      'ingest.ingress.enabled': true,
      'ingest.ingress.className': 'observatory-traefik',
      'ingest.ingress.host': HOST,
      'ingest.ingress.tlsSecret': 'ingest-tls',
      'ingest.httpRoute.enabled': true,
    }),
    ...['--set-json', 'ingest.httpRoute.parentRefs=[{"name":"observatory"}]'],
    ...['--set-json', `ingest.httpRoute.hostnames=["${GATEWAY_HOST}"]`],
  ]);
  await ns.kubectl(['apply', '-f', '-'], { input: stdout });
  await ns.rolloutStatus(name);
}, ADDON_SUITE_SETUP_MS);

describe.skipIf(!cluster.local)('the ingestion API through Traefik', () => {
  it('Ingress over TLS: the docs and the description answer, other paths are not routed', async () => {
    const openapi = await routed(true, HOST, '/openapi.json');
    expect(openapi.status, openapi.body).toBe(200);
    expect(JSON.parse(openapi.body)).toHaveProperty('openapi');
    expect((await call(true, HOST, '/docs')).status).toBe(200);
    expect((await call(true, HOST, '/health/ready')).status).toBe(404);
  });

  it('Ingress over TLS: a batch of nearly 8 MiB passes whole', async () => {
    await expectBatchAccepted(
      await call(true, HOST, '/v1/events:batchCreate', { method: 'POST', body: bigBatch() }),
    );
  });

  it('HTTPRoute: accepted by the Gateway, routed on its HTTP and HTTPS listeners, the batch passes', async () => {
    const plain = await routed(false, GATEWAY_HOST, '/openapi.json');
    expect(plain.status, plain.body).toBe(200);
    expect((await routed(true, GATEWAY_HOST, '/docs')).status).toBe(200);
    expect((await call(false, GATEWAY_HOST, '/health/ready')).status).toBe(404);
    await expectBatchAccepted(
      await call(false, GATEWAY_HOST, '/v1/events:batchCreate', { method: 'POST', body: bigBatch() }),
    );
    const route = await kube.getJson<{
      status?: { parents?: { conditions?: { type: string; status: string }[] }[] };
    }>(['httproute', `${RELEASE}-ingest`, '-n', ns.name]);
    const accepted = route.status?.parents?.[0]?.conditions?.find((c) => c.type === 'Accepted');
    expect(accepted?.status).toBe('True');
  });
});
