/**
 * The ingest image as a Deployment on the cluster, publishing into the local stack's real Kafka
 * (listening on this machine's own address): readiness passes; a request through its Service
 * from a pod and from this machine (NodePort) publishes an event that is read back from Kafka; a
 * deleted pod is replaced and serves again; a one-minute CronJob runs a Job to completion.
 */
import { randomUUID } from 'node:crypto';
import { kafkaClient } from '@event-observatory/devstack';
import { randomDevSecret, signDevToken } from '@event-observatory/service-kit';
import type { Consumer } from 'kafkajs';
import { beforeAll, describe, expect, it } from 'vitest';
import { binaryHeaders } from './lib/cloudevents.js';
import { ingestManifests } from './lib/deployment.js';
import { createEventTopic } from './lib/kafka.js';
import type { TestNamespace } from './lib/kube.js';
import { ClusterSuite } from './lib/suite.js';

const suite = new ClusterSuite('cluster-ingest');
const { cluster, podStack, kube, topic } = suite;
const secret = randomDevSecret();
let token: string;
let ns: TestNamespace;
let nodePort: number;
let consumer: Consumer;
/** ce_id header of every record read from the topic so far. */
const published = new Set<string>();

beforeAll(async () => {
  const kafka = kafkaClient(podStack.bootstrapServers, { clientId: 'cluster-e2e' });
  await createEventTopic(podStack.bootstrapServers, topic, 3);
  consumer = kafka.consumer({ groupId: `cluster-e2e-${topic}` });
  await consumer.connect();
  suite.onCleanup(() => consumer.disconnect());
  await consumer.subscribe({ topic, fromBeginning: true });
  await consumer.run({
    eachMessage: async ({ message }) => {
      const id = message.headers?.ce_id;
      if (id) published.add(id.toString());
    },
  });

  token = await signDevToken({ secret, scopes: ['events:write'], ttl: '1h' });
  ns = await suite.namespace();
  await ns.apply(
    ...ingestManifests({
      name: 'ingest',
      image: cluster.images.ingest,
      bootstrapServers: podStack.bootstrapServers,
      topic,
      authSecret: secret,
      env: { BROKER_PROBE_INTERVAL: '1s', LOG_LEVEL: 'INFO' },
      readiness: { periodSeconds: 1, failureThreshold: 2 },
      liveness: true,
      serviceType: 'NodePort',
    }),
    {
      // Started now so that its first minute passes while the other tests run.
      apiVersion: 'batch/v1',
      kind: 'CronJob',
      metadata: { name: 'every-minute' },
      spec: {
        schedule: '*/1 * * * *',
        concurrencyPolicy: 'Forbid',
        jobTemplate: {
          spec: {
            backoffLimit: 0,
            template: {
              spec: {
                restartPolicy: 'Never',
                securityContext: { runAsNonRoot: true },
                containers: [
                  {
                    name: 'tick',
                    image: cluster.images.ingest,
                    imagePullPolicy: 'IfNotPresent',
                    command: ['node', '-e', 'console.log("tick", process.version)'],
                  },
                ],
              },
            },
          },
        },
      },
    },
  );
  const service = await kube.getJson<{ spec: { ports: { nodePort: number }[] } }>([
    'service',
    'ingest',
    '--namespace',
    ns.name,
  ]);
  nodePort = service.spec.ports[0]?.nodePort ?? 0;
});

function event(id: string): { headers: Record<string, string>; body: string } {
  return {
    headers: binaryHeaders(token, { id, source: '/cluster-e2e', type: 'com.example.cluster.test' }),
    body: JSON.stringify({ id }),
  };
}

async function readBack(id: string, timeoutMs = 30_000): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (!published.has(id) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 200));
  return published.has(id);
}

async function postFromHost(id: string): Promise<number> {
  const { headers, body } = event(id);
  const res = await fetch(`http://${podStack.host}:${nodePort}/v1/events`, { method: 'POST', headers, body });
  await res.text();
  return res.status;
}

