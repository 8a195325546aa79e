/**
 * The chart's operator values that change what the cluster does, in ONE install:
 * the uid left to the platform (OpenShift's restricted-v2 assigns its own), an HPA accepted by the
 * API server, `extraEnv` items with `valueFrom`, an extra volume, pull secrets, a priority class,
 * service account annotations, fullnameOverride; search admitting every name of its Service; and
 * ingest with an unreachable Kafka staying behind its Service, answering the spec's 503 body (its
 * readiness follows the listener, not the broker). Kafka is unreachable for the whole release
 * (`127.0.0.1:1` in each pod), so the consumer never gets Ready: the suite waits for ingest and
 * search only.
 */
import { writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomDevSecret } from '@event-observatory/service-kit';
import { beforeAll, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { binaryHeaders, ingestToken } from './lib/cloudevents.js';
import { baseInstall, CHART, setArgs } from './lib/helm.js';
import { httpRequest } from './lib/http.js';
import type { TestNamespace } from './lib/kube.js';
import { ClusterSuite } from './lib/suite.js';

const suite = new ClusterSuite('values');
const { cluster, kube, helm, run: suffix } = suite;
const RELEASE = 'values';
const NAME = 'vt'; // fullnameOverride: every object is vt-<component>
const priorityClass = `observatory-values-test-${suffix}`;
const greeting = `hello-${suffix}`;
const authSecret = randomDevSecret();

let ns: TestNamespace;

interface PodJson {
  metadata: { name: string };
  spec: {
    priorityClassName?: string;
    priority?: number;
    imagePullSecrets?: { name: string }[];
    securityContext?: Record<string, unknown>;
  };
  status: { podIP: string };
}

async function pod(component: string): Promise<PodJson> {
  const list = await kube.getJson<{ items: PodJson[] }>([
    'pods',
    '--namespace',
    ns.name,
    '-l',
    `app.kubernetes.io/instance=${RELEASE},app.kubernetes.io/name=${component}`,
  ]);
  const [first] = list.items;
  if (!first) throw new Error(`no ${component} pod`);
  return first;
}

/** Runs `node -e script` in the component's pod (the images carry no shell tools to rely on). */
async function nodeIn(component: string, script: string): Promise<string> {
  return ns.kubectl(['exec', (await pod(component)).metadata.name, '--', 'node', '-e', script]);
}

/** `clusterIP:8080` of a component's Service, once it accepts connections. */
function serviceAddress(component: string): Promise<string> {
  return kube.serviceAddress(ns.name, `${NAME}-${component}`, 8080);
}

beforeAll(async () => {
  const t0 = Date.now();
  await kube.kubectl(['create', 'priorityclass', priorityClass, '--value=1000']);
  suite.onCleanup(() => kube.kubectl(['delete', 'priorityclass', priorityClass, '--ignore-not-found']));
  ns = await suite.namespace();
  const databaseUrl = await suite.database();
  const base = await baseInstall(cluster.images, {
    ns,
    name: 'vt-secrets',
    databaseUrl,
    authSecret,
    extra: { greeting },
  });
  await ns.apply(
    {
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: 'vt-pull' },
      type: 'kubernetes.io/dockerconfigjson',
      stringData: { '.dockerconfigjson': JSON.stringify({ auths: {} }) },
    },
    { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'vt-extra' }, data: { note: greeting } },
  );
  // The images, small requests, the database and the Secret are baseInstall's --set values.
  // Rollouts are chart.test.ts's: a short preStop delay keeps this suite's teardown short.
  const values = {
    ingest: {
      preStopDelaySeconds: 1,
      autoscaling: { enabled: true, minReplicas: 1, maxReplicas: 2 },
      extraEnv: [
        { name: 'EXTRA_GREETING', valueFrom: { secretKeyRef: { name: 'vt-secrets', key: 'greeting' } } },
      ],
      extraVolumes: [{ name: 'extra', configMap: { name: 'vt-extra' } }],
      extraVolumeMounts: [{ name: 'extra', mountPath: '/etc/extra', readOnly: true }],
      serviceAccount: { annotations: { 'example.com/role': 'ingest-writer' } },
    },
    consumer: { preStopDelaySeconds: 1, replicas: 1 },
    search: { preStopDelaySeconds: 1, replicas: 1 },
    controller: { enabled: false },
    fullnameOverride: NAME,
    global: { imagePullSecrets: ['vt-pull'] },
    priorityClassName: priorityClass,
    // As OpenShift's restricted-v2 wants it: no fixed ids, the image's numeric USER decides.
    podSecurityContext: { runAsUser: null, runAsGroup: null, fsGroup: null },
    // A port nothing listens on, inside each pod: Kafka refuses every connection.
    kafka: { bootstrapServers: '127.0.0.1:1' },
    pipeline: { create: false },
  };
  const file = join(tmpdir(), `values-test-${suffix}.yaml`);
  writeFileSync(file, stringify(values));
  // No --wait: the consumer cannot get Ready without Kafka. The migration hook still runs first.
  await helm.run([
    ...['install', RELEASE, CHART, '--namespace', ns.name, '--skip-crds', '-f', file],
    ...setArgs(base.values),
    ...base.resourceArgs,
  ]);
  // No --wait: deleting the namespace waits for the pods anyway.
  suite.onCleanup(() => helm.run(['uninstall', RELEASE, '--namespace', ns.name]).catch(() => {}));
  await ns.rolloutStatus(`${NAME}-ingest`, 180_000);
  await ns.rolloutStatus(`${NAME}-search`, 180_000);
  suite.log(`installed in ${Math.round((Date.now() - t0) / 1000)} s`);
}, 300_000);

