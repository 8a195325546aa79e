/**
 * A real Gitea for the integration tests: built once from the Go module proxy and cached
 * (scripts/build-gitea.sh), started here on a free loopback port with SQLite in a temp directory,
 * seeded through its CLI (users, tokens) and its API (repository, branches, files).
 */

import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir, userInfo } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

const run = promisify(execFile);
const here = dirname(fileURLToPath(import.meta.url));

export const ADMIN = {
  username: 'forge-admin',
  password: 'Adm1n-password-for-tests',
  email: 'admin@example.invalid',
};
export const REVIEWER = {
  username: 'forge-reviewer',
  password: 'Rev1ewer-password-for-tests',
  email: 'rev@example.invalid',
};
/** Gitea's MAX_RESPONSE_ITEMS in the test instance: small, so that the silent cap is exercised. */
export const MAX_RESPONSE_ITEMS = 4;

export interface GiteaHandle {
  readonly baseUri: string;
  readonly version: string;
  readonly adminToken: string;
  readonly reviewerToken: string;
  readonly workDir: string;
  stop(): Promise<void>;
}

/** Builds (or finds in the cache) the Gitea binary; returns its directory. */
export async function ensureGiteaBinary(): Promise<string> {
  const script = resolve(here, '../scripts/build-gitea.sh');
  const { stdout } = await run('bash', [script], { maxBuffer: 16 * 1024 * 1024, timeout: 40 * 60_000 });
  const lines = stdout.trim().split('\n');
  const dir = lines[lines.length - 1];
  if (!dir) throw new Error('build-gitea.sh printed no directory');
  return dir;
}

async function freePort(): Promise<number> {
  return new Promise((res, rej) => {
    const srv = createServer();
    srv.once('error', rej);
    srv.listen(0, '127.0.0.1', () => {
      const addr = srv.address();
      const port = typeof addr === 'object' && addr ? addr.port : 0;
      srv.close(() => res(port));
    });
  });
}

function appIni(o: { workDir: string; staticRoot: string; port: number }): string {
  const root = process.getuid?.() === 0;
  return `APP_NAME = forge-client tests
RUN_MODE = prod
RUN_USER = ${userInfo().username}
WORK_PATH = ${o.workDir}
${root ? 'I_AM_BEING_UNSAFE_RUNNING_AS_ROOT = true\n' : ''}
[server]
PROTOCOL = http
HTTP_ADDR = 127.0.0.1
HTTP_PORT = ${o.port}
ROOT_URL = http://127.0.0.1:${o.port}/
DISABLE_SSH = true
START_SSH_SERVER = false
LFS_START_SERVER = false
OFFLINE_MODE = true
STATIC_ROOT_PATH = ${o.staticRoot}
APP_DATA_PATH = ${o.workDir}/data

[database]
DB_TYPE = sqlite3
PATH = ${o.workDir}/data/gitea.db
SQLITE_JOURNAL_MODE = WAL

[repository]
ROOT = ${o.workDir}/repositories

[security]
INSTALL_LOCK = true
SECRET_KEY = forge-client-test-secret-key-not-for-production
PASSWORD_HASH_ALGO = pbkdf2_hi

[service]
DISABLE_REGISTRATION = true
DEFAULT_ALLOW_CREATE_ORGANIZATION = true

[api]
MAX_RESPONSE_ITEMS = ${MAX_RESPONSE_ITEMS}
DEFAULT_PAGING_NUM = 3

[indexer]
ISSUE_INDEXER_TYPE = db
REPO_INDEXER_ENABLED = false

[queue]
TYPE = channel

[session]
PROVIDER = memory

[cache]
ADAPTER = memory

[mailer]
ENABLED = false

[picture]
DISABLE_GRAVATAR = true
ENABLE_FEDERATED_AVATAR = false

[actions]
ENABLED = false

[cron]
ENABLED = false

[cron.update_checker]
ENABLED = false

[log]
MODE = file
LEVEL = Warn
ROOT_PATH = ${o.workDir}/log
`;
}

async function waitForVersion(baseUri: string, child: ChildProcess, deadlineMs: number): Promise<string> {
  const until = Date.now() + deadlineMs;
  let lastError = '';
  while (Date.now() < until) {
    if (child.exitCode !== null) throw new Error(`gitea exited early with code ${child.exitCode}`);
    try {
      const res = await fetch(`${baseUri}/version`);
      if (res.ok) return ((await res.json()) as { version: string }).version;
      lastError = `status ${res.status}`;
    } catch (err) {
      lastError = String(err);
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`gitea did not answer within ${deadlineMs} ms (${lastError})`);
}

function tokenFrom(stdout: string): string {
  const m = /Access token was successfully created\.\.\. ([0-9a-f]{40})/.exec(stdout);
  if (!m?.[1]) throw new Error('no access token in gitea admin output');
  return m[1];
}

/** Starts a fresh Gitea and creates its two accounts. */
export async function startGitea(): Promise<GiteaHandle> {
  const binDir = await ensureGiteaBinary();
  const gitea = join(binDir, 'gitea');
  const workDir = mkdtempSync(join(tmpdir(), 'forge-client-gitea-'));
  const port = await freePort();
  const config = join(workDir, 'app.ini');
  writeFileSync(config, appIni({ workDir, staticRoot: binDir, port }));
  const env = {
    ...process.env,
    GITEA_WORK_DIR: workDir,
    GITEA_CUSTOM: join(workDir, 'custom'),
    HOME: workDir,
  };
  const cli = (args: string[]) =>
    run(gitea, ['--config', config, '--work-path', workDir, ...args], {
      env,
      cwd: workDir,
      timeout: 120_000,
    });

  let child: ChildProcess | undefined;
  const stop = async () => {
    if (child && child.exitCode === null) {
      const exited = new Promise((r) => child?.once('exit', r));
      child.kill('SIGTERM');
      const timer = setTimeout(() => child?.kill('SIGKILL'), 10_000);
      await exited;
      clearTimeout(timer);
    }
    rmSync(workDir, { recursive: true, force: true });
  };
  try {
    await cli(['migrate']);
    const createUser = async (u: typeof ADMIN, isAdmin: boolean) =>
      tokenFrom(
        (
          await cli([
            ...[
              'admin',
              'user',
              'create',
              '--username',
              u.username,
              '--password',
              u.password,
              '--email',
              u.email,
            ],
            ...(isAdmin ? ['--admin'] : []),
            ...['--must-change-password=false', '--access-token', '--access-token-name', 'tests'],
            ...['--access-token-scopes', 'all'],
          ])
        ).stdout,
      );
    const adminToken = await createUser(ADMIN, true);
    const reviewerToken = await createUser(REVIEWER, false);
    child = spawn(gitea, ['--config', config, '--work-path', workDir, 'web', '--port', String(port)], {
      env,
      cwd: workDir,
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let stderr = '';
    child.stderr?.on('data', (d: Buffer) => {
      stderr = (stderr + d.toString()).slice(-4000);
    });
    const baseUri = `http://127.0.0.1:${port}/api/v1`;
    let version: string;
    try {
      version = await waitForVersion(baseUri, child, 60_000);
    } catch (err) {
      throw new Error(`${(err as Error).message}\n${stderr}`);
    }
    return {
      baseUri,
      version,
      adminToken,
      reviewerToken,
      workDir,
      stop,
    };
  } catch (err) {
    await stop();
    throw err;
  }
}