describe('ingest on the cluster', () => {
  it('rolls out and passes its readiness probe against the real Kafka', async () => {
    await ns.rolloutStatus('ingest', 150_000);
    expect(await ns.readyPods('app=ingest')).toHaveLength(1);
    const ready = await ns.kubectl(['get', 'deployment', 'ingest', '-o', 'jsonpath={.status.readyReplicas}']);
    expect(ready).toBe('1');
  });

  it('publishes an event sent from a pod through the Service (by DNS name) to Kafka', async () => {
    const id = `from-pod-${randomUUID()}`;
    const { headers, body } = event(id);
    const { phase, logs } = await ns.runPod('client', {
      image: cluster.images.ingest,
      command: [
        'node',
        '--input-type=module',
        '-e',
        // A pod just turned Ready may not be behind the Service yet (kube-proxy rejects a Service
        // without endpoints until its next sync): retry a refused connection, never an answer.
        `for (let attempt = 1; ; attempt++) {
           try {
             const res = await fetch('http://ingest:8080/v1/events', { method: 'POST', headers: JSON.parse(process.env.HEADERS), body: process.env.BODY });
             console.log(res.status, await res.text());
             break;
           } catch (err) {
             if (attempt >= 40 || err.cause?.code !== 'ECONNREFUSED') throw err;
             await new Promise((r) => setTimeout(r, 500));
           }
         }`,
      ],
      env: { HEADERS: JSON.stringify(headers), BODY: body },
    });
    expect(logs).toMatch(/^200 /);
    expect(phase).toBe('Succeeded');
    expect(await readBack(id)).toBe(true);
  });

  it('publishes an event sent from this machine through the NodePort to Kafka', async () => {
    expect(nodePort).toBeGreaterThan(0);
    const id = `from-host-${randomUUID()}`;
    expect(await postFromHost(id)).toBe(200);
    expect(await readBack(id)).toBe(true);
  });

  it('refuses a request without a token (the Secret-held key is in force)', async () => {
    const { body, headers } = event(`no-token-${randomUUID()}`);
    const { authorization: _, ...unauthenticated } = headers;
    const res = await fetch(`http://${podStack.host}:${nodePort}/v1/events`, {
      method: 'POST',
      headers: unauthenticated,
      body,
    });
    await res.text();
    expect(res.status).toBe(401);
  });

  it('replaces a deleted pod, and the new one serves', async () => {
    const [before] = await ns.readyPods('app=ingest');
    expect(before).toBeDefined();
    await ns.kubectl(['delete', 'pod', before as string, '--wait=true', '--timeout=60s'], {
      timeoutMs: 70_000,
    });
    const deadline = Date.now() + 90_000;
    let after: string[] = [];
    while (Date.now() < deadline) {
      after = await ns.readyPods('app=ingest');
      if (after.length === 1 && after[0] !== before) break;
      await new Promise((r) => setTimeout(r, 500));
    }
    expect(after).toHaveLength(1);
    expect(after[0]).not.toBe(before);
    // kube-proxy follows the endpoint change within a moment; a request lands on the new pod.
    const id = `after-restart-${randomUUID()}`;
    let status = 0;
    for (let i = 0; i < 20 && status !== 200; i++) {
      status = await postFromHost(id).catch(() => 0);
      if (status !== 200) await new Promise((r) => setTimeout(r, 500));
    }
    expect(status).toBe(200);
    expect(await readBack(id)).toBe(true);
  });

  it('runs a one-minute CronJob: a Job whose pod completes', async () => {
    interface JobList {
      items: { metadata: { name: string }; status: { succeeded?: number; failed?: number } }[];
    }
    const deadline = Date.now() + 150_000;
    let jobs: JobList['items'] = [];
    while (Date.now() < deadline) {
      jobs = (await kube.getJson<JobList>(['jobs', '--namespace', ns.name])).items;
      if (jobs.some((j) => (j.status.succeeded ?? 0) > 0)) break;
      await new Promise((r) => setTimeout(r, 2000));
    }
    const done = jobs.find((j) => (j.status.succeeded ?? 0) > 0);
    expect(done, 'a Job of the CronJob succeeded').toBeDefined();
    expect(done?.metadata.name).toMatch(/^every-minute-/);
    const logs = await ns.kubectl(['logs', `job/${done?.metadata.name}`]);
    expect(logs).toMatch(/^tick v\d+\./);
  });
});
