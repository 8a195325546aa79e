import { appendFileSync } from 'node:fs';
import type { Reporter, TestModule } from 'vitest/node';

/**
 * Feeds the repository's `make test` summary: when TEST_TALLY_FILE is set, appends
 * "<passed> <failed> <skipped>" for this run. Kept inside the package because the package is
 * standalone and must not import files from the repository root.
 */
export default class ForgeClientTally implements Reporter {
  onTestRunEnd(modules: ReadonlyArray<TestModule>): void {
    const target = process.env.TEST_TALLY_FILE;
    if (!target) return;
    const counts = { passed: 0, failed: 0, skipped: 0 };
    for (const m of modules) {
      const tests = [...m.children.allTests()];
      if (tests.length === 0 && m.state() === 'failed') counts.failed += 1;
      for (const t of tests) {
        const s = t.result().state;
        if (s === 'passed' || s === 'failed') counts[s] += 1;
        else counts.skipped += 1;
      }
    }
    appendFileSync(target, `${counts.passed} ${counts.failed} ${counts.skipped}\n`);
  }
}
