import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';

const repo = join(import.meta.dirname, '../..');
const dir = mkdtempSync(join(tmpdir(), 'tally-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Runs vitest with the reporter on one file of `source` in a directory of its own. */
async function tally(source: string): Promise<{ counts: string; failed: string }> {
  const tallyFile = join(dir, 'tally');
  rmSync(tallyFile, { force: true });
  rmSync(`${tallyFile}.failed`, { force: true });
  writeFileSync(join(dir, 'fixture.test.ts'), source);
  const vitest = join(repo, 'node_modules/vitest/vitest.mjs');
  const reporter = join(import.meta.dirname, 'tally-reporter.ts');
  await promisify(execFile)(
    process.execPath,
    [vitest, 'run', '--root', dir, '--globals', '--reporter', reporter],
    {
      env: { ...process.env, TEST_TALLY_FILE: tallyFile },
    },
  ).catch(() => undefined); // a failing fixture exits 1
  const read = (path: string) => readFileSync(path, { encoding: 'utf8', flag: 'a+' });
  return { counts: read(tallyFile), failed: read(`${tallyFile}.failed`) };
}

describe('the tally reporter', () => {
  it('counts the run and names each failed test with the first line of its error', async () => {
    const { counts, failed } = await tally(
      "it('holds', () => {});\nit('breaks', () => { throw new Error('the first line\\nthe second'); });\n",
    );
    expect(counts).toBe('1 1 0\n');
    expect(failed).toBe(`FAILED ${join(dir, 'fixture.test.ts')} > breaks: the first line\n`);
  });

  it('names a file whose hook failed, with its error', async () => {
    const { counts, failed } = await tally(
      "beforeAll(() => { throw new Error('no cluster'); });\nit('never runs', () => {});\n",
    );
    expect(counts).toBe('0 1 1\n');
    expect(failed).toContain('(the file failed to load or a hook failed): no cluster');
  });
});
