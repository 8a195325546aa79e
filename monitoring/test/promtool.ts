/**
 * Runs Debian's promtool (scripts/install/prometheus.sh puts it on PATH) on the rule files and
 * their unit tests, one promtool test case at a time so each is reported on its own.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { parse, stringify } from 'yaml';

const run = promisify(execFile);
export const monitoringDir = new URL('..', import.meta.url).pathname;
export const alertsDir = join(monitoringDir, 'alerts');
export const testsDir = join(monitoringDir, 'promtool-tests');

export interface PromtoolResult {
  ok: boolean;
  output: string;
}

/** Runs promtool with `args`; a non-zero exit is a result (`ok` false), not an exception. */
export async function promtool(...args: string[]): Promise<PromtoolResult> {
  try {
    const { stdout, stderr } = await run('promtool', args, { maxBuffer: 16 << 20 });
    return { ok: true, output: stdout + stderr };
  } catch (err) {
    const e = err as { stdout?: string; stderr?: string; message: string };
    if (e.stdout === undefined) throw err; // promtool could not be started at all
    return { ok: false, output: `${e.stdout}${e.stderr ?? ''}` };
  }
}

export const ruleFiles = (): string[] =>
  readdirSync(alertsDir)
    .filter((f) => f.endsWith('.yaml'))
    .map((f) => join(alertsDir, f));

export interface RuleTestCase {
  /** The test file, e.g. `storage.test.yaml`. */
  file: string;
  name: string;
  /** Alert names checked at some eval time, and whether the case expects it firing there. */
  checks: { alertname: string; fires: boolean }[];
  /** The case as a one-test promtool file whose rule_files are absolute paths. */
  yaml: string;
}

interface TestFile {
  rule_files: string[];
  evaluation_interval?: string;
  tests: {
    name: string;
    alert_rule_test?: { alertname: string; exp_alerts?: unknown[] }[];
  }[];
}

/** Every case of every file under promtool-tests/, each as a promtool file of its own. */
export function ruleTestCases(): RuleTestCase[] {
  return readdirSync(testsDir)
    .filter((f) => f.endsWith('.test.yaml'))
    .flatMap((file) => {
      const doc = parse(readFileSync(join(testsDir, file), 'utf8')) as TestFile;
      const rule_files = doc.rule_files.map((f) => join(testsDir, f));
      return doc.tests.map((test) => ({
        file,
        name: test.name,
        checks: (test.alert_rule_test ?? []).map((t) => ({
          alertname: t.alertname,
          fires: (t.exp_alerts ?? []).length > 0,
        })),
        yaml: stringify({ ...doc, rule_files, tests: [test] }),
      }));
    });
}

/** Runs one case with `promtool test rules` from a scratch directory. */
export async function runRuleTestCase(c: RuleTestCase): Promise<PromtoolResult> {
  const dir = mkdtempSync(join(tmpdir(), 'promtool-case-'));
  try {
    const path = join(dir, 'case.yaml');
    writeFileSync(path, c.yaml);
    return await promtool('test', 'rules', path);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** The alert names defined by the rule files, per group. */
export function alertsByGroup(): Map<string, string[]> {
  const out = new Map<string, string[]>();
  for (const path of ruleFiles()) {
    const doc = parse(readFileSync(path, 'utf8')) as {
      groups: { name: string; rules: { alert?: string }[] }[];
    };
    for (const g of doc.groups)
      out.set(g.name, [...(out.get(g.name) ?? []), ...g.rules.flatMap((r) => (r.alert ? [r.alert] : []))]);
  }
  return out;
}
