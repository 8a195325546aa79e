import { rmSync } from 'node:fs';
import { type PrometheusHandle, startPrometheus, tempDataDir } from '@event-observatory/devstack';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { asPromQL, dashboard, type Panel, rows } from './dashboard.js';
import { dashboardSchemaErrors } from './grafana-schema.js';

/** Every meter of the catalogue (`e2e/observability/catalogue.ts`) an operator watches, by family. */
const CATALOGUE = [
  'ingest_events_received_total',
  'ingest_events_rejected_total',
  'ingest_payload_bytes',
  'ingest_batch_events',
  'ingest_time_skew',
  'broker_produce_latency_seconds',
  'event_unrecognised_total',
  'http_server_requests_seconds',
  'auth_decisions_total',
  'consume_batch_size',
  'consume_records_persisted_total',
  'consume_records_duplicate_total',
  'consume_batch_latency_seconds',
  'consume_decode_duration_seconds',
  'consume_records_poison_total',
  'consume_group_lag',
  'consume_running',
  'consume_lifecycle_commands_total',
  'consume_checkpoint_divergence',
  'dlq_depth',
  'dlq_oldest_age_seconds',
  'dlq_replay_operations_total',
  'dlq_replay_records_total',
  'maintenance_job_duration_seconds',
  'maintenance_partitions_created_total',
  'maintenance_partitions_detached_total',
  'maintenance_partitions_headroom',
  'maintenance_partitions_blocked',
  'maintenance_last_success_timestamp_seconds',
  'partition_default_rows',
  'search_query_duration_seconds',
  'search_results_returned',
  'search_pages_total',
  'search_facets_capped_total',
  'tail_connections',
  'tail_events_delivered_total',
  'rollup_staleness',
  'pool_connections_active',
  'pool_connections_idle',
  'pool_connections_pending',
  'pool_connections_max',
  'pool_connections_acquire_seconds',
  'pool_connections_usage_seconds',
  'pool_connections_timeout_total',
  'process_cpu_seconds_total',
  'process_resident_memory_bytes',
  'process_start_time_seconds',
  'nodejs_heap_size_used_bytes',
  'nodejs_eventloop_lag_p99_seconds',
  'nodejs_gc_duration_seconds',
  'pg_up',
  'up',
];

/** Grafana's reference to the datasource variable. */
// biome-ignore lint/suspicious/noTemplateCurlyInString: Grafana's syntax, not a template literal
const DATASOURCE_REF = '${datasource}';
/** The release's Services: `${release}` is their prefix (empty for `make dev`'s targets). */
// biome-ignore lint/suspicious/noTemplateCurlyInString: Grafana's syntax, not a template literal
const RELEASE_MATCHER = 'service=~"${release}(ingest|consumer|search|controller|postgres-exporter)"';
const panels = dashboard.panels.filter((p) => p.type !== 'row');
const exprs = panels.flatMap((p) => (p.targets ?? []).map((t) => t.expr));

