/**
 * The chart against the API of each older supported Kubernetes line (`K8S_OLDER_LINES` of
 * scripts/versions.sh; the cluster suites run the newest, `K8S_VERSION`, with real pods): that
 * line's API server alone (api-server.ts) establishes the chart's CRD and those its optional objects
 * need, stores every object `helm template` renders for an evaluation install and for a production
 * install with every optional part on (hooks and `helm test` pods included), with strict field
 * validation, so a field the line does not know fails instead of being dropped, and runs the
 * Pipeline CRD's validation rules (CEL, transition rules included) and its status default as the
 * newest line does.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { cacheDir, clusterSetting, REPO_ROOT } from '../cluster/lib/cluster.js';
import { CHART, setArgs } from '../cluster/lib/helm.js';
import { type ApiResponse, type ApiServer, startApiServer } from './api-server.js';

type K8sObject = { apiVersion: string; kind: string; metadata: { name: string; namespace?: string } };

const LINES = clusterSetting('K8S_OLDER_LINES').split(',');
const FIELD_MANAGER = 'observatory-api-lines';
const helmBin = execFileSync(join(REPO_ROOT, 'scripts/install/helm.sh'), {
  encoding: 'utf8',
  env: { ...process.env, OBSERVATORY_CACHE: cacheDir() },
}).trim();

/** KEDA's CRDs, from the source of the release the KEDA suite runs (`keda.sh crds`: no build). */
const kedaCrds = execFileSync(join(REPO_ROOT, 'scripts/cluster/keda.sh'), ['crds'], {
  encoding: 'utf8',
  env: { ...process.env, OBSERVATORY_CACHE: cacheDir() },
}).trim();

/** The CRDs the rendered objects need: the chart's own, and those of its optional kinds. */
const CRD_FILES = [
  join(CHART, 'crds/pipeline.yaml'),
  ...['servicemonitors', 'prometheusrules'].map((c) =>
    join(REPO_ROOT, `cdk8s/vendor/prometheus-operator-crds/monitoring.coreos.com_${c}.yaml`),
  ),
  join(REPO_ROOT, 'cdk8s/vendor/gateway-api-crds/gateway.networking.k8s.io_httproutes.yaml'),
  join(kedaCrds, 'keda.sh_scaledobjects.yaml'),
];

const REQUIRED = {
  'kafka.bootstrapServers': 'kafka.kafka:9092',
  'database.url': 'postgres://observatory@postgres.db:5432/observatory',
  'secrets.store.name': 'observatory-db',
};

/** Every optional part the templates have. */
const EVERYTHING_ON = {
  ...REQUIRED,
  'database.readUrl': 'postgres://observatory@postgres-replica.db:5432/observatory',
  'kafka.tls.enabled': true,
  'ingest.autoscaling.enabled': true,
  'search.autoscaling.enabled': true,
  'consumer.autoscaling.keda.enabled': true,
  'consumer.autoscaling.keda.authenticationRef': 'kafka-credentials',
  'search.serviceType': 'LoadBalancer',
  'ingest.ingress.enabled': true,
  'ingest.ingress.tlsSecret': 'events-tls',
  'ingest.httpRoute.enabled': true,
  'monitoring.serviceMonitor.enabled': true,
  'monitoring.scrapeFrom.namespace': 'monitoring',
  'monitoring.prometheusRule.enabled': true,
  'monitoring.dashboard.enabled': true,
};

/** The Gateway the production install's HTTPRoute attaches to (`--set-json`). */
const PARENT_REFS = ['--set-json', 'ingest.httpRoute.parentRefs=[{"name":"public","namespace":"gateways"}]'];

/** `helm template` of the chart as Helm would install it on `line` (its `kubeVersion` is checked against it). */
function render(
  release: string,
  namespace: string,
  line: string,
  values: Record<string, string | boolean>,
  extra: string[] = [],
): K8sObject[] {
  const out = execFileSync(
    helmBin,
    [
      'template',
      release,
      CHART,
      '--namespace',
      namespace,
      '--kube-version',
      line,
      ...setArgs(values),
      ...extra,
    ],
    { encoding: 'utf8', maxBuffer: 32 * 1024 * 1024 },
  );
  return documents(out);
}

/** The objects of a multi-document YAML text, empty documents left out. */
const documents = (text: string) =>
  parseAllDocuments(text)
    .map((d) => d.toJS() as K8sObject | null)
    .filter((o): o is K8sObject => o !== null);

/** The REST path of `object`'s collection, from the server's discovery of its group version (`discovered`: those asked already). */
async function collectionPath(
  api: ApiServer,
  object: K8sObject,
  discovered: Map<string, Promise<ApiResponse>>,
): Promise<string> {
  const base = object.apiVersion.includes('/') ? `/apis/${object.apiVersion}` : `/api/${object.apiVersion}`;
  // One discovery request per group version and call, not one per object.
  if (!discovered.has(base)) discovered.set(base, api.call('GET', base));
  const { status, body } = (await discovered.get(base)) as ApiResponse;
  if (status !== 200)
    throw new Error(`${api.version.gitVersion} does not serve ${object.apiVersion} (${status})`);
  const resource = (body.resources as Array<{ name: string; kind: string; namespaced: boolean }>).find(
    (r) => r.kind === object.kind && !r.name.includes('/'),
  );
  if (!resource)
    throw new Error(`${api.version.gitVersion} serves no ${object.kind} in ${object.apiVersion}`);
  const namespace = object.metadata.namespace;
  return resource.namespaced
    ? `${base}/namespaces/${namespace}/${resource.name}`
    : `${base}/${resource.name}`;
}

