/**
 * The generated chart: committed as generated, accepted by `helm lint`, and rendered with what the
 * issue asks for (probes, security contexts, RBAC, schedules, alerts, dashboard, policies); typos,
 * wrong types and missing secrets refused with clear messages; two releases never collide.
 */
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { alertGroups, LOCAL_SCOPE } from '../src/constructs/monitoring.js';
import { CHART_DIR, REPO_ROOT } from '../src/paths.js';
import { DATABASE_URL_SCHEMA } from '../src/values.js';
import { chartDrift } from '../src/write-chart.js';
import { helm, type K8sObject, REQUIRED_VALUES, render, renderError, setArgs } from './helm.js';

const scratch = mkdtempSync(join(tmpdir(), 'chart-test-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

const all = {
  'monitoring.serviceMonitor.enabled': true,
  'monitoring.scrapeFrom.namespace': 'monitoring',
  'monitoring.prometheusRule.enabled': true,
  'monitoring.dashboard.enabled': true,
};
const byKind = (objects: K8sObject[], kind: string) => objects.filter((o) => o.kind === kind);
const named = (objects: K8sObject[], kind: string, name: string) => {
  const found = objects.find((o) => o.kind === kind && o.metadata.name === name);
  if (!found) throw new Error(`no ${kind} ${name}`);
  return found;
};
/** `[name, pod spec]` of every workload. */
function podSpecs(objects: K8sObject[]): [string, K8sObject['spec']][] {
  return objects.flatMap((o): [string, K8sObject['spec']][] => {
    if (o.kind === 'Deployment' || o.kind === 'Job') return [[o.metadata.name, o.spec.template.spec]];
    if (o.kind === 'CronJob') return [[o.metadata.name, o.spec.jobTemplate.spec.template.spec]];
    return [];
  });
}

describe('the generated chart', () => {
  it('is committed exactly as the constructs generate it (run `make chart` after a change)', () => {
    expect(chartDrift(CHART_DIR)).toEqual([]);
  });

  it('the drift check names a template that differs from the constructs, and a stray one', () => {
    const copy = join(scratch, 'drift');
    cpSync(CHART_DIR, copy, { recursive: true });
    const file = join(copy, 'templates/ingest-deployment.yaml');
    writeFileSync(file, readFileSync(file, 'utf8').replace('periodSeconds: 5', 'periodSeconds: 6'));
    writeFileSync(join(copy, 'templates/hand-written.yaml'), 'kind: ConfigMap\n');
    expect(chartDrift(copy)).toEqual(['templates/hand-written.yaml', 'templates/ingest-deployment.yaml']);
  });

  it('passes helm lint --strict with the required values', () => {
    const res = helm(['lint', '--strict', CHART_DIR, ...setArgs({ ...REQUIRED_VALUES, ...all })]);
    expect(res.stderr + res.stdout).toMatch(/1 chart\(s\) linted, 0 chart\(s\) failed/);
    expect(res.status).toBe(0);
  });
});

describe('values are checked at install', () => {
  it('refuses a misspelt value, naming it (values.schema.json: additionalProperties false)', () => {
    const error = renderError(setArgs({ ...REQUIRED_VALUES, 'ingest.replica': 3 }));
    expect(error).toMatch(/additional propert/i);
    expect(error).toContain("'replica'");
  });

  it('refuses a value of the wrong type', () => {
    const error = renderError(setArgs({ ...REQUIRED_VALUES, 'consumer.replicas': 'two' }));
    expect(error).toMatch(/consumer\/replicas|consumer\.replicas/);
    expect(error).toMatch(/integer/);
  });

  it('refuses a password in database.url or database.readUrl (it would land in ConfigMaps), without printing it', () => {
    for (const [key, url] of [
      ['database.url', 'postgres://owner:s3cret@db:5432/observatory'],
      ['database.url', 'postgres://:s3cret@db/observatory'],
      ['database.url', 'jdbc:postgresql://db:5432/observatory?user=owner&password=s3cret'],
      ['database.readUrl', 'postgresql://reader:s3cret@replica:5432/observatory?sslmode=require'],
    ] as const) {
      const error = renderError(setArgs({ ...REQUIRED_VALUES, [key]: url }));
      expect(error, url).toContain(`at '/${key.replace('.', '/')}'`);
      expect(error, url).not.toContain('s3cret');
    }
    // A user name alone, TLS parameters, an @ past the host: accepted.
    for (const url of [
      'postgres://db:5432/observatory',
      'postgres://owner@db:5432/observatory',
      'jdbc:postgresql://owner@db.example:5432/events?ssl=true',
      'postgresql://owner@[::1]:5432/observatory?sslmode=verify-full&sslrootcert=/etc/ca.crt',
      'postgres://db/observatory?application_name=ops@example',
    ])
      expect(() => render({ 'database.url': url, 'database.readUrl': url }), url).not.toThrow();
    // The description says where the password goes instead.
    const schema = JSON.parse(readFileSync(join(CHART_DIR, 'values.schema.json'), 'utf8'));
    for (const key of ['url', 'readUrl']) {
      const url = schema.properties.database.properties[key];
      expect(url, key).toMatchObject(DATABASE_URL_SCHEMA);
      expect(url.description, key).toMatch(/never with a password/);
    }
    expect(schema.properties.database.properties.url.description).toMatch(/secrets\.store/);
  });

  it('refuses an install without the mandatory settings, naming every missing one', () => {
    const error = renderError([]);
    for (const name of ['kafka.bootstrapServers', 'database.url', 'secrets.store.name'])
      expect(error).toContain(name);
    expect(error).toContain('STORE_PASSWORD');
    // The token keys and APPLICATION_SECRET are generated when not named (evaluation.test.ts).
    expect(error).not.toContain('secrets.auth.name');
  });

  it('refuses only the one missing setting when the others are given', () => {
    const { 'secrets.store.name': _, ...others } = REQUIRED_VALUES;
    const error = renderError(setArgs(others));
    expect(error).toMatch(
      /these values are required: secrets\.store\.name \(the Secret holding STORE_PASSWORD/,
    );
    expect(error).not.toContain('database.url');
  });
});

describe('the rendered platform', () => {
  const objects = render(all);

  it('runs every pod non-root with a read-only root filesystem, no privilege escalation, no capabilities', () => {
    const pods = podSpecs(objects);
    expect(pods.map(([name]) => name).sort()).toEqual([
      'obs-consumer',
      'obs-controller',
      'obs-controller-pre-delete',
      'obs-ingest',
      'obs-migrate',
      'obs-partition-maintenance',
      'obs-rollup-refresh',
      'obs-search',
    ]);
    for (const [name, pod] of pods) {
      expect(pod.securityContext, name).toMatchObject({ runAsNonRoot: true, runAsUser: 1000 });
      expect(pod.securityContext.seccompProfile, name).toEqual({ type: 'RuntimeDefault' });
      for (const container of pod.containers) {
        expect(container.securityContext, name).toEqual({
          allowPrivilegeEscalation: false,
          readOnlyRootFilesystem: true,
          runAsNonRoot: true,
          capabilities: { drop: ['ALL'] },
        });
        expect(container.resources.requests.memory, name).toBeDefined();
      }
      expect(pod.automountServiceAccountToken, name).toBe(name.startsWith('obs-controller'));
    }
  });

  it('probes every service on /health/live (after a startup probe) and /health/ready, and gives the consumer at least 70 s to stop', () => {
    for (const deployment of byKind(objects, 'Deployment')) {
      const pod = deployment.spec.template.spec;
      const [container] = pod.containers;
      expect(container.livenessProbe.httpGet, deployment.metadata.name).toEqual({
        path: '/health/live',
        port: 'http',
      });
      // Liveness waits for the start: up to two minutes, probed every 2 s.
      expect(container.startupProbe, deployment.metadata.name).toMatchObject({
        httpGet: { path: '/health/live', port: 'http' },
        periodSeconds: 2,
        failureThreshold: 60,
      });
      expect(container.livenessProbe.initialDelaySeconds, deployment.metadata.name).toBeUndefined();
      // Ingest's readiness follows its listener by default (values.test.ts: brokerGatesReadiness).
      expect(container.readinessProbe.httpGet, deployment.metadata.name).toEqual({
        path: deployment.metadata.name === 'obs-ingest' ? '/health/live' : '/health/ready',
        port: 'http',
      });
      // The probes' port, the metrics listener's, and the consumer's admin listener's.
      expect(container.ports, deployment.metadata.name).toEqual([
        { name: 'http', containerPort: 8080 },
        { name: 'metrics', containerPort: 9464 },
        ...(deployment.metadata.name === 'obs-consumer' ? [{ name: 'admin', containerPort: 8081 }] : []),
      ]);
      const settings = named(objects, 'ConfigMap', deployment.metadata.name).data;
      expect(settings?.METRICS_PORT, deployment.metadata.name).toBe('9464');
      expect(settings?.ADMIN_PORT, deployment.metadata.name).toBe(
        deployment.metadata.name === 'obs-consumer' ? '8081' : undefined,
      );
      expect(named(objects, 'Service', deployment.metadata.name).spec.ports).toEqual([
        { name: 'http', port: 8080, targetPort: 'http' },
        { name: 'metrics', port: 9464, targetPort: 'metrics' },
        ...(deployment.metadata.name === 'obs-consumer'
          ? [{ name: 'admin', port: 8081, targetPort: 'admin' }]
          : []),
      ]);
      expect(pod.topologySpreadConstraints).toHaveLength(1);
      expect(deployment.spec.strategy.rollingUpdate).toEqual({ maxSurge: 1, maxUnavailable: 0 });
    }
    expect(
      named(objects, 'Deployment', 'obs-consumer').spec.template.spec.terminationGracePeriodSeconds,
    ).toBeGreaterThanOrEqual(70);
    expect(byKind(objects, 'PodDisruptionBudget')).toHaveLength(4);
  });

  it('schedules the CronJobs every 6 h and 5 min by default, one run at a time, with deadlines and history limits', () => {
    const partition = named(objects, 'CronJob', 'obs-partition-maintenance');
    const rollup = named(objects, 'CronJob', 'obs-rollup-refresh');
    expect(partition.spec.schedule).toBe('0 */6 * * *');
    expect(rollup.spec.schedule).toBe('*/5 * * * *');
    for (const cron of [partition, rollup]) {
      expect(cron.spec).toMatchObject({
        concurrencyPolicy: 'Forbid',
        successfulJobsHistoryLimit: 3,
        failedJobsHistoryLimit: 3,
      });
      expect(cron.spec.startingDeadlineSeconds).toBeGreaterThan(0);
      expect(cron.spec.jobTemplate.spec.activeDeadlineSeconds).toBeGreaterThan(0);
    }
    // Each run's deadline comes after the jobs' bound on a statement (services/jobs' run-job.ts)
    // and a margin: a slow run ends by its own timeout, freeing its advisory lock, before the pod
    // is killed (which would leave the statement running, the lock held, later runs skipped).
    const runJob = readFileSync(join(REPO_ROOT, 'services/jobs/src/run-job.ts'), 'utf8');
    const timeout = /RUN_STATEMENT_TIMEOUT = '(\d+)min'/.exec(runJob)?.[1];
    expect(timeout, 'RUN_STATEMENT_TIMEOUT of run-job.ts').toBeDefined();
    for (const cron of [partition, rollup])
      expect(cron.spec.jobTemplate.spec.activeDeadlineSeconds, cron.metadata.name).toBeGreaterThanOrEqual(
        Number(timeout) * 60 + 60,
      );
    expect(partition.spec.jobTemplate.spec.template.spec.containers[0].args).toEqual([
      'partition-maintenance',
    ]);
    const shortened = render({ 'jobs.rollupRefresh.schedule': '*/1 * * * *' });
    expect(named(shortened, 'CronJob', 'obs-rollup-refresh').spec.schedule).toBe('*/1 * * * *');
  });

  it("grants the controller exactly the rules of its README's RBAC table, in its namespace only", () => {
    expect(named(objects, 'Role', 'obs-controller').rules).toEqual([
      { apiGroups: ['observatory.dev'], resources: ['pipelines'], verbs: ['list', 'watch', 'patch'] },
      { apiGroups: ['observatory.dev'], resources: ['pipelines/status'], verbs: ['patch'] },
      { apiGroups: [''], resources: ['events'], verbs: ['create'] },
      { apiGroups: [''], resources: ['secrets'], verbs: ['get'] },
      {
        apiGroups: ['coordination.k8s.io'],
        resources: ['leases'],
        resourceNames: ['obs-controller'],
        verbs: ['get', 'update'],
      },
    ]);
    expect(named(objects, 'RoleBinding', 'obs-controller').subjects).toEqual([
      { kind: 'ServiceAccount', name: 'obs-controller', namespace: 'observatory' },
    ]);
    expect(named(objects, 'Lease', 'obs-controller').spec).toEqual({});
    const env = named(objects, 'ConfigMap', 'obs-controller').data;
    expect(env).toMatchObject({
      CONTROLLER_WATCH_NAMESPACE: 'observatory',
      CONTROLLER_LEASE_NAME: 'obs-controller',
    });
  });

  it('runs the migration once per install or upgrade, as a hook Job of the jobs image, and the consumer does not migrate', () => {
    const job = named(objects, 'Job', 'obs-migrate');
    expect(job.metadata.annotations).toMatchObject({
      'helm.sh/hook': 'pre-install,pre-upgrade',
      'helm.sh/hook-delete-policy': 'before-hook-creation,hook-succeeded',
    });
    expect(job.spec.template.spec.containers[0]).toMatchObject({
      image: 'ghcr.io/event-observatory/observatory/jobs:0.1.0',
      command: ['node', 'packages/store/dist/migrate-cli.js'],
    });
    expect(named(objects, 'ConfigMap', 'obs-consumer').data?.CONSUMER_MIGRATE_ON_BOOT).toBe('false');
  });

  it('makes the PrometheusRule of the 14 alerts of monitoring/, with their template text intact', () => {
    const rule = named(objects, 'PrometheusRule', 'obs-alerts');
    const alerts = rule.spec.groups.flatMap((g: { rules: { alert: string }[] }) =>
      g.rules.map((r) => r.alert),
    );
    expect(alerts).toHaveLength(14);
    // The rule files' scope becomes the release's, a search_path a search_url only with search.publicUrl
    // (cdk8s/test/monitoring.test.ts tests both further).
    const release =
      'namespace="observatory", service=~"obs-ingest|obs-consumer|obs-search|obs-controller|obs-postgres-exporter"';
    const expected = alertGroups().map((g) => ({
      ...g,
      rules: g.rules.map(({ annotations: { search_path: _search, ...annotations } = {}, ...r }) => ({
        ...r,
        annotations,
        expr: r.expr.replaceAll(LOCAL_SCOPE, release).trimEnd(),
      })),
    }));
    expect(rule.spec.groups).toEqual(JSON.parse(JSON.stringify(expected)));
    expect(JSON.stringify(rule)).toContain('{{ $labels.instance }}');
  });

  it('puts the dashboard in a ConfigMap with the Grafana sidecar label', () => {
    const dashboard = named(objects, 'ConfigMap', 'obs-dashboard');
    expect(dashboard.metadata.labels?.grafana_dashboard).toBe('1');
    const json = readFileSync(join(REPO_ROOT, 'monitoring/dashboards/event-observatory.json'), 'utf8');
    expect(dashboard.data?.['event-observatory.json']).toBe(json);
    expect(byKind(objects, 'ServiceMonitor').map((m) => m.metadata.name)).toHaveLength(4);
  });

  it('leaves the monitoring objects out unless asked, and the Ingress off by default', () => {
    const plain = render();
    for (const kind of ['ServiceMonitor', 'PrometheusRule', 'Ingress'])
      expect(byKind(plain, kind)).toEqual([]);
    expect(plain.some((o) => o.metadata.labels?.grafana_dashboard)).toBe(false);
    const withIngress = render({
      'ingest.ingress.enabled': true,
      'ingest.ingress.host': 'events.test',
      'ingest.ingress.tlsSecret': 'events-tls',
      'ingest.ingress.className': 'nginx',
    });
    expect(named(withIngress, 'Ingress', 'obs-ingest').spec).toMatchObject({
      ingressClassName: 'nginx',
      tls: [{ hosts: ['events.test'], secretName: 'events-tls' }],
      rules: [{ host: 'events.test' }],
    });
  });

  it('never writes an empty from/to in a NetworkPolicy (which would admit everyone), and lets only ingest take outside requests', () => {
    const policies = byKind(objects, 'NetworkPolicy');
    // The six components' own, and the one admitting Prometheus (ServiceMonitors on).
    expect(policies).toHaveLength(7);
    for (const policy of policies) {
      for (const rule of policy.spec.ingress ?? [])
        if ('from' in rule) expect(rule.from.length).toBeGreaterThan(0);
      for (const rule of policy.spec.egress ?? [])
        if ('to' in rule) expect(rule.to.length).toBeGreaterThan(0);
    }
    expect(named(objects, 'NetworkPolicy', 'obs-search').spec.ingress).toEqual([
      {
        from: [{ podSelector: { matchLabels: { 'app.kubernetes.io/instance': 'obs' } } }],
        ports: [{ protocol: 'TCP', port: 'http' }],
      },
    ]);
    expect(named(objects, 'NetworkPolicy', 'obs-ingest').spec.ingress).toEqual([
      { ports: [{ protocol: 'TCP', port: 'http' }] },
    ]);
    // The consumer's probes and admin API, never its metrics port (the scrape policy's alone).
    expect(named(objects, 'NetworkPolicy', 'obs-consumer').spec.ingress).toEqual([
      {
        from: [{ podSelector: { matchLabels: { 'app.kubernetes.io/instance': 'obs' } } }],
        ports: [
          { protocol: 'TCP', port: 'http' },
          { protocol: 'TCP', port: 'admin' },
        ],
      },
    ]);
    expect(named(objects, 'NetworkPolicy', 'obs-jobs').spec.ingress).toEqual([]);
    const emptyEgress = renderError([
      '--set-json',
      'networkPolicies.egressTo=[]',
      ...setArgs(REQUIRED_VALUES),
    ]);
    expect(emptyEgress).toMatch(/egressTo/);
  });

  it('writes every ConfigMap value as a string (the API server refuses a number there)', () => {
    for (const map of byKind(objects, 'ConfigMap')) {
      for (const [key, v] of Object.entries(map.data ?? {}))
        expect(typeof v, `${map.metadata.name} ${key}`).toBe('string');
    }
  });

  it('exports traces only to a configured collector, over gRPC unless told otherwise', () => {
    const tracingOf = (rendered: K8sObject[]) =>
      byKind(rendered, 'ConfigMap')
        .filter((map) => map.data?.OTEL_TRACES_EXPORTER !== undefined)
        .map((map) => [
          map.data?.OTEL_TRACES_EXPORTER,
          map.data?.OTEL_EXPORTER_OTLP_ENDPOINT,
          map.data?.OTEL_EXPORTER_OTLP_PROTOCOL,
        ]);
    expect(tracingOf(objects).length).toBeGreaterThanOrEqual(4);
    expect(new Set(tracingOf(objects).map(([exporter]) => exporter))).toEqual(new Set(['none']));
    const endpoint = 'http://collector.observability:4317';
    expect(new Set(tracingOf(render({ 'tracing.otlpEndpoint': endpoint })).map(String))).toEqual(
      new Set([String(['otlp', endpoint, 'grpc'])]),
    );
    const http = render({ 'tracing.otlpEndpoint': 'http://c:4318', 'tracing.otlpProtocol': 'http/protobuf' });
    expect(new Set(tracingOf(http).map(([, , protocol]) => protocol))).toEqual(new Set(['http/protobuf']));
  });

  it('takes images, replicas, labels and scheduling from values', () => {
    const custom = render({
      'image.registry': 'localhost',
      'image.tag': 'chart',
      'ingest.image.tag': 'canary',
      'image.pullPolicy': 'Never',
      'search.replicas': 3,
      'commonLabels.team': 'platform',
      'nodeSelector.disk': 'ssd',
    });
    const ingest = named(custom, 'Deployment', 'obs-ingest').spec.template.spec;
    expect(ingest.containers[0].image).toBe('localhost/observatory/ingest:canary');
    expect(ingest.containers[0].imagePullPolicy).toBe('Never');
    expect(ingest.nodeSelector).toEqual({ disk: 'ssd' });
    expect(named(custom, 'Deployment', 'obs-search').spec.template.spec.containers[0].image).toBe(
      'localhost/observatory/search:chart',
    );
    expect(named(custom, 'Deployment', 'obs-search').spec.replicas).toBe(3);
    for (const object of custom)
      expect(object.metadata.labels?.team, `${object.kind} ${object.metadata.name}`).toBe('platform');
  });

  it('lets two releases in two namespaces live side by side: no cluster-wide object, names per release', () => {
    const a = render({}, { release: 'one', namespace: 'team-a' });
    const b = render({}, { release: 'two', namespace: 'team-b' });
    const clusterWide = ['ClusterRole', 'ClusterRoleBinding', 'CustomResourceDefinition', 'Namespace'];
    expect([...a, ...b].filter((o) => clusterWide.includes(o.kind))).toEqual([]);
    const names = (objects: K8sObject[]) => new Set(objects.map((o) => `${o.kind}/${o.metadata.name}`));
    const shared = [...names(a)].filter((n) => names(b).has(n));
    expect(shared).toEqual([]);
    expect(named(b, 'ConfigMap', 'two-search').data?.ALLOWED_HOSTS).toContain('two-search.team-b.svc');
  });

  it("adds the search pod's own address to ALLOWED_HOSTS, so Prometheus can scrape it by pod IP", () => {
    const env = named(render({}), 'Deployment', 'obs-search').spec.template.spec.containers[0].env;
    const names = env.map((e: { name: string }) => e.name);
    expect(env.find((e: { name: string }) => e.name === 'POD_IP')?.valueFrom).toEqual({
      fieldRef: { fieldPath: 'status.podIP' },
    });
    // POD_IP must come first: kubelet expands $(VAR) only from envFrom and earlier entries.
    expect(names.indexOf('POD_IP')).toBeLessThan(names.indexOf('ALLOWED_HOSTS'));
    expect(env.find((e: { name: string }) => e.name === 'ALLOWED_HOSTS')?.value).toBe(
      '$(ALLOWED_HOSTS),$(POD_IP),$(SERVICE_IP)',
    );
  });
});

describe('search visibility rules', () => {
  it('renders search.visibility.rules to a ConfigMap mounted as SEARCH_VISIBILITY_FILE; new rules roll the pods', () => {
    const rules = {
      'search.visibility.rules[0].groups[0]': 'plant-a',
      'search.visibility.rules[0].see.sourcePrefixes[0]': '/plant/a/',
    };
    const objects = render(rules);
    const file = named(objects, 'ConfigMap', 'obs-search-visibility').data?.['rules.yaml'];
    expect(parse(file ?? '')).toEqual([{ groups: ['plant-a'], see: { sourcePrefixes: ['/plant/a/'] } }]);
    expect(named(objects, 'ConfigMap', 'obs-search').data?.SEARCH_VISIBILITY_FILE).toBe(
      '/etc/observatory/visibility/rules.yaml',
    );
    const pod = named(objects, 'Deployment', 'obs-search').spec.template;
    expect(pod.spec.volumes).toContainEqual({
      name: 'visibility',
      configMap: { name: 'obs-search-visibility' },
    });
    expect(pod.spec.containers[0].volumeMounts).toContainEqual({
      name: 'visibility',
      mountPath: '/etc/observatory/visibility',
      readOnly: true,
    });
    const plain = render();
    expect(parse(named(plain, 'ConfigMap', 'obs-search-visibility').data?.['rules.yaml'] ?? '')).toEqual([]);
    const checksum = (o: K8sObject[]) =>
      named(o, 'Deployment', 'obs-search').spec.template.metadata.annotations['checksum/visibility'];
    expect(checksum(objects)).not.toBe(checksum(plain));
  });
});

describe('secured connections', () => {
  const container = (objects: K8sObject[], kind: string, name: string) => {
    const spec = podSpecs(objects).find(([n]) => n === name)?.[1];
    if (!spec) throw new Error(`no ${kind} ${name}`);
    return { pod: spec, container: spec.containers[0] };
  };
  const config = (objects: K8sObject[], name: string) => named(objects, 'ConfigMap', name).data ?? {};
  const kafkaClients = ['obs-ingest', 'obs-consumer', 'obs-controller'];
  const secured = {
    'kafka.bootstrapServers': 'my-cluster-kafka-bootstrap.kafka:9093',
    'kafka.tls.enabled': true,
    'kafka.tls.caSecret.name': 'my-cluster-cluster-ca-cert',
    'kafka.sasl.mechanism': 'SCRAM-SHA-512',
    'kafka.sasl.username': 'observatory',
    'kafka.sasl.passwordSecret.name': 'observatory',
  };

  it('by default: PLAINTEXT, no credential volumes, every BROKER_* file variable empty', () => {
    const objects = render();
    for (const name of kafkaClients) {
      expect(config(objects, name)).toMatchObject({
        BROKER_SECURITY_PROTOCOL: 'PLAINTEXT',
        BROKER_SASL_MECHANISM: '',
        BROKER_SASL_PASSWORD_FILE: '',
        BROKER_SSL_CA_FILE: '',
        BROKER_SSL_CERT_FILE: '',
      });
      const { pod, container: c } = container(objects, 'Deployment', name);
      expect(pod.volumes.map((v: { name: string }) => v.name)).toEqual(['tmp']);
      expect(c.volumeMounts).toEqual([{ name: 'tmp', mountPath: '/tmp' }]);
    }
  });

  it('kafka.tls + kafka.sasl: SASL_SSL for ingest, consumer and controller, the CA and password mounted read-only as files', () => {
    const objects = render(secured);
    for (const name of kafkaClients) {
      expect(config(objects, name)).toMatchObject({
        BROKER_SECURITY_PROTOCOL: 'SASL_SSL',
        BROKER_SASL_MECHANISM: 'SCRAM-SHA-512',
        BROKER_SASL_USERNAME: 'observatory',
        BROKER_SASL_PASSWORD_FILE: '/etc/observatory/kafka/sasl-password',
        BROKER_SSL_CA_FILE: '/etc/observatory/kafka/ca.crt',
        BROKER_SSL_CERT_FILE: '',
        BROKER_SSL_KEY_FILE: '',
      });
      const { pod, container: c } = container(objects, 'Deployment', name);
      expect(pod.volumes.find((v: { name: string }) => v.name === 'kafka-credentials')).toEqual({
        name: 'kafka-credentials',
        projected: {
          defaultMode: 0o440,
          sources: [
            { secret: { name: 'my-cluster-cluster-ca-cert', items: [{ key: 'ca.crt', path: 'ca.crt' }] } },
            { secret: { name: 'observatory', items: [{ key: 'password', path: 'sasl-password' }] } },
          ],
        },
      });
      expect(c.volumeMounts).toContainEqual({
        name: 'kafka-credentials',
        mountPath: '/etc/observatory/kafka',
        readOnly: true,
      });
      // The password is a file: never an environment variable.
      expect(JSON.stringify(c.env ?? [])).not.toContain('SASL');
    }
    // Pods that do not talk to Kafka get no Kafka credentials.
    expect(JSON.stringify(container(objects, 'Deployment', 'obs-search').pod.volumes)).not.toContain('kafka');
  });

  it("kafka.tls with a client certificate (Strimzi's tls authentication): SSL with certificate and key files", () => {
    const objects = render({
      'kafka.tls.enabled': true,
      'kafka.tls.clientCertSecret.name': 'observatory-user',
    });
    expect(config(objects, 'obs-ingest')).toMatchObject({
      BROKER_SECURITY_PROTOCOL: 'SSL',
      BROKER_SSL_CA_FILE: '',
      BROKER_SSL_CERT_FILE: '/etc/observatory/kafka/tls.crt',
      BROKER_SSL_KEY_FILE: '/etc/observatory/kafka/tls.key',
    });
    const { pod } = container(objects, 'Deployment', 'obs-ingest');
    expect(pod.volumes[1].projected.sources).toEqual([
      {
        secret: {
          name: 'observatory-user',
          items: [
            { key: 'user.crt', path: 'tls.crt' },
            { key: 'user.key', path: 'tls.key' },
          ],
        },
      },
    ]);
  });

  it('kafka.sasl without TLS is SASL_PLAINTEXT; a mechanism without user or password Secret is refused naming the value', () => {
    const plain = render({ ...secured, 'kafka.tls.enabled': false });
    expect(config(plain, 'obs-consumer').BROKER_SECURITY_PROTOCOL).toBe('SASL_PLAINTEXT');
    expect(config(plain, 'obs-consumer').BROKER_SSL_CA_FILE).toBe('');
    const noPassword = renderError(
      setArgs({ ...REQUIRED_VALUES, 'kafka.sasl.mechanism': 'PLAIN', 'kafka.sasl.username': 'u' }),
    );
    expect(noPassword).toContain('kafka.sasl.passwordSecret.name is required');
    const noUser = renderError(setArgs({ ...REQUIRED_VALUES, 'kafka.sasl.mechanism': 'PLAIN' }));
    expect(noUser).toContain('kafka.sasl.username is required');
    expect(renderError(setArgs({ ...REQUIRED_VALUES, 'kafka.sasl.mechanism': 'GSSAPI' }))).toMatch(
      /mechanism/,
    );
  });

  it("CONTROLLER_ALLOWED_BOOTSTRAP is the release's own Kafka unless listed", () => {
    expect(config(render(), 'obs-controller').CONTROLLER_ALLOWED_BOOTSTRAP).toBe('kafka:9092');
    const more = render({ 'controller.allowedBootstrapServers': 'kafka:9092\\,other:9092' });
    expect(config(more, 'obs-controller').CONTROLLER_ALLOWED_BOOTSTRAP).toBe('kafka:9092,other:9092');
  });

  it('one Secret and one role by default: every database client gets database.user and secrets.store, the migration grants nothing', () => {
    const objects = render();
    for (const name of ['obs-consumer', 'obs-search', 'obs-jobs'])
      expect(config(objects, name)).toMatchObject({
        // Empty: the user of database.url counts (else the services' default, observatory).
        DATABASE_USER: '',
        DATABASE_URL: 'postgres://postgres:5432/observatory',
      });
    const noDatabase = ['obs-ingest', 'obs-controller', 'obs-controller-pre-delete'];
    for (const [name] of podSpecs(objects).filter(([n]) => !noDatabase.includes(n))) {
      const env = container(objects, '', name).container.env;
      expect(env.find((e: { name: string }) => e.name === 'DATABASE_PASSWORD')?.valueFrom, name).toEqual({
        secretKeyRef: { name: 'observatory-store', key: 'STORE_PASSWORD' },
      });
    }
    const migrate = container(objects, 'Job', 'obs-migrate').container.env;
    expect(migrate).toContainEqual({ name: 'DATABASE_WRITER_ROLE', value: '' });
    expect(migrate).toContainEqual({ name: 'DATABASE_READER_ROLE', value: '' });
  });

  it('three roles: owner migrates and grants to writer and reader; writer for consumer and jobs; reader for search; one Secret may hold all', () => {
    const objects = render({
      'database.writer.user': 'observatory_writer',
      'database.reader.user': 'observatory_reader',
      'database.reader.passwordSecret.name': 'reader-secret',
      'database.reader.passwordSecret.key': 'password',
    });
    const password = (name: string) =>
      container(objects, '', name).container.env.find((e: { name: string }) => e.name === 'DATABASE_PASSWORD')
        ?.valueFrom.secretKeyRef;
    const user = (name: string) => config(objects, name).DATABASE_USER;
    expect(user('obs-consumer')).toBe('observatory_writer');
    expect(user('obs-jobs')).toBe('observatory_writer');
    expect(user('obs-search')).toBe('observatory_reader');
    expect(password('obs-consumer')).toEqual({ name: 'observatory-store', key: 'WRITER_PASSWORD' });
    expect(password('obs-rollup-refresh')).toEqual({ name: 'observatory-store', key: 'WRITER_PASSWORD' });
    expect(password('obs-search')).toEqual({ name: 'reader-secret', key: 'password' });
    expect(password('obs-migrate')).toEqual({ name: 'observatory-store', key: 'STORE_PASSWORD' });
    const migrate = container(objects, 'Job', 'obs-migrate').container.env;
    expect(migrate).toContainEqual({ name: 'DATABASE_USER', value: '' });
    expect(migrate).toContainEqual({ name: 'DATABASE_WRITER_ROLE', value: 'observatory_writer' });
    expect(migrate).toContainEqual({ name: 'DATABASE_READER_ROLE', value: 'observatory_reader' });
  });

  it('database.tls: sslmode and sslrootcert appended to the URL, the CA mounted in every database client only', () => {
    const objects = render({
      'database.url': 'postgres://db.example:5432/observatory?application_name=obs',
      'database.tls.mode': 'verify-full',
      'database.tls.caSecret.name': 'postgres-ca',
    });
    const url =
      'postgres://db.example:5432/observatory?application_name=obs&sslmode=verify-full&sslrootcert=/etc/observatory/postgres/ca.crt';
    for (const name of ['obs-consumer', 'obs-search', 'obs-jobs'])
      expect(config(objects, name).DATABASE_URL).toBe(url);
    expect(container(objects, 'Job', 'obs-migrate').container.env).toContainEqual({
      name: 'DATABASE_URL',
      value: url,
    });
    for (const [name, pod] of podSpecs(objects)) {
      const mounted = pod.volumes.some((v: { name: string }) => v.name === 'postgres-ca');
      expect(mounted, name).toBe(
        !['obs-ingest', 'obs-controller', 'obs-controller-pre-delete'].includes(name),
      );
    }
    expect(container(objects, '', 'obs-search').pod.volumes).toContainEqual({
      name: 'postgres-ca',
      secret: { secretName: 'postgres-ca', defaultMode: 0o440, items: [{ key: 'ca.crt', path: 'ca.crt' }] },
    });
    const noQuery = render({ 'database.tls.mode': 'require' });
    expect(config(noQuery, 'obs-consumer').DATABASE_URL).toBe(
      'postgres://postgres:5432/observatory?sslmode=require',
    );
  });

  it('database.readUrl: search alone reads from the replica, with the same TLS parameters, and writes to the primary', () => {
    const objects = render({
      'database.readUrl': 'postgres://replica.example:5432/observatory',
      'database.tls.mode': 'require',
    });
    expect(config(objects, 'obs-search').DATABASE_URL).toBe(
      'postgres://replica.example:5432/observatory?sslmode=require',
    );
    // Its writes (saved searches, logouts) go to the primary.
    expect(config(objects, 'obs-search').DATABASE_PRIMARY_URL).toBe(
      'postgres://postgres:5432/observatory?sslmode=require',
    );
    for (const name of ['obs-consumer', 'obs-jobs'])
      expect(config(objects, name).DATABASE_URL).toBe('postgres://postgres:5432/observatory?sslmode=require');
    expect(config(render(), 'obs-search').DATABASE_URL).toBe('postgres://postgres:5432/observatory');
    expect(config(render(), 'obs-search').DATABASE_PRIMARY_URL).toBe('');
  });

  it('replicates the topics 3 times on an external Kafka and once on the bundled one; the dead letters are kept 30 days', () => {
    const topics = (objects: K8sObject[]) =>
      named(objects, 'Pipeline', 'obs-events').spec.topics.map(
        (t: { replicationFactor: number; config: Record<string, string> }) => [
          t.replicationFactor,
          t.config['retention.ms'],
        ],
      );
    const week = String(168 * 3_600_000);
    const month = String(720 * 3_600_000);
    expect(topics(render())).toEqual([
      [3, week],
      [3, month],
    ]);
    expect(topics(render({ 'kafka.bundled.enabled': true }))).toEqual([
      [1, week],
      [1, month],
    ]);
    expect(
      topics(render({ 'pipeline.replicationFactor': 2, 'pipeline.deadLetterRetentionHours': 24 })),
    ).toEqual([
      [2, week],
      [2, String(24 * 3_600_000)],
    ]);
  });

  it('takes over its own existing topics (a reinstall) unless pipeline.adoptExistingTopics=false (the adopt annotation)', () => {
    const annotations = (objects: K8sObject[]) =>
      named(objects, 'Pipeline', 'obs-events').metadata.annotations;
    const stamp = { 'observatory.dev/controller': 'observatory/obs' }; // the release's controller's
    expect(annotations(render({ 'pipeline.adoptExistingTopics': false }))).toEqual(stamp);
    expect(annotations(render())).toEqual({ ...stamp, 'observatory.dev/adopt-topics': '*' });
  });

  it('NetworkPolicy egress by default excludes the link-local range of the cloud metadata services', () => {
    for (const policy of byKind(render(), 'NetworkPolicy'))
      expect(policy.spec.egress[1].to, policy.metadata.name).toEqual([
        { ipBlock: { cidr: '0.0.0.0/0', except: ['169.254.0.0/16'] } },
      ]);
  });

  it('admits the peers of <component>.allowFrom to that component alone, after the release and networkPolicies.allowFrom', () => {
    const admin = { namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'admin' } } };
    const team = { namespaceSelector: { matchLabels: { team: 'payments' } } };
    const policies = render(
      {},
      { json: { 'networkPolicies.allowFrom': [admin], 'search.allowFrom': [team] } },
    );
    const release = { podSelector: { matchLabels: { 'app.kubernetes.io/instance': 'obs' } } };
    const from = (name: string) => named(policies, 'NetworkPolicy', name).spec.ingress[0].from;
    expect(from('obs-search')).toEqual([release, admin, team]);
    expect(from('obs-consumer')).toEqual([release, admin]);
    expect(from('obs-controller')).toEqual([release, admin]);
  });

  it('passes helm lint --strict with every secured value set', () => {
    const res = helm([
      'lint',
      '--strict',
      CHART_DIR,
      ...setArgs({
        ...REQUIRED_VALUES,
        ...secured,
        'kafka.tls.clientCertSecret.name': 'observatory-user',
        'database.writer.user': 'w',
        'database.reader.user': 'r',
        'database.tls.mode': 'verify-full',
        'database.tls.caSecret.name': 'postgres-ca',
      }),
    ]);
    expect(res.stderr + res.stdout).toMatch(/1 chart\(s\) linted, 0 chart\(s\) failed/);
  });
});
