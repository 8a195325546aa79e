import { appendFileSync } from 'node:fs';
import type { Reporter, TestModule, TestRunEndReason, Vitest } from 'vitest/node';

/**
 * Appends one line "passed failed skipped" per vitest run to the file named by TEST_TALLY_FILE,
 * and the name of each failed test (file and title) with the first line of its error to
 * `<TEST_TALLY_FILE>.failed`, the error's next lines indented below it (a process's last log lines,
 * say), so `make test` can end with one closing line for all workspaces together and the failures
 * above it: what a CI log's tail shows is enough to start from. A run that failed with no failed
 * test or file (its global setup threw: the cluster did not start) counts as one failure too.
 */
export default class TallyReporter implements Reporter {
  private root = '';

  onInit(vitest: Vitest): void {
    this.root = vitest.config.root;
  }

  onTestRunEnd(
    testModules: ReadonlyArray<TestModule>,
    _errors: ReadonlyArray<unknown>,
    reason: TestRunEndReason,
  ): void {
    const file = process.env.TEST_TALLY_FILE;
    if (!file) return;
    let passed = 0;
    let failed = 0;
    let skipped = 0;
    const failures: string[] = [];
    for (const mod of testModules) {
      const failedBefore = failed;
      for (const test of mod.children.allTests()) {
        const state = test.result().state;
        if (state === 'passed') passed += 1;
        else if (state === 'failed') {
          failed += 1;
          failures.push(`${mod.moduleId} > ${test.fullName}${described(test.result().errors?.[0]?.message)}`);
        } else skipped += 1;
      }
      // A file that failed with no failed test: it did not load, or a hook (beforeAll) failed and
      // its tests were skipped.
      if (mod.state() === 'failed' && failed === failedBefore) {
        failed += 1;
        failures.push(
          `${mod.moduleId} (the file failed to load or a hook failed)${described(mod.errors()[0]?.message)}`,
        );
      }
    }
    if (reason === 'failed' && failed === 0) {
      failed += 1;
      failures.push(
        `${this.root} (the run failed outside its tests, e.g. in its global setup: see its output)`,
      );
    }
    appendFileSync(file, `${passed} ${failed} ${skipped}\n`);
    if (failures.length > 0) appendFileSync(`${file}.failed`, failures.map((f) => `FAILED ${f}\n`).join(''));
  }
}

/** Lines of an error message kept below its first, and the characters kept of each line. */
const DETAIL = { lines: 12, width: 300 };

/**
 * ": " and the first line of an error message, then its next non-blank lines (at most
 * `DETAIL.lines`), each on a line of its own indented by four spaces; nothing without a message.
 */
function described(message: string | undefined): string {
  const [first, ...rest] = (message ?? '')
    .split('\n')
    .map((line) => line.trimEnd().slice(0, DETAIL.width))
    .filter((line) => line.trim() !== '');
  if (first === undefined) return '';
  const detail = rest.slice(0, DETAIL.lines).map((line) => `\n    ${line}`);
  return `: ${first.trim()}${detail.join('')}`;
}
