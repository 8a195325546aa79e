/**
 * The cluster itself: the node is Ready at the pinned version, the API server reports that
 * version, the `kubernetes` Service answers from inside a pod (through CoreDNS and kube-proxy),
 * and the local stack's PostgreSQL (on this machine's own address) is reachable from a pod.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import type { TestNamespace } from './lib/kube.js';
import { ClusterSuite } from './lib/suite.js';

const suite = new ClusterSuite('cluster-basics');
const { cluster, podStack, kube } = suite;
let ns: TestNamespace;

beforeAll(async () => {
  ns = await suite.namespace();
});

describe('the cluster', () => {
  it('has a Ready node running the pinned kubelet', async () => {
    const nodes = await kube.getJson<{
      items: {
        status: { nodeInfo: { kubeletVersion: string }; conditions: { type: string; status: string }[] };
      }[];
    }>(['nodes']);
    expect(nodes.items.length).toBeGreaterThan(0);
    for (const node of nodes.items) {
      expect(node.status.conditions.find((c) => c.type === 'Ready')?.status).toBe('True');
      if (cluster.local) expect(node.status.nodeInfo.kubeletVersion).toBe(cluster.version);
    }
    const version = JSON.parse(await kube.kubectl(['get', '--raw', '/version'])) as { gitVersion: string };
    if (cluster.local) expect(version.gitVersion).toBe(cluster.version);
    else expect(version.gitVersion).toMatch(/^v1\.\d+\.\d+/);
  });

  it('answers on the `kubernetes` Service from inside a pod, by its DNS name', async () => {
    const sa = '/var/run/secrets/kubernetes.io/serviceaccount';
    const { phase, logs } = await ns.runPod('api-from-pod', {
      image: cluster.images.ingest,
      command: [
        'node',
        '--input-type=module',
        '-e',
        `const token = (await import('node:fs')).readFileSync('${sa}/token', 'utf8');
         const res = await fetch('https://kubernetes.default.svc.cluster.local/version', { headers: { authorization: 'Bearer ' + token } });
         console.log(res.status, JSON.stringify(await res.json()));`,
      ],
      env: { NODE_EXTRA_CA_CERTS: `${sa}/ca.crt` },
    });
    expect(logs).toMatch(/^200 /);
    expect(logs).toContain('"gitVersion"');
    if (cluster.local) expect(logs).toContain(`"gitVersion":"${cluster.version}"`);
    expect(phase).toBe('Succeeded');
  });

  it('reaches the local stack PostgreSQL on the machine address from a pod', async () => {
    const { phase, logs } = await ns.runPod('postgres-from-pod', {
      image: cluster.images.consumer,
      command: [
        'node',
        '-e',
        `const pg = require('pg');
         const client = new pg.Client(process.env.DATABASE_URL);
         client.connect().then(() => client.query("select 'pod-to-postgres' as answer, inet_client_addr()::text as client"))
           .then((r) => { console.log(JSON.stringify(r.rows[0])); return client.end(); })
           .catch((e) => { console.error(e.message); process.exit(1); });`,
      ],
      env: { DATABASE_URL: podStack.databaseUrl },
    });
    expect(logs).toContain('"answer":"pod-to-postgres"');
    expect(phase).toBe('Succeeded');
  });
});
