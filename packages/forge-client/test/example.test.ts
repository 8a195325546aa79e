import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { beforeAll, describe, expect, it } from 'vitest';
import { sameRepoHead } from '../src/index.js';
import { branch, clientAs, commitFile, createRepo, gitea, must } from './seed.js';

const run = promisify(execFile);
const example = fileURLToPath(new URL('../examples/list-open-pulls.ts', import.meta.url));

describe('examples/list-open-pulls.ts', () => {
  beforeAll(async () => {
    const repo = await createRepo('example-demo');
    await commitFile(repo, { branch: 'ex', path: 'ex.txt', content: 'ex\n' });
    const c = clientAs('admin');
    must(
      await c.pulls.create(repo, {
        title: 'Example PR',
        head: sameRepoHead(branch('ex')),
        base: branch('main'),
      }),
    );
    c.close();
  });

  it('runs against the test server and prints the pull request and the version, never the token', async () => {
    const g = gitea();
    const { stdout, stderr } = await run(
      process.execPath,
      ['--import', 'tsx', example], // as `npm run example` runs it
      {
        env: {
          ...process.env,
          FORGE_URL: g.baseUri,
          FORGE_TOKEN: g.adminToken,
          FORGE_REPO: 'forge-admin/example-demo',
        },
        timeout: 30_000,
      },
    );
    expect(stdout).toContain('#1 Example PR (ex -> main, 0 approval(s))');
    expect(stdout).toContain(`server ${g.version}`);
    expect(stderr).toContain('[redacted]');
    expect(stdout + stderr).not.toContain(g.adminToken);
  });
});
