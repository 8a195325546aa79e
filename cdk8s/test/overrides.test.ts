/**
 * Names under every override (none, nameOverride, fullnameOverride, a release named after the
 * chart): the alerts fire for series of the Services the chart renders (promtool, with `job` and
 * `service` as the Prometheus Operator sets them: the Service's name), each ServiceMonitor and
 * NetworkPolicy selects the release's own Services and pods, the clients of the bundled Kafka and
 * PostgreSQL are given the addresses of their rendered Services and let out to their pods, and
 * search published outside keeps its metrics' Service name.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { type K8sObject, render } from './helm.js';

const scratch = mkdtempSync(join(tmpdir(), 'overrides-test-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

const NAMESPACE = 'observatory';
const SCRAPED = ['ingest', 'consumer', 'search', 'controller', 'postgres-exporter'];
const monitoringOn = {
  'monitoring.serviceMonitor.enabled': true,
  'monitoring.scrapeFrom.namespace': 'monitoring',
  'monitoring.prometheusRule.enabled': true,
  'monitoring.postgresExporter.enabled': true,
  'networkPolicies.enabled': true,
  // The bundled Kafka and PostgreSQL, so their Services and NetworkPolicies are checked too.
  'kafka.bundled.enabled': true,
  'database.bundled.enabled': true,
};

const scenarios: { name: string; release: string; values: Record<string, string> }[] = [
  { name: 'no override', release: 'obs', values: {} },
  { name: 'nameOverride', release: 'obs', values: { nameOverride: 'telemetry' } },
  { name: 'fullnameOverride', release: 'obs', values: { fullnameOverride: 'events' } },
  { name: 'a release named after the chart', release: 'observatory-prod', values: {} },
  {
    name: 'a fullnameOverride cut short for the longer names',
    release: 'obs',
    values: { fullnameOverride: 'a-very-long-name-given-by-the-platform-team-for-everything' },
  },
];

const of = (objects: K8sObject[], kind: string) => objects.filter((o) => o.kind === kind);
const component = (o: K8sObject) => o.metadata.labels?.['app.kubernetes.io/name'] ?? '';
const matches = (selector: Record<string, string>, labels: Record<string, string> = {}) =>
  Object.entries(selector).every(([k, v]) => labels[k] === v);

/** A label selector (matchLabels and `In` expressions) against a pod's labels. */
function selects(
  selector: {
    matchLabels?: Record<string, string>;
    matchExpressions?: { key: string; operator: string; values: string[] }[];
  },
  labels: Record<string, string> = {},
): boolean {
  const expressions = (selector.matchExpressions ?? []).every((e) => {
    if (e.operator !== 'In') throw new Error(`selector operator ${e.operator} is not modelled here`);
    return e.values.includes(labels[e.key] ?? '');
  });
  return expressions && matches(selector.matchLabels ?? {}, labels);
}

type Relabeling = {
  action?: string;
  sourceLabels?: string[];
  separator?: string;
  regex?: string;
  targetLabel: string;
  replacement?: string;
};

/**
 * `service` and `job` of a target of the Service `name` after the endpoint's relabelings (Prometheus'
 * `replace`, the regex anchored): the Prometheus Operator sets both to the Service's name first.
 */
function targetLabels(relabelings: Relabeling[], name: string): { service?: string; job?: string } {
  const labels: Record<string, string> = { __meta_kubernetes_service_name: name, service: name, job: name };
  for (const r of relabelings) {
    if ((r.action ?? 'replace') !== 'replace')
      throw new Error(`relabel action ${r.action} is not modelled here`);
    const source = (r.sourceLabels ?? []).map((l) => labels[l] ?? '').join(r.separator ?? ';');
    const match = new RegExp(`^(?:${r.regex ?? '(.*)'})$`).exec(source);
    if (match)
      labels[r.targetLabel] = (r.replacement ?? '$1').replace(
        /\$\{?(\d+)\}?/g,
        (_m, i) => match[Number(i)] ?? '',
      );
  }
  return { service: labels.service, job: labels.job };
}

/** `promtool test rules` of the rendered rules (without annotations: the names are under test). */
function promtool(objects: K8sObject[], tests: Record<string, unknown>[]): { ok: boolean; output: string } {
  const dir = mkdtempSync(join(scratch, 'case-'));
  const groups = of(objects, 'PrometheusRule')[0]?.spec.groups.map(
    (g: { rules: { annotations?: unknown }[] }) => ({
      ...g,
      rules: g.rules.map(({ annotations: _, ...rule }) => rule),
    }),
  );
  writeFileSync(join(dir, 'rules.yaml'), stringify({ groups }));
  writeFileSync(
    join(dir, 'test.yaml'),
    stringify({ rule_files: ['rules.yaml'], evaluation_interval: '1m', tests }),
  );
  const res = spawnSync('promtool', ['test', 'rules', join(dir, 'test.yaml')], { encoding: 'utf8' });
  return { ok: res.status === 0, output: res.stdout + res.stderr };
}

