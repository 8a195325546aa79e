/**
 * The monitoring values: ServiceMonitors and PrometheusRule as growable objects, the
 * rules scoped to the release (promtool proves another release's `up == 0` stays quiet), absolute
 * runbook URLs, search links under search.publicUrl, the Grafana sidecar label, postgres_exporter, and the NetworkPolicy that admits
 * Prometheus' scrape.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { type K8sObject, REQUIRED_VALUES, render, renderError, setArgs } from './helm.js';

const scratch = mkdtempSync(join(tmpdir(), 'monitoring-test-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

const on = {
  'monitoring.serviceMonitor.enabled': true,
  'monitoring.scrapeFrom.namespace': 'monitoring',
  'monitoring.prometheusRule.enabled': true,
  'monitoring.dashboard.enabled': true,
};
const of = (objects: K8sObject[], kind: string) => objects.filter((o) => o.kind === kind);
type Rule = { alert: string; expr: string; for?: string; annotations: Record<string, string> };
const rulesOf = (objects: K8sObject[]): Rule[] =>
  (of(objects, 'PrometheusRule')[0]?.spec.groups ?? []).flatMap((g: { rules: Rule[] }) => g.rules);

/** `promtool test rules` of the rendered PrometheusRule against one case; its output. */
function promtoolCase(objects: K8sObject[], test: Record<string, unknown>): { ok: boolean; output: string } {
  const dir = mkdtempSync(join(scratch, 'case-'));
  writeFileSync(
    join(dir, 'rules.yaml'),
    stringify({ groups: of(objects, 'PrometheusRule')[0]?.spec.groups }),
  );
  writeFileSync(
    join(dir, 'test.yaml'),
    stringify({
      rule_files: ['rules.yaml'],
      evaluation_interval: '1m',
      tests: [{ interval: '1m', ...test }],
    }),
  );
  const res = spawnSync('promtool', ['test', 'rules', join(dir, 'test.yaml')], { encoding: 'utf8' });
  return { ok: res.status === 0, output: res.stdout + res.stderr };
}

describe('ServiceMonitors', () => {
  const objects = render({
    ...on,
    'monitoring.serviceMonitor.labels.release': 'kps',
    'monitoring.serviceMonitor.interval': '30s',
    'monitoring.serviceMonitor.scrapeTimeout': '20s',
    'monitoring.serviceMonitor.namespace': 'monitoring',
  });

  it('carry the labels, interval, timeout and namespace of monitoring.serviceMonitor', () => {
    const monitors = of(objects, 'ServiceMonitor');
    expect(monitors.map((m) => m.metadata.name).sort()).toEqual([
      'obs-consumer',
      'obs-controller',
      'obs-ingest',
      'obs-search',
    ]);
    for (const m of monitors) {
      expect(m.metadata.labels?.release).toBe('kps');
      expect(m.metadata.namespace).toBe('monitoring');
      // In another namespace, the monitor still selects the release's Services only.
      expect(m.spec.namespaceSelector).toEqual({ matchNames: ['observatory'] });
      // monitoring/scrape's endpoint, with the values' interval and timeout.
      expect(m.spec.endpoints).toEqual([
        {
          port: 'metrics',
          path: '/metrics',
          scheme: 'http',
          interval: '30s',
          scrapeTimeout: '20s',
          honorLabels: false,
          honorTimestamps: true,
          relabelings: [],
          metricRelabelings: [],
        },
      ]);
    }
  });

  it('take relabelings for every endpoint', () => {
    const relabeled = render({
      ...on,
      'monitoring.serviceMonitor.relabelings[0].targetLabel': 'cluster',
      'monitoring.serviceMonitor.relabelings[0].replacement': 'eu',
    });
    for (const m of of(relabeled, 'ServiceMonitor'))
      expect(m.spec.endpoints[0].relabelings).toEqual([{ targetLabel: 'cluster', replacement: 'eu' }]);
  });
});