describe('operator values on the cluster', () => {
  it('runs with the uid left unset: the image USER (1000) applies and runAsNonRoot admits it', async () => {
    for (const component of ['ingest', 'search']) {
      const spec = (await pod(component)).spec;
      expect(spec.securityContext, component).toEqual({
        runAsNonRoot: true,
        seccompProfile: { type: 'RuntimeDefault' },
      });
      expect(await nodeIn(component, "process.stdout.write(process.getuid() + ':' + process.getgid())")).toBe(
        '1000:1000',
      );
    }
  });

  it('gives the pods the pull secrets and the priority class (admission resolved its value)', async () => {
    const spec = (await pod('ingest')).spec;
    expect(spec.imagePullSecrets).toEqual([{ name: 'vt-pull' }]);
    expect(spec.priorityClassName).toBe(priorityClass);
    expect(spec.priority).toBe(1000);
  });

  it('passes extraEnv valueFrom items and mounts the extra volume', async () => {
    expect(
      await nodeIn(
        'ingest',
        "process.stdout.write(process.env.EXTRA_GREETING + ' ' + require('fs').readFileSync('/etc/extra/note', 'utf8'))",
      ),
    ).toBe(`${greeting} ${greeting}`);
  });

  it('has its HPA accepted, targeting the Deployment, and the annotated ServiceAccount', async () => {
    const hpa = await kube.getJson<{ spec: { scaleTargetRef: { name: string }; maxReplicas: number } }>([
      'hpa',
      `${NAME}-ingest`,
      '--namespace',
      ns.name,
    ]);
    expect(hpa.spec.scaleTargetRef.name).toBe(`${NAME}-ingest`);
    expect(hpa.spec.maxReplicas).toBe(2);
    const sa = await kube.getJson<{ metadata: { annotations?: Record<string, string> } }>([
      'serviceaccount',
      `${NAME}-ingest`,
      '--namespace',
      ns.name,
    ]);
    expect(sa.metadata.annotations?.['example.com/role']).toBe('ingest-writer');
  });

  it("keeps ingest behind its Service while Kafka is unreachable, answering the spec's 503 body", async () => {
    const ip = (await pod('ingest')).status.podIP;
    const slices = await kube.getJson<{
      items: { endpoints?: { addresses: string[]; conditions: { ready?: boolean } }[] }[];
    }>(['endpointslices', '--namespace', ns.name, '-l', `kubernetes.io/service-name=${NAME}-ingest`]);
    const endpoints = slices.items.flatMap((s) => s.endpoints ?? []);
    expect(endpoints.filter((e) => e.conditions.ready).flatMap((e) => e.addresses)).toEqual([ip]);
    const service = await serviceAddress('ingest');
    // The spec's readiness meaning is kept: /health/ready says the broker is unreachable.
    const ready = await httpRequest(service, '/health/ready');
    expect(ready.status).toBe(503);
    expect(JSON.parse(ready.body)).toMatchObject({ broker: 'unreachable' });
    const token = await ingestToken(authSecret);
    const post = await httpRequest(service, '/v1/events', {
      method: 'POST',
      headers: binaryHeaders(token, { id: suffix, source: '/values', type: 'com.example.values' }),
      body: JSON.stringify({ suffix }),
    });
    expect(post.status, post.body).toBe(503);
    expect(JSON.parse(post.body)).toMatchObject({ error: { code: 503, status: 'UNAVAILABLE' } });
  });

  it('admits every name of the search Service, its ClusterIP, the pod IP and loopback; refuses others', async () => {
    const service = await serviceAddress('search');
    const [serviceIp] = service.split(':');
    const podIp = (await pod('search')).status.podIP;
    const names = [
      `${NAME}-search`,
      `${NAME}-search.${ns.name}`,
      `${NAME}-search.${ns.name}.svc`,
      `${NAME}-search.${ns.name}.svc.cluster.local`,
      serviceIp,
      podIp,
      'localhost',
      '127.0.0.1',
      '[::1]',
    ];
    for (const name of names) {
      // A static asset of the UI: no database needed (/metrics is on the metrics port, unchecked).
      const res = await httpRequest(service, '/assets/site.css', { headers: { host: `${name}:8080` } });
      expect(res.status, name).toBe(200);
    }
    const other = await httpRequest(service, '/assets/site.css', {
      headers: { host: `${NAME}-search.elsewhere:8080` },
    });
    expect(other.status).toBe(400);
  });
});