/** The labels the Prometheus Operator puts on a target of the Service `service`. */
const target = (service: string, instance: string) =>
  `job="${service}", service="${service}", namespace="${NAMESPACE}", instance="${instance}"`;

/** Unit tests of representative alerts, with series of the rendered Services. */
function alertTests(services: Record<string, string>): Record<string, unknown>[] {
  const { ingest, consumer } = services as Record<'ingest' | 'consumer', string>;
  return [
    {
      name: 'ObservatoryTargetDown fires for every rendered Service',
      interval: '1m',
      input_series: SCRAPED.map((c) => ({
        series: `up{${target(services[c] ?? c, `${c}:8080`)}}`,
        values: '1 0x10',
      })),
      alert_rule_test: [
        {
          eval_time: '8m',
          alertname: 'ObservatoryTargetDown',
          exp_alerts: SCRAPED.map((c) => ({
            exp_labels: {
              job: services[c],
              service: services[c],
              namespace: NAMESPACE,
              instance: `${c}:8080`,
              severity: 'critical',
            },
          })),
        },
      ],
    },
    {
      name: "PostgresDown fires for the rendered exporter's Service",
      interval: '1m',
      input_series: [
        { series: `pg_up{${target(services['postgres-exporter'] ?? '', 'pe:9187')}}`, values: '1 0x10' },
      ],
      alert_rule_test: [
        {
          eval_time: '8m',
          alertname: 'PostgresDown',
          exp_alerts: [
            {
              exp_labels: {
                job: services['postgres-exporter'],
                service: services['postgres-exporter'],
                namespace: NAMESPACE,
                instance: 'pe:9187',
                severity: 'critical',
              },
            },
          ],
        },
      ],
    },
    {
      name: "IngestProduceFailing fires for the rendered ingest Service's failures",
      interval: '1m',
      input_series: [
        {
          series: `broker_produce_latency_seconds_count{topic="t", outcome="failure", exported_service="ingest", ${target(ingest, 'i')}}`,
          values: '0 0+30x20',
        },
      ],
      alert_rule_test: [
        {
          eval_time: '9m',
          alertname: 'IngestProduceFailing',
          exp_alerts: [{ exp_labels: { namespace: NAMESPACE, topic: 't', severity: 'critical' } }],
        },
      ],
    },
    {
      name: "DeadLetterRateSustained fires for the rendered consumer Service's poison records",
      interval: '1m',
      input_series: [
        {
          series: `consume_records_poison_total{reason="invalid", exported_service="consumer", ${target(consumer, 'c')}}`,
          values: '0+5x60',
        },
      ],
      alert_rule_test: [
        {
          eval_time: '40m',
          alertname: 'DeadLetterRateSustained',
          exp_alerts: [{ exp_labels: { namespace: NAMESPACE, reason: 'invalid', severity: 'warning' } }],
        },
      ],
    },
  ];
}

