import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';

const repo = join(import.meta.dirname, '../..');
const dir = mkdtempSync(join(tmpdir(), 'tally-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Runs vitest with the reporter on one file of `source` in a directory of its own (with `config`, if given). */
async function tally(source: string, config?: string): Promise<{ counts: string; failed: string }> {
  const tallyFile = join(dir, 'tally');
  rmSync(tallyFile, { force: true });
  rmSync(`${tallyFile}.failed`, { force: true });
  writeFileSync(join(dir, 'fixture.test.ts'), source);
  rmSync(join(dir, 'vitest.config.ts'), { force: true });
  if (config) writeFileSync(join(dir, 'vitest.config.ts'), config);
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
  it('counts the run and names each failed test with its error, the lines after the first indented', async () => {
    const { counts, failed } = await tally(
      "it('holds', () => {});\nit('breaks', () => { throw new Error('the first line\\nthe second\\n\\n  the third'); });\n",
    );
    expect(counts).toBe('1 1 0\n');
    expect(failed).toBe(
      `FAILED ${join(dir, 'fixture.test.ts')} > breaks: the first line\n    the second\n      the third\n`,
    );
  });

  it('keeps twelve lines of a long error below its first', async () => {
    const lines = Array.from({ length: 30 }, (_, i) => `line ${i}`).join('\\n');
    const { failed } = await tally(`it('breaks', () => { throw new Error('${lines}'); });\n`);
    const kept = failed.trimEnd().split('\n');
    expect(kept[0]).toMatch(/ > breaks: line 0$/);
    expect(kept.slice(1)).toEqual(Array.from({ length: 12 }, (_, i) => `    line ${i + 1}`));
  });

  it('names a file whose hook failed, with its error', async () => {
    const { counts, failed } = await tally(
      "beforeAll(() => { throw new Error('no cluster'); });\nit('never runs', () => {});\n",
    );
    expect(counts).toBe('0 1 1\n');
    expect(failed).toContain('(the file failed to load or a hook failed): no cluster');
  });

  it('counts a run whose global setup failed as one failure, naming its root', async () => {
    writeFileSync(join(dir, 'setup.ts'), "export default () => { throw new Error('no cluster'); };\n");
    const { counts, failed } = await tally(
      "it('never runs', () => {});\n",
      "export default { test: { globalSetup: ['./setup.ts'], globals: true } };\n",
    );
    expect(counts).toBe('0 1 0\n');
    expect(failed).toBe(
      `FAILED ${dir} (the run failed outside its tests, e.g. in its global setup: see its output)\n`,
    );
  });
});

describe('the closing summary (summary.sh)', () => {
  it('lists the failures, then a line per file with failures (its count and first failure), then the sum', async () => {
    const tallyFile = join(dir, 'summary');
    writeFileSync(tallyFile, '10 3 0\n5 0 1\n');
    writeFileSync(
      `${tallyFile}.failed`,
      [
        `FAILED ${repo}/e2e/a.test.ts > suite > first one: boom`,
        '    why it went boom',
        `FAILED ${repo}/e2e/a.test.ts > suite > second: bang`,
        `FAILED ${repo}/services/b.test.ts (the file failed to load or a hook failed): no cluster`,
        '',
      ].join('\n'),
    );
    const { code, stdout } = await promisify(execFile)(join(import.meta.dirname, 'summary.sh'), [tallyFile], {
      cwd: repo,
    }).then(
      ({ stdout }) => ({ code: 0, stdout }),
      (error: { code: number; stdout: string }) => error,
    );
    expect(code).toBe(1);
    expect(stdout.split('\n').slice(4)).toEqual([
      'failed in e2e/a.test.ts: 2, the first: suite > first one: boom',
      'failed in services/b.test.ts: 1, the first: (the file failed to load or a hook failed): no cluster',
      'Tests: 15 passed, 3 failed, 1 skipped',
      '',
    ]);
  });
});
