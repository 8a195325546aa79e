/**
 * Kubernetes service-account tokens as producer credentials: the ingest image verifies
 * a pod's projected token (audience `observatory-ingest`) against the cluster's own issuer (the
 * API server's discovery document and `/openid/v1/jwks`, fetched with ingest's own token and the
 * cluster CA), and grants `events:write` by subject to one namespace's service accounts only.
 */
import { randomUUID } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { envList, serviceDeployment } from './lib/deployment.js';
import { createEventTopic } from './lib/kafka.js';
import type { TestNamespace } from './lib/kube.js';
import { ClusterSuite } from './lib/suite.js';

const suite = new ClusterSuite('cluster-sa');
const { cluster, podStack, kube, topic } = suite;
const SA_DIR = '/var/run/secrets/kubernetes.io/serviceaccount';
let ingestNs: TestNamespace;
let permitted: TestNamespace;
let other: TestNamespace;

beforeAll(async () => {
  await createEventTopic(podStack.bootstrapServers, topic, 3);
  [ingestNs, permitted, other] = await suite.namespaces(
    'cluster-sa-ingest',
    'cluster-sa-payments',
    'cluster-sa-other',
  );
  await ingestNs.apply(
    serviceDeployment({
      name: 'ingest',
      image: cluster.images.ingest,
      replicas: 1,
      env: envList({
        BROKER_BOOTSTRAP_SERVERS: podStack.bootstrapServers,
        BROKER_TOPIC: topic,
        AUTH_OIDC_ISSUER: 'https://kubernetes.default.svc.cluster.local',
        AUTH_AUDIENCE: 'observatory-ingest',
        AUTH_JWKS_CA_FILE: `${SA_DIR}/ca.crt`,
        AUTH_JWKS_TOKEN_FILE: `${SA_DIR}/token`,
        AUTH_SUBJECT_SCOPES: `system:serviceaccount:${permitted.name}:*=events:write`,
        LOG_LEVEL: 'INFO',
      }),
      readiness: { periodSeconds: 1, failureThreshold: 2 },
    }),
    {
      apiVersion: 'v1',
      kind: 'Service',
      metadata: { name: 'ingest' },
      spec: { selector: { app: 'ingest' }, ports: [{ name: 'http', port: 8080, targetPort: 'http' }] },
    },
  );
});

/**
 * A producer pod in `ns` under the service account `producer`: posts one event with its projected
 * token (audience `observatory-ingest`) and one with its automounted API-server token; prints the
 * two statuses.
 */
async function producerStatuses(ns: TestNamespace): Promise<string> {
  const name = `producer-${randomUUID().slice(0, 6)}`;
  await ns.apply(
    { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'producer' } },
    {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name },
      spec: {
        restartPolicy: 'Never',
        serviceAccountName: 'producer',
        securityContext: { runAsNonRoot: true, runAsUser: 1000, fsGroup: 1000 },
        volumes: [
          {
            name: 'observatory-token',
            projected: {
              sources: [
                {
                  serviceAccountToken: {
                    audience: 'observatory-ingest',
                    path: 'token',
                    expirationSeconds: 3600,
                  },
                },
              ],
            },
          },
        ],
        containers: [
          {
            name: 'main',
            image: cluster.images.ingest,
            imagePullPolicy: 'IfNotPresent',
            volumeMounts: [{ name: 'observatory-token', mountPath: '/var/run/secrets/observatory' }],
            env: [
              { name: 'INGEST', value: `http://ingest.${ingestNs.name}.svc.cluster.local:8080/v1/events` },
            ],
            command: [
              'node',
              '--input-type=module',
              '-e',
              `import { readFileSync } from 'node:fs';
               const post = async (file) => {
                 const token = readFileSync(file, 'utf8').trim();
                 for (let attempt = 1; ; attempt++) {
                   try {
                     const res = await fetch(process.env.INGEST, { method: 'POST', body: '{}', headers: {
                       authorization: 'Bearer ' + token, 'content-type': 'application/json',
                       'ce-specversion': '1.0', 'ce-id': crypto.randomUUID(), 'ce-source': '/cluster-sa',
                       'ce-type': 'com.example.sa', 'ce-time': new Date().toISOString() } });
                     await res.text();
                     return res.status;
                   } catch (err) {
                     if (attempt >= 40) throw err;
                     await new Promise((r) => setTimeout(r, 500));
                   }
                 }
               };
               console.log(await post('/var/run/secrets/observatory/token'), await post('${SA_DIR}/token'));`,
            ],
          },
        ],
      },
    },
  );
  try {
    const deadline = Date.now() + 120_000;
    let phase = 'Pending';
    while (phase !== 'Succeeded' && phase !== 'Failed' && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 1000));
      phase = (await kube.getJson<{ status: { phase: string } }>(['pod', name, '--namespace', ns.name]))
        .status.phase;
    }
    return (await ns.logs(name)).trim();
  } finally {
    await ns.kubectl(['delete', 'pod', name, '--wait=false']).catch(() => {});
  }
}

describe("producers authenticated by this cluster's service-account tokens", () => {
  it("rolls out: ingest fetched the API server's key set by discovery with its own token", async () => {
    await ingestNs.rolloutStatus('ingest', 150_000);
    const [pod] = await ingestNs.readyPods('app=ingest');
    const ready = await ingestNs.kubectl([
      'exec',
      pod as string,
      '--',
      'node',
      '-e',
      "fetch('http://127.0.0.1:8080/health/ready').then(r => r.text()).then(console.log)",
    ]);
    expect(JSON.parse(ready)).toMatchObject({ status: 'UP', keySet: 'fresh' });
  });

  it('accepts the projected token of a permitted namespace (200), and refuses its API-server token (401: another audience)', async () => {
    expect(await producerStatuses(permitted)).toBe('200 401');
  });

  it('answers 403 to the projected token of another namespace: verified, but granted no scope', async () => {
    expect(await producerStatuses(other)).toBe('403 401');
  });
});
