import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { alertsByGroup, promtool, ruleFiles, ruleTestCases, runRuleTestCase } from './promtool.js';

/** Document 2 section 6: group, and the `for` duration of the table (none where it gives none). */
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
};

interface Rule {
  alert: string;
  for?: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
}

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

  it('are the 13 alerts of Document 2 in the groups and with the for durations of its table', () => {
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
      expect(r.annotations?.runbook, r.alert).toBe(`monitoring/RUNBOOK.md#${r.alert.toLowerCase()}`);
      expect(runbook, r.alert).toContain(`\n## ${r.alert}\n`);
    }
  });

  it.each(Object.keys(TABLE))('%s has a promtool case that fires it and one that keeps it quiet', (alert) => {
    const checks = cases.flatMap((c) => c.checks).filter((c) => c.alertname === alert);
    expect(checks.some((c) => c.fires)).toBe(true);
    expect(checks.some((c) => !c.fires)).toBe(true);
  });
});

describe('promtool test rules', () => {
  it('finds at least 26 cases', () => {
    expect(cases.length).toBeGreaterThanOrEqual(26);
  });

  it.each(cases.map((c) => [`${c.file}: ${c.name}`, c] as const))('%s', async (_, c) => {
    const result = await runRuleTestCase(c);
    expect(result.output).toContain('SUCCESS');
    expect(result.ok, result.output).toBe(true);
  });
});
