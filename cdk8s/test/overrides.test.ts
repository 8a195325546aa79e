/**
 * Names under every override (none, nameOverride, fullnameOverride, a release named after the
 * chart): the alerts fire for series of the Services the chart renders (promtool, with `job` and
 * `service` as the Prometheus Operator sets them: the Service's name), and each ServiceMonitor and
 * NetworkPolicy selects the release's own Services and pods.
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
});