describe.each(scenarios)('with $name', ({ release, values }) => {
  const objects = render({ ...monitoringOn, ...values }, { release, namespace: NAMESPACE });
  const services = Object.fromEntries(
    of(objects, 'Service')
      .filter((s) => SCRAPED.includes(component(s)))
      .map((s) => [component(s), s.metadata.name]),
  );
  const pods = objects.flatMap((o) => {
    const template = o.kind === 'CronJob' ? o.spec.jobTemplate.spec.template : o.spec?.template;
    const labels = o.kind === 'Pod' ? o.metadata.labels : template?.metadata?.labels;
    return labels ? [{ component: component(o), labels: labels as Record<string, string> }] : [];
  });
  /** The components whose pods `select` picks, each once. */
  const selectedComponents = (select: (labels: Record<string, string>) => boolean) => [
    ...new Set(pods.filter((p) => select(p.labels)).map((p) => p.component)),
  ];

  const serviceOf = (c: string) => of(objects, 'Service').find((s) => component(s) === c)?.metadata.name;
  const env = (container: { env: { name: string; value?: string }[] }) =>
    Object.fromEntries(container.env.map((e) => [e.name, e.value]));

  it('renders a Service for every scraped component', () => {
    expect(Object.keys(services).sort()).toEqual([...SCRAPED].sort());
  });

  it('fires the alerts for series of the rendered Services (promtool)', () => {
    const res = promtool(objects, alertTests(services));
    expect(res.output).toContain('SUCCESS');
    expect(res.ok, res.output).toBe(true);
  });

  it('has each ServiceMonitor select exactly its own Service', () => {
    const monitors = of(objects, 'ServiceMonitor');
    expect(monitors.map(component).sort()).toEqual([...SCRAPED].sort());
    for (const m of monitors) {
      expect(m.spec.namespaceSelector.matchNames).toEqual([NAMESPACE]);
      const selected = of(objects, 'Service').filter((s) =>
        matches(m.spec.selector.matchLabels, s.metadata.labels),
      );
      expect(selected.map((s) => s.metadata.name)).toEqual([services[component(m)]]);
    }
  });

  it("has each Service and component NetworkPolicy select its own component's pods", () => {
    for (const s of of(objects, 'Service')) {
      expect(
        selectedComponents((labels) => matches(s.spec.selector, labels)),
        s.metadata.name,
      ).toEqual([component(s)]);
    }
    const policies = of(objects, 'NetworkPolicy');
    for (const p of policies.filter((p) => component(p) !== 'monitoring')) {
      expect(
        selectedComponents((labels) => selects(p.spec.podSelector, labels)),
        p.metadata.name,
      ).toEqual([component(p)]);
    }
    const scrape = policies.find((p) => component(p) === 'monitoring');
    expect(selectedComponents((labels) => selects(scrape?.spec.podSelector ?? {}, labels)).sort()).toEqual(
      [...SCRAPED].sort(),
    );
  });

  it("points every client at the bundled servers' rendered Services", () => {
    const kafka = `${serviceOf('kafka')}.${NAMESPACE}.svc:9092`;
    const postgres = `${serviceOf('postgresql')}.${NAMESPACE}.svc:5432`;
    const settings = of(objects, 'ConfigMap').map((m) => m.data ?? {});
    const bootstraps = settings.flatMap((d) => d.BROKER_BOOTSTRAP_SERVERS ?? []);
    // ingest, consumer, controller
    expect(bootstraps).toEqual([kafka, kafka, kafka]);
    const urls = settings.flatMap((d) => d.DATABASE_URL ?? []);
    // consumer, search, jobs
    expect(urls).toEqual(Array(3).fill(`postgres://observatory@${postgres}/observatory`));
    const broker = of(objects, 'StatefulSet').find((o) => component(o) === 'kafka');
    expect(env(broker?.spec.template.spec.containers[0]).KAFKA_ADVERTISED_LISTENERS).toBe(
      `CLIENT://${kafka},INTERNAL://localhost:9094`,
    );
    const migration = of(objects, 'Job').find((o) => component(o) === 'migration')?.spec.template.spec;
    expect(env(migration.containers[0]).DATABASE_URL).toBe(`postgres://observatory@${postgres}/observatory`);
    expect(env(migration.initContainers[0]).PGHOST).toBe(serviceOf('postgresql'));
    const exporter = of(objects, 'Deployment').find((o) => component(o) === 'postgres-exporter');
    expect(env(exporter?.spec.template.spec.containers[0]).DATA_SOURCE_URI).toBe(
      `${postgres}/observatory?sslmode=disable&connect_timeout=5`,
    );
    const test = of(objects, 'Pod')[0]?.spec.containers[0];
    expect(env(test)).toMatchObject({
      INGEST_URL: `http://${services.ingest}:8080`,
      SEARCH_URL: `http://${services.search}:8080`,
    });
  });

  it("lets exactly the bundled servers' clients out to their pods, on their port", () => {
    const policies = of(objects, 'NetworkPolicy');
    const admitted = (server: string) =>
      policies.find((p) => component(p) === server)?.spec.ingress[0].from[0].podSelector.matchExpressions[0]
        .values;
    for (const [server, port] of [
      ['kafka', 9092],
      ['postgresql', 5432],
    ] as const) {
      const clients: string[] = [];
      for (const p of policies.filter((p) => component(p) !== server))
        for (const rule of p.spec.egress ?? []) {
          const peers: { podSelector?: Parameters<typeof selects>[0] }[] = rule.to ?? [];
          const toServer = peers.some(
            ({ podSelector }) =>
              podSelector && selectedComponents((labels) => selects(podSelector, labels)).join() === server,
          );
          if (!toServer) continue;
          expect(rule.ports, p.metadata.name).toEqual([{ protocol: 'TCP', port }]);
          clients.push(component(p));
        }
      expect(clients.sort(), server).toEqual([...admitted(server)].sort());
    }
  });

  it('publishes search outside with its http port alone; its metrics keep the Service name the alerts select', () => {
    const exposed = render(
      { ...monitoringOn, ...values, 'search.serviceType': 'LoadBalancer' },
      { release, namespace: NAMESPACE },
    );
    const outside = of(exposed, 'Service').find((s) => s.spec.type === 'LoadBalancer');
    expect(outside?.metadata.name).toBe(services.search);
    expect(outside?.spec.ports.map((p: { name: string }) => p.name)).toEqual(['http']);
    const monitor = of(exposed, 'ServiceMonitor').find((m) => component(m) === 'search');
    const [endpoint] = monitor?.spec.endpoints ?? [];
    // The Prometheus Operator scrapes the selected Services that have the endpoint's port.
    const scraped = of(exposed, 'Service').filter(
      (s) =>
        matches(monitor?.spec.selector.matchLabels, s.metadata.labels) &&
        s.spec.ports.some((p: { name: string }) => p.name === endpoint.port),
    );
    expect(scraped).toHaveLength(1);
    expect(scraped[0]?.spec.type ?? 'ClusterIP').toBe('ClusterIP');
    expect(scraped[0]?.metadata.name).not.toBe(services.search);
    // Its series are named after the search Service, as with a ClusterIP one (promtool above).
    expect(targetLabels(endpoint.relabelings, scraped[0]?.metadata.name ?? '')).toEqual({
      service: services.search,
      job: services.search,
    });
  });
});