describe('the PrometheusRule', () => {
  const objects = render({
    ...on,
    'monitoring.prometheusRule.labels.release': 'kps',
    'monitoring.prometheusRule.for.IngestProduceFailing': '30s',
    'monitoring.runbookBaseUrl': 'https://runbooks.example/observatory',
  });
  const rules = rulesOf(objects);

  it("scopes every rule to the release's namespace and Services", () => {
    expect(rules).toHaveLength(14);
    for (const r of rules) {
      expect(r.expr, r.alert).toContain(
        'namespace="observatory", service=~"obs-ingest|obs-consumer|obs-search|obs-controller|obs-postgres-exporter"',
      );
      expect(r.expr, r.alert).not.toMatch(/service=~"ingest/);
    }
    expect(of(objects, 'PrometheusRule')[0]?.metadata.labels?.release).toBe('kps');
  });

  it('takes a selector of its own instead (a Prometheus that labels differently)', () => {
    const custom = rulesOf(
      render({ ...on, 'monitoring.prometheusRule.selector': 'cluster="eu"\\, job=~"obs-.*"' }),
    );
    for (const r of custom) expect(r.expr, r.alert).toContain('{cluster="eu", job=~"obs-.*"');
  });

  it('links each alert to its runbook section under monitoring.runbookBaseUrl', () => {
    for (const r of rules)
      expect(r.annotations.runbook_url).toBe(`https://runbooks.example/observatory#${r.alert.toLowerCase()}`);
    expect(() => render({ ...on, 'monitoring.runbookBaseUrl': 'monitoring/RUNBOOK.md' })).toThrow(
      /runbookBaseUrl/,
    );
  });

  it('links the alerts that map to a search to it under search.publicUrl, and none without it', () => {
    const linked = rulesOf(render({ ...on, 'search.publicUrl': 'https://search.example.com/' }));
    const urls = Object.fromEntries(
      linked.filter((r) => r.annotations.search_url).map((r) => [r.alert, r.annotations.search_url]),
    );
    expect(urls).toEqual({ ConsumerLagGrowing: 'https://search.example.com/events?range=1h' });
    for (const r of [...linked, ...rules]) expect(r.annotations, r.alert).not.toHaveProperty('search_path');
    for (const r of rules) expect(r.annotations, r.alert).not.toHaveProperty('search_url');
  });

  it('shortens a `for:` through monitoring.prometheusRule.for, the others as the spec says', () => {
    const fors = Object.fromEntries(rules.map((r) => [r.alert, r.for]));
    expect(fors.IngestProduceFailing).toBe('30s');
    expect(fors.DefaultPartitionNotEmpty).toBe('5m');
    expect(fors.PartitionMaintenanceNotRunning).toBeUndefined();
  });

  it("does not fire for another release's or another namespace's down target (promtool)", () => {
    const down = (labels: string) => ({ series: `up{${labels}, instance="10.0.0.1:8080"}`, values: '0x20' });
    const quiet = promtoolCase(objects, {
      input_series: [
        down('namespace="observatory", service="other-ingest", job="other-ingest"'),
        down('namespace="shop", service="obs-ingest", job="obs-ingest"'),
      ],
      alert_rule_test: [{ eval_time: '15m', alertname: 'ObservatoryTargetDown', exp_alerts: [] }],
    });
    expect(quiet.output).toContain('SUCCESS');
    const ours = promtoolCase(objects, {
      input_series: [down('namespace="observatory", service="obs-ingest", job="obs-ingest"')],
      alert_rule_test: [{ eval_time: '15m', alertname: 'ObservatoryTargetDown', exp_alerts: [] }],
    });
    // Our own down target does fire: the expectation of silence fails.
    expect(ours.ok).toBe(false);
    expect(ours.output).toContain('ObservatoryTargetDown');
  });
});

describe('the dashboard ConfigMap', () => {
  it('carries the Grafana sidecar label of monitoring.dashboard.labels', () => {
    const [byDefault] = of(render(on), 'ConfigMap').filter((c) => c.metadata.name === 'obs-dashboard');
    expect(byDefault?.metadata.labels?.grafana_dashboard).toBe('1');
    const [custom] = of(
      render({ ...on, 'monitoring.dashboard.labels.grafana_dashboard': 'observatory' }),
      'ConfigMap',
    ).filter((c) => c.metadata.name === 'obs-dashboard');
    expect(custom?.metadata.labels?.grafana_dashboard).toBe('observatory');
  });
});

describe('postgres_exporter', () => {
  it('is off by default, and on with monitoring.postgresExporter.enabled or database.bundled.enabled', () => {
    const names = (objects: K8sObject[]) =>
      objects.filter((o) => o.metadata.name === 'obs-postgres-exporter').map((o) => o.kind);
    expect(names(render(on))).toEqual([]);
    expect(names(render({ ...on, 'monitoring.postgresExporter.enabled': true })).sort()).toEqual([
      'Deployment',
      'NetworkPolicy',
      'Service',
      'ServiceAccount',
      'ServiceMonitor',
    ]);
    expect(names(render({ ...on, 'monitoring.postgresExporter.enabled': false }))).toEqual([]);
  });

  it('logs in as its own role, the password from a Secret, to the host and database of database.url', () => {
    const objects = render({
      ...on,
      'monitoring.postgresExporter.enabled': true,
      'database.url': 'jdbc:postgresql://owner@db.example:5432/events?ssl=true',
      'database.tls.mode': 'verify-full',
      'monitoring.postgresExporter.passwordSecret.name': 'monitor',
    });
    const deployment = objects.find(
      (o) => o.kind === 'Deployment' && o.metadata.name === 'obs-postgres-exporter',
    );
    const env = deployment?.spec.template.spec.containers[0].env;
    expect(env).toEqual([
      {
        name: 'DATA_SOURCE_URI',
        value: 'db.example:5432/events?ssl=true&sslmode=verify-full&connect_timeout=5',
      },
      { name: 'DATA_SOURCE_USER', value: 'observatory_monitor' },
      { name: 'DATA_SOURCE_PASS', valueFrom: { secretKeyRef: { name: 'monitor', key: 'MONITOR_PASSWORD' } } },
    ]);
    expect(deployment?.spec.template.spec.securityContext.runAsNonRoot).toBe(true);
    // No CA named: nothing mounted but /tmp.
    expect(deployment?.spec.template.spec.volumes.map((v: { name: string }) => v.name)).toEqual(['tmp']);
    // The bundled PostgreSQL serves no TLS, which the exporter's driver asks for unless told not to;
    // a connection attempt is bounded (a SYN lost while the NetworkPolicies settle held it 2 min).
    const bundled = render({ 'database.bundled.enabled': true, 'kafka.bundled.enabled': true }).find(
      (o) => o.kind === 'Deployment' && o.metadata.name === 'obs-postgres-exporter',
    );
    expect(bundled?.spec.template.spec.containers[0].env[0]).toEqual({
      name: 'DATA_SOURCE_URI',
      value: 'obs-postgresql.observatory.svc:5432/observatory?sslmode=disable&connect_timeout=5',
    });
  });
});

describe('postgres_exporter over TLS', () => {
  it("verifies the server with database.tls.caSecret's CA, mounted as in every other database client", () => {
    const objects = render({
      ...on,
      'monitoring.postgresExporter.enabled': true,
      'database.url': 'postgres://db.example:5432/events',
      'database.tls.mode': 'verify-full',
      'database.tls.caSecret.name': 'postgres-ca',
    });
    const pod = (name: string) =>
      objects.find((o) => o.kind === 'Deployment' && o.metadata.name === name)?.spec.template.spec;
    const exporter = pod('obs-postgres-exporter');
    expect(exporter.containers[0].env[0]).toEqual({
      name: 'DATA_SOURCE_URI',
      value:
        'db.example:5432/events?sslmode=verify-full&sslrootcert=/etc/observatory/postgres/ca.crt&connect_timeout=5',
    });
    // The same volume and mount as the consumer's, whose URL names the same file.
    const consumer = pod('obs-consumer');
    const caVolume = (p: typeof exporter) =>
      p.volumes.find((v: { name: string }) => v.name === 'postgres-ca');
    const caMount = (p: typeof exporter) =>
      p.containers[0].volumeMounts.find((m: { name: string }) => m.name === 'postgres-ca');
    expect(caVolume(exporter)).toEqual({
      name: 'postgres-ca',
      secret: { secretName: 'postgres-ca', defaultMode: 0o440, items: [{ key: 'ca.crt', path: 'ca.crt' }] },
    });
    expect(caVolume(exporter)).toEqual(caVolume(consumer));
    expect(caMount(exporter)).toEqual({
      name: 'postgres-ca',
      mountPath: '/etc/observatory/postgres',
      readOnly: true,
    });
    expect(caMount(exporter)).toEqual(caMount(consumer));
    const consumerUrl = objects.find((o) => o.kind === 'ConfigMap' && o.metadata.name === 'obs-consumer')
      ?.data?.DATABASE_URL;
    expect(consumerUrl).toContain('sslrootcert=/etc/observatory/postgres/ca.crt');
  });
});

describe('the scrape NetworkPolicy', () => {
  const policy = (objects: K8sObject[]) =>
    objects.find((o) => o.kind === 'NetworkPolicy' && o.metadata.name === 'obs-prometheus-scrape');

  it("admits Prometheus' pods of the named namespace to every component's metrics port and no other", () => {
    const objects = render({ ...on, 'monitoring.scrapeFrom.namespace': 'prom-system' });
    const p = policy(objects);
    expect(p?.spec).toEqual({
      podSelector: {
        matchLabels: { 'app.kubernetes.io/instance': 'obs' },
        matchExpressions: [
          {
            key: 'app.kubernetes.io/name',
            operator: 'In',
            values: ['ingest', 'consumer', 'search', 'controller', 'postgres-exporter'],
          },
        ],
      },
      policyTypes: ['Ingress'],
      ingress: [
        {
          from: [
            {
              namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'prom-system' } },
              podSelector: { matchLabels: { 'app.kubernetes.io/name': 'prometheus' } },
            },
          ],
          ports: [{ protocol: 'TCP', port: 'metrics' }],
        },
      ],
    });
    // No other policy names that namespace or opens a metrics port: Prometheus reaches nothing else.
    for (const other of objects.filter((o) => o.kind === 'NetworkPolicy' && o !== p)) {
      expect(JSON.stringify(other.spec), other.metadata.name).not.toContain('prom-system');
      expect(JSON.stringify(other.spec), other.metadata.name).not.toContain('"metrics"');
    }
    // The port it opens is the one serving /metrics: every scraped container's `metrics`, which
    // the ServiceMonitors scrape.
    for (const d of objects.filter((o) => o.kind === 'Deployment')) {
      const names = d.spec.template.spec.containers[0].ports.map((port: { name: string }) => port.name);
      expect(names, d.metadata.name).toContain('metrics');
    }
  });

  it('fails to render without monitoring.scrapeFrom.namespace, saying which value is missing', () => {
    const { 'monitoring.scrapeFrom.namespace': _named, ...unnamed } = on;
    const error = renderError(['--namespace', 'observatory', ...setArgs({ ...REQUIRED_VALUES, ...unnamed })]);
    expect(error).toContain('monitoring.scrapeFrom.namespace is required');
    // Without the policy (NetworkPolicies off) nothing needs it.
    expect(() => render({ ...unnamed, 'networkPolicies.enabled': false })).not.toThrow();
  });

  it('exists only with the ServiceMonitors and the NetworkPolicies on', () => {
    expect(policy(render({}))).toBeUndefined();
    expect(policy(render({ ...on, 'networkPolicies.enabled': false }))).toBeUndefined();
  });
});
