/**
 * Kubernetes service-account tokens as producer credentials, as the cluster suites run them: the
 * ingest image verifying the cluster's own issuer and granting scopes by subject, and a producer
 * pod that posts with its projected token (audience `observatory-ingest`) and with its automounted
 * API-server token.
 */
import { randomUUID } from 'node:crypto';
import { envList, serviceDeployment } from './deployment.js';
import type { Manifest, TestNamespace } from './kube.js';

const SA_DIR = '/var/run/secrets/kubernetes.io/serviceaccount';
const AUDIENCE = 'observatory-ingest';

export interface ServiceAccountIngestOptions {
  image: string;
  bootstrapServers: string;
  topic: string;
  /** `AUTH_SUBJECT_SCOPES`: `<subject glob>=<scopes>`, e.g. `system:serviceaccount:payments:*=events:write`. */
  subjectScopes: string;
}

/**
 * The ingest image as Deployment and Service `ingest` (port 8080), verifying projected tokens of
 * this cluster's issuer (the API server's discovery and key set, fetched with its own token and CA).
 */
export function serviceAccountIngest(opts: ServiceAccountIngestOptions): Manifest[] {
  return [
    serviceDeployment({
      name: 'ingest',
      image: opts.image,
      replicas: 1,
      env: envList({
        BROKER_BOOTSTRAP_SERVERS: opts.bootstrapServers,
        BROKER_TOPIC: opts.topic,
        AUTH_OIDC_ISSUER: 'https://kubernetes.default.svc.cluster.local',
        AUTH_AUDIENCE: AUDIENCE,
        AUTH_JWKS_CA_FILE: `${SA_DIR}/ca.crt`,
        AUTH_JWKS_TOKEN_FILE: `${SA_DIR}/token`,
        AUTH_SUBJECT_SCOPES: opts.subjectScopes,
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
  ];
}

/** The URL of the `ingest` Service of serviceAccountIngest in `ns`, by its DNS name. */
export function ingestUrl(ns: TestNamespace): string {
  return `http://ingest.${ns.name}.svc.cluster.local:8080/v1/events`;
}

/**
 * A producer pod in `ns` under the service account `producer` (made here): posts one event to
 * `ingest` with its projected token (audience `observatory-ingest`) and one with its automounted
 * API-server token; resolves with the two statuses, e.g. `200 401`.
 */
export async function producerStatuses(ns: TestNamespace, image: string, ingest: string): Promise<string> {
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
                { serviceAccountToken: { audience: AUDIENCE, path: 'token', expirationSeconds: 3600 } },
              ],
            },
          },
        ],
        containers: [
          {
            name: 'main',
            image,
            imagePullPolicy: 'IfNotPresent',
            volumeMounts: [{ name: 'observatory-token', mountPath: '/var/run/secrets/observatory' }],
            env: [{ name: 'INGEST', value: ingest }],
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
      phase = (await ns.kube.getJson<{ status: { phase: string } }>(['pod', name, '--namespace', ns.name]))
        .status.phase;
    }
    return (await ns.logs(name)).trim();
  } finally {
    await ns.kubectl(['delete', 'pod', name, '--wait=false']).catch(() => {});
  }
}