describe('the Event observatory dashboard', () => {
  it('is named Event observatory and has the six rows of the spec, the JVM row as runtime', () => {
    expect(dashboard.title).toBe('Event observatory');
    expect(rows().map((r) => r.title)).toEqual([
      'Fleet',
      'Ingest',
      'Consume',
      'Search and HTTP',
      'Connection pools',
      'Runtime',
    ]);
    for (const row of rows()) expect(row.panels.length, row.title).toBeGreaterThan(0);
  });

  it('takes its Prometheus from a datasource variable in every panel and query', () => {
    expect(dashboard.templating.list).toContainEqual(
      expect.objectContaining({ name: 'datasource', type: 'datasource', query: 'prometheus' }),
    );
    for (const p of panels) {
      expect(p.datasource, p.title).toEqual({ type: 'prometheus', uid: DATASOURCE_REF });
      for (const t of p.targets ?? []) expect(t.datasource?.uid, p.title).toBe(DATASOURCE_REF);
    }
  });

  it('has namespace and release variables read from the targets of the platform', () => {
    const byName = Object.fromEntries(dashboard.templating.list.map((v) => [v.name, v]));
    expect(byName.namespace).toMatchObject({
      type: 'query',
      query: { query: expect.stringMatching(/^label_values\(up\{.*\}, namespace\)$/) },
    });
    expect(byName.release).toMatchObject({
      type: 'query',
      query: { query: expect.stringContaining('namespace=~"$namespace"') },
    });
    // The release's value is the Services' prefix (`obs-` of obs-ingest), its text the release name.
    const regex = new RegExp(String(byName.release?.regex).slice(1, -1));
    expect('obs-ingest'.replace(regex, '$<value>|$<text>')).toBe('obs-|obs');
    expect(regex.test('ingest')).toBe(false);
  });

  it('selects by the namespace and release variables in every query', () => {
    for (const expr of exprs) {
      // Every metric name (an identifier that is not a function, keyword or grouping) has a selector
      // holding both variables (ALERTS: the namespace; its labels are the alerts', not the scrape's).
      const bare = expr.replace(/\b(by|on)\s*\([^)]*\)/g, '').replace(/\[[^\]]*\]/g, '');
      const metrics = [
        ...bare.matchAll(/\b([a-zA-Z_:][\w:]*)\b(?!\s*\(|\s*by\b)(\{(?:[^{}]|\$\{\w+\})*\})?/g),
      ].filter(
        ([, name]) =>
          !['or', 'unless', 'and', 'vector'].includes(name as string) && !/^\d/.test(name as string),
      );
      expect(metrics.length, expr).toBeGreaterThan(0);
      for (const [, name, selector] of metrics) {
        expect(selector ?? '', `${expr}: ${name}`).toContain('namespace=~"$namespace"');
        if (name !== 'ALERTS') expect(selector, `${expr}: ${name}`).toContain(RELEASE_MATCHER);
      }
    }
  });

  it("is valid against Grafana's published dashboard schema (@grafana/schema), which refuses a misspelt key", () => {
    expect(dashboardSchemaErrors(dashboard)).toEqual([]);
    const [first, ...rest] = dashboard.panels;
    const errors = dashboardSchemaErrors({
      ...dashboard,
      panels: [{ ...first, gridPoss: first?.gridPos }, ...rest],
    });
    expect(errors.join('\n')).toMatch(/'"gridPoss"' does not exist/);
  }, 60_000);

  it('gives every panel a query, a unit and thresholds, with unique ids and no overlap', () => {
    expect(new Set(dashboard.panels.map((p) => p.id)).size).toBe(dashboard.panels.length);
    for (const p of panels) {
      expect(p.targets?.length, p.title).toBeGreaterThan(0);
      expect(p.fieldConfig?.defaults.unit, p.title).toBeTruthy();
      expect(p.fieldConfig?.defaults.thresholds?.steps.length, p.title).toBeGreaterThan(0);
    }
    const overlaps = (a: Panel, b: Panel) =>
      a.gridPos.x < b.gridPos.x + b.gridPos.w &&
      b.gridPos.x < a.gridPos.x + a.gridPos.w &&
      a.gridPos.y < b.gridPos.y + b.gridPos.h &&
      b.gridPos.y < a.gridPos.y + a.gridPos.h;
    for (const [i, a] of dashboard.panels.entries()) {
      expect(a.gridPos.x + a.gridPos.w, a.title).toBeLessThanOrEqual(24);
      for (const b of dashboard.panels.slice(i + 1))
        expect(overlaps(a, b), `${a.title} / ${b.title}`).toBe(false);
    }
  });

  it.each(CATALOGUE)('graphs %s', (meter) => {
    expect(exprs.some((e) => new RegExp(`\\b${meter}(_bucket|_count|_sum|_max)?\\b`).test(e))).toBe(true);
  });
});

describe('every panel query, on a real Prometheus', () => {
  const dataDir = tempDataDir('prometheus');
  let prometheus: PrometheusHandle;
  beforeAll(async () => {
    prometheus = await startPrometheus({ dataDir });
  });
  afterAll(async () => {
    await prometheus?.stop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('rejects a query that does not parse, so the checks below can fail', async () => {
    const { status, body } = await prometheus.query('sum by (le (rate(x[1m]))');
    expect(status).toBe(400);
    expect(body.errorType).toBe('bad_data');
  });

  it.each(panels.map((p) => [p.title, p] as const))('%s parses and evaluates', async (_, panel) => {
    for (const t of panel.targets ?? []) {
      const { status, body } = await prometheus.query(asPromQL(t.expr));
      expect({ expr: t.expr, status, error: body.error }).toEqual({
        expr: t.expr,
        status: 200,
        error: undefined,
      });
      expect(body.status).toBe('success');
    }
  });
});
