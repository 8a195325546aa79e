import { appendFileSync } from 'node:fs';
import type { Reporter, TestModule } from 'vitest/node';

/**
 * Appends one line "passed failed skipped" per vitest run to the file named by TEST_TALLY_FILE,
 * so `make test` can print one closing line for all workspaces together.
 */
export default class TallyReporter implements Reporter {
  onTestRunEnd(testModules: ReadonlyArray<TestModule>): void {
    const file = process.env.TEST_TALLY_FILE;
    if (!file) return;
    let passed = 0;
    let failed = 0;
    let skipped = 0;
    for (const mod of testModules) {
      if (mod.state() === 'failed' && [...mod.children.allTests()].length === 0) failed += 1;
      for (const test of mod.children.allTests()) {
        const state = test.result().state;
        if (state === 'passed') passed += 1;
        else if (state === 'failed') failed += 1;
        else skipped += 1;
      }
    }
    appendFileSync(file, `${passed} ${failed} ${skipped}\n`);
  }
}
