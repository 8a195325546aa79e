import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { alertsByGroup, promtool, ruleFiles, ruleTestCases, runRuleTestCase } from './promtool.js';

/** The alerts' contract: each one's group and `for` duration (none where it has none). */
const TABLE: Record<string, [group: string, forDuration: string | undefined]> = {
  ObservatoryTargetDown: ['availability', '5m'],
  PostgresDown: ['availability', '5m'],
  PartitionHeadroomLow: ['storage', '15m'],
  PartitionHeadroomExhausted: ['storage', '5m'],
  DefaultPartitionNotEmpty: ['storage', '5m'],
  PartitionCreationBlocked: ['storage', '15m'],
  PartitionMaintenanceNotRunning: ['maintenance', undefined],
  RollupRefreshNotRunning: ['maintenance', undefined],
  MaintenanceJobFailing: ['maintenance', '30m'],
  RollupRefreshApproachingInterval: ['maintenance', undefined],
  DeadLetterRateSustained: ['pipeline', '15m'],
  ConsumerLagGrowing: ['pipeline', '10m'],
  IngestProduceFailing: ['pipeline', '5m'],
  DeadLetterAgingUnreplayed: ['pipeline', '15m'],
};

/**
 * The alerts whose condition a search of the stored events shows, and that search. Dead letters,
 * ingest's refusals and failed produces never reach the store, so no search shows them.
 */
const SEARCH_PATHS: Record<string, string> = {
  ConsumerLagGrowing: '/events?range=1h',
};

interface Rule {
  alert: string;
  expr: string;
  for?: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
}

/** The scope of every selector (cdk8s/src/constructs/monitoring.ts LOCAL_SCOPE): `make dev` labels. */
const SCOPE = 'service=~"ingest|consumer|search|controller|postgres-exporter"';

const rules = ruleFiles().flatMap(
  (path) => (parse(readFileSync(path, 'utf8')) as { groups: { rules: Rule[] }[] }).groups[0]?.rules ?? [],
);
const cases = ruleTestCases();

describe('alert rules', () => {
  it('pass promtool check rules', async () => {
    const result = await promtool('check', 'rules', ...ruleFiles());
    expect(result.output).toContain('SUCCESS');
    expect(result.ok, result.output).toBe(true);
  });

  it('are the 14 alerts of the contract, in their groups and with their for durations', () => {
    const groups = Object.fromEntries(alertsByGroup());
    const expected: Record<string, string[]> = {};
    for (const [alert, [group]] of Object.entries(TABLE))
      expected[group] = [...(expected[group] ?? []), alert];
    expect(groups).toEqual(expected);
    expect(Object.fromEntries(rules.map((r) => [r.alert, r.for]))).toEqual(
      Object.fromEntries(Object.entries(TABLE).map(([alert, [, d]]) => [alert, d])),
    );
  });

  it('carry a severity, a summary, a description and a runbook section that exists', () => {
    const runbook = readFileSync(new URL('../RUNBOOK.md', import.meta.url), 'utf8');
    for (const r of rules) {
      expect(['critical', 'warning'], r.alert).toContain(r.labels?.severity);
      expect(r.annotations?.summary, r.alert).toBeTruthy();
      expect(r.annotations?.description, r.alert).toBeTruthy();
      // Absolute: Alertmanager and Grafana show it as a link (the chart swaps the base for its value).
      expect(r.annotations?.runbook_url, r.alert).toMatch(
        new RegExp(`^https://[^#]+/monitoring/RUNBOOK\\.md#${r.alert.toLowerCase()}$`),
      );
      expect(runbook, r.alert).toContain(`\n## ${r.alert}\n`);
      // Each section: what it means, the first command, how to resolve it.
      const section = runbook.split(`\n## ${r.alert}\n`)[1]?.split('\n## ')[0] ?? '';
      expect(section, r.alert).toMatch(/^\*\*Means\*\*: \S/m);
      expect(section, r.alert).toMatch(/^\*\*First\*\*: `[^`]+`$/m);
      expect(section, r.alert).toMatch(/^\*\*Resolve\*\*:/m);
    }
  });

  it('link to a search exactly where the condition shows in the stored events (the chart makes it search_url)', () => {
    const paths = Object.fromEntries(
      rules.filter((r) => r.annotations?.search_path).map((r) => [r.alert, r.annotations?.search_path]),
    );
    expect(paths).toEqual(SEARCH_PATHS);
    // A path of the search page with its parameters: the chart puts search.publicUrl before it.
    for (const path of Object.values(paths)) expect(path).toMatch(/^\/events\?[\w=&.:%-]+$/);
  });

  it("select only the platform's series: every selector carries the scope the chart swaps for the release's", () => {
    for (const r of rules) {
      // Selectors emptied and groupings and ranges dropped, every identifier left that is not a
      // function or keyword is a metric name, and must have had a selector; each selector holds the scope.
      const selectors = r.expr.match(/\{[^}]*\}/g) ?? [];
      for (const s of selectors) expect(s, r.alert).toContain(SCOPE);
      const bare = r.expr
        .replace(/\{[^}]*\}/g, '{}')
        .replace(/\b(by|on)\s*\([^)]*\)/g, '')
        .replace(/\[[^\]]*\]/g, '');
      const names = [...bare.matchAll(/\b([a-zA-Z_:][\w:]*)\b(?!\s*\()(\{\})?/g)].filter(
        ([, name]) => !['or', 'unless', 'and'].includes(name as string),
      );
      expect(names.length, r.alert).toBeGreaterThan(0);
      for (const [match, , selector] of names) expect(selector, `${r.alert}: ${match}`).toBe('{}');
    }
  });

  it.each(['ObservatoryTargetDown', 'PostgresDown'])(
    '%s has a promtool case where another workload is down and it stays quiet',
    (alert) => {
      const foreign = cases.filter((c) => /another workload/.test(c.name));
      expect(foreign.flatMap((c) => c.checks).some((c) => c.alertname === alert && !c.fires)).toBe(true);
    },
  );

  it.each(Object.keys(TABLE))('%s has a promtool case that fires it and one that keeps it quiet', (alert) => {
    const checks = cases.flatMap((c) => c.checks).filter((c) => c.alertname === alert);
    expect(checks.some((c) => c.fires)).toBe(true);
    expect(checks.some((c) => !c.fires)).toBe(true);
  });
});

describe('promtool test rules', () => {
  it('finds at least 28 cases', () => {
    expect(cases.length).toBeGreaterThanOrEqual(28);
  });

  it.each(cases.map((c) => [`${c.file}: ${c.name}`, c] as const))('%s', async (_, c) => {
    const result = await runRuleTestCase(c);
    expect(result.output).toContain('SUCCESS');
    expect(result.ok, result.output).toBe(true);
  });
});