/** Creates each object with strict field validation; the refusals, one line each (none is the goal). */
async function createAll(api: ApiServer, objects: K8sObject[], namespace: string): Promise<string[]> {
  const refused: string[] = [];
  const discovered = new Map<string, Promise<ApiResponse>>();
  for (const object of objects) {
    const path = await collectionPath(
      api,
      { ...object, metadata: { namespace, ...object.metadata } },
      discovered,
    );
    const res = await api.call(
      'POST',
      `${path}?fieldManager=${FIELD_MANAGER}&fieldValidation=Strict`,
      object,
    );
    if (res.status !== 201)
      refused.push(`${object.kind} ${object.metadata.name}: ${res.status} ${res.body.message}`);
  }
  return refused;
}

const createNamespace = (api: ApiServer, name: string) =>
  api.call('POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name } });

describe.each(LINES)('Kubernetes %s', (line) => {
  let api: ApiServer;

  beforeAll(async () => {
    api = await startApiServer(line);
  });
  afterAll(async () => {
    await api?.stop();
  });

  it('is the line it was built from: its version stamp, and the minor its own source declares', () => {
    expect(api.version.gitVersion).toBe(line);
    // The API the binary serves is its source's: the minor that source compiles in, not the stamp.
    expect(`v1.${api.version.emulationMinor}.`).toBe(line.slice(0, line.lastIndexOf('.') + 1));
  });

  it("establishes the chart's CRD and those of the optional kinds it renders", async () => {
    const crds = CRD_FILES.flatMap((f) => documents(readFileSync(f, 'utf8')));
    expect(await createAll(api, crds, '')).toEqual([]);
    for (const crd of crds) {
      await expect
        .poll(
          async () => {
            const { body } = await api.call(
              'GET',
              `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${crd.metadata.name}`,
            );
            const conditions = (body.status as { conditions?: Array<{ type: string; status: string }> })
              ?.conditions;
            return conditions?.find((c) => c.type === 'Established')?.status;
          },
          { timeout: 30_000, interval: 250 },
        )
        .toBe('True');
    }
  });

  it('stores every object of an evaluation install (bundled Kafka and PostgreSQL), hooks and tests included', async () => {
    const objects = render('obs', 'evaluation', line, {
      'kafka.bundled.enabled': true,
      'database.bundled.enabled': true,
    });
    expect(objects.map((o) => o.kind)).toEqual(
      expect.arrayContaining(['StatefulSet', 'Job', 'Pod', 'NetworkPolicy']),
    );
    expect((await createNamespace(api, 'evaluation')).status).toBe(201);
    expect(await createAll(api, objects, 'evaluation')).toEqual([]);
  });

  it('stores every object of a production install with every optional part on', async () => {
    const objects = render('observatory', 'production', line, EVERYTHING_ON, PARENT_REFS);
    expect(objects.map((o) => o.kind)).toEqual(
      expect.arrayContaining([
        'HorizontalPodAutoscaler',
        'ScaledObject',
        'Ingress',
        'HTTPRoute',
        'ServiceMonitor',
        'PrometheusRule',
        'PodDisruptionBudget',
        'CronJob',
      ]),
    );
    expect((await createNamespace(api, 'production')).status).toBe(201);
    expect(await createAll(api, objects, 'production')).toEqual([]);
  });

  it("runs the Pipeline's validation rules and status default: the example is stored, not yet observed; an undeclared flow topic and fewer partitions refused", async () => {
    expect((await createNamespace(api, 'pipelines')).status).toBe(201);
    const base = '/apis/observatory.dev/v1alpha1/namespaces/pipelines/pipelines';
    const example = documents(
      readFileSync(join(REPO_ROOT, 'crds/examples/pipeline.yaml'), 'utf8'),
    )[0] as K8sObject & {
      spec: { topics: Array<{ name: string; partitions: number }>; flow?: Record<string, unknown> };
    };
    const created = await api.call('POST', `${base}?fieldValidation=Strict`, example);
    expect(created.status).toBe(201);
    // The CRD's default: not yet observed, so kstatus (Helm's --wait) waits for the controller.
    expect(created.body.status).toEqual({ observedGeneration: 0 });

    const stray = structuredClone(example);
    stray.metadata = { name: 'stray' };
    stray.spec.flow = { consumerGroup: 'observatory-consumer', topic: 'another-teams.topic' };
    const refused = await api.call('POST', base, stray);
    expect(refused.status).toBe(422);
    expect(String(refused.body.message)).toContain('a Pipeline reads only its own topics');

    const fewer = structuredClone(created.body) as typeof example;
    (fewer.spec.topics[0] as { partitions: number }).partitions = 1;
    const shrunk = await api.call('PUT', `${base}/${example.metadata.name}`, fewer);
    expect(shrunk.status).toBe(422);
    expect(String(shrunk.body.message)).toContain('partitions may not decrease');
  });
});
