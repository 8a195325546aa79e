/**
 * Kubernetes service-account tokens as producer credentials: the ingest image verifies
 * a pod's projected token (audience `observatory-ingest`) against the cluster's own issuer (the
 * API server's discovery document and `/openid/v1/jwks`, fetched with ingest's own token and the
 * cluster CA), and grants `events:write` by subject to one namespace's service accounts only.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { createEventTopic } from './lib/kafka.js';
import type { TestNamespace } from './lib/kube.js';
import { ingestUrl, producerStatuses, serviceAccountIngest } from './lib/service-accounts.js';
import { ClusterSuite } from './lib/suite.js';

const suite = new ClusterSuite('cluster-sa');
const { cluster, podStack, topic } = suite;
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
    ...serviceAccountIngest({
      image: cluster.images.ingest,
      bootstrapServers: podStack.bootstrapServers,
      topic,
      subjectScopes: `system:serviceaccount:${permitted.name}:*=events:write`,
    }),
  );
});

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
    expect(await producerStatuses(permitted, cluster.images.ingest, ingestUrl(ingestNs))).toBe('200 401');
  });

  it('answers 403 to the projected token of another namespace: verified, but granted no scope', async () => {
    expect(await producerStatuses(other, cluster.images.ingest, ingestUrl(ingestNs))).toBe('403 401');
  });
});
