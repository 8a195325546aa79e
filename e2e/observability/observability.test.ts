/**
 * The live observability checks on the local stack: every dashboard panel's query
 * returns data from a real Prometheus scraping ingest, consumer, search and postgres_exporter under a
 * little traffic; the 14 rules load and evaluate; and each service's /metrics matches the
 * catalogue (`catalogue.ts`: names, types, tags, ladders, closed values, caps).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { repoRoot } from '@event-observatory/devstack';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  CLOSED_VALUES,
  CONSUMER_METERS,
  INGEST_METERS,
  isRuntimeMeter,
  LADDER_METERS,
  type Meter,
  REASONS,
  SEARCH_METERS,
} from './catalogue.js';
import { type Family, parseExposition, tagNames } from './exposition.js';
import { DISTINCT_TYPES, type ObservedStack, startObservedStack } from './stack.js';

interface Panel {
  type: string;
  title: string;
  targets?: { expr: string }[];
}
const dashboard = JSON.parse(
  readFileSync(join(repoRoot(), 'monitoring', 'dashboards', 'event-observatory.json'), 'utf8'),
) as { panels: Panel[] };
const panels = dashboard.panels.filter((p) => p.type !== 'row');

let observed: ObservedStack;
const scrapes: Record<string, Map<string, Family>> = {};

beforeAll(async () => {
  observed = await startObservedStack();
  for (const [service, url] of Object.entries(observed.metricsUrls))
    scrapes[service] = parseExposition(await (await fetch(`${url}/metrics`)).text());
}, 240_000);

afterAll(async () => {
  await observed?.close();
});

/** Grafana's reference to the release variable. */
// biome-ignore lint/suspicious/noTemplateCurlyInString: Grafana's syntax, not a template literal
const RELEASE_VARIABLE = '${release}';

describe('the Event observatory dashboard on the live stack', () => {
  it.each(panels.map((p) => [p.title, p] as const))('%s returns data', async (_, panel) => {
    for (const { expr } of panel.targets ?? []) {
      // Locally the targets have no namespace and no release prefix: both variables are empty.
      const promql = expr
        .replaceAll('$__rate_interval', '1m')
        .replaceAll('$__range', '1h')
        .replaceAll('$namespace', '')
        .replaceAll(RELEASE_VARIABLE, '');
      const { status, body } = await observed.prometheus.query(promql);
      expect({ expr, status, error: body.error }).toEqual({ expr, status: 200, error: undefined });
      expect(body.data?.result.length ?? 0, expr).toBeGreaterThan(0);
    }
  });
});

describe('the 14 alert rules on the live stack', () => {
  it('load into Prometheus and evaluate without error, none firing on a healthy stack', async () => {
    const res = await fetch(`${observed.prometheus.url}/api/v1/rules`);
    const body = (await res.json()) as {
      data: {
        groups: {
          name: string;
          rules: { name: string; health: string; lastError?: string; state: string }[];
        }[];
      };
    };
    const rules = body.data.groups.flatMap((g) => g.rules);
    expect(body.data.groups.map((g) => g.name).sort()).toEqual([
      'availability',
      'maintenance',
      'pipeline',
      'storage',
    ]);
    expect(rules).toHaveLength(14);
    for (const r of rules)
      expect({ rule: r.name, health: r.health, error: r.lastError ?? '' }).toEqual({
        rule: r.name,
        health: 'ok',
        error: '',
      });
    expect(rules.filter((r) => r.state === 'firing').map((r) => r.name)).toEqual([]);
  });

  it('see the scraped tags renamed as the rules expect: exported_service and exported_job', async () => {
    const { body } = await observed.prometheus.query(
      'count by (exported_service, exported_job) (maintenance_last_success_timestamp_seconds)',
    );
    expect(body.data?.result.map((r) => r.metric)).toEqual(
      expect.arrayContaining([
        { exported_service: 'consumer', exported_job: 'partition-maintenance' },
        { exported_service: 'consumer', exported_job: 'rollup-refresh' },
      ]),
    );
  });
});

function conformance(service: 'ingest' | 'consumer' | 'search', meters: Meter[]) {
  describe(`the ${service} /metrics against the catalogue`, () => {
    const family = (name: string) => scrapes[service]?.get(name);

    it.each(meters.map((m) => [m.name, m] as const))('%s has its type and tags', (_, meter) => {
      const f = family(meter.name);
      expect(f?.type, meter.name).toBe(meter.type);
      expect(f!.samples.length).toBeGreaterThan(0);
      expect(tagNames(f!)).toEqual([...meter.labels].sort());
      if (meter.max) expect(tagNames(family(`${meter.name}_max`)!)).toEqual([...meter.labels].sort());
      if (meter.ladder) {
        const les = [
          ...new Set(f!.samples.filter((s) => s.name.endsWith('_bucket')).map((s) => s.labels.le)),
        ].map((le) => (le === '+Inf' ? Number.POSITIVE_INFINITY : Number(le)));
        expect(les.every((le, i) => i === 0 || le > les[i - 1]!)).toBe(true);
        expect([les[0], les.at(-2), les.at(-1)]).toEqual([...meter.ladder, Number.POSITIVE_INFINITY]);
      }
    });

    it('publishes _bucket only for the meters of the ladder table', () => {
      const withBuckets = [...scrapes[service]!.entries()]
        .filter(([name, f]) => !isRuntimeMeter(name) && f.samples.some((s) => s.name.endsWith('_bucket')))
        .map(([name]) => name);
      expect(withBuckets.length).toBeGreaterThan(0);
      for (const name of withBuckets) expect(LADDER_METERS, name).toContain(name);
    });

    it('tags every sample with service and version, except nodejs_version_info whose own version wins', () => {
      for (const [name, f] of scrapes[service]!)
        for (const s of f.samples) {
          const version = name === 'nodejs_version_info' ? process.version : 'e2e';
          expect({ name, ...s.labels }).toMatchObject({ name, service, version });
        }
    });

    it('uses only the closed tag values of the spec', () => {
      for (const [name, f] of scrapes[service]!)
        for (const s of f.samples) {
          for (const [tag, values] of Object.entries(CLOSED_VALUES))
            if (s.labels[tag] !== undefined) expect(values, `${name} ${tag}`).toContain(s.labels[tag]);
          const reasons = REASONS[name];
          if (reasons && s.labels.reason !== undefined) expect(reasons, name).toContain(s.labels.reason);
        }
    });
  });
}

conformance('ingest', INGEST_METERS);
conformance('consumer', CONSUMER_METERS);
conformance('search', SEARCH_METERS);

describe('catalogue rules across services', () => {
  it('the consumer registers no HTTP timer at all', () => {
    expect(scrapes.consumer?.has('http_server_requests_seconds')).toBe(false);
    expect(scrapes.ingest?.has('http_server_requests_seconds')).toBe(true);
    expect(scrapes.search?.has('http_server_requests_seconds')).toBe(true);
  });

  it.each([
    ['ingest', 'ingest_events_received_total'],
    ['consumer', 'consume_records_persisted_total'],
  ] as const)('%s keeps at most 50 type values of %s although more were sent', (service, name) => {
    const types = new Set(scrapes[service]!.get(name)!.samples.map((s) => s.labels.type));
    expect(DISTINCT_TYPES + 1).toBeGreaterThan(50);
    expect(types.size).toBe(50);
  });
});
