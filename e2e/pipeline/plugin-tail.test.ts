/**
 * `kubectl observatory tail` against the search service, both real processes, with bearer tokens
 * of an OpenID provider: the search ends a stream when its token expires; the plugin reads its
 * token file again for each connection, so a file refreshed in time carries the tail on without a
 * lost or repeated event, and an expired one ends it with the 401.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import {
  createDatabaseRoles,
  type OidcIssuer,
  repoRoot,
  type ServiceProcess,
  startOidcIssuer,
  startServiceProcess,
  tempDataDir,
} from '@event-observatory/devstack';
import { migrate } from '@event-observatory/store';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, inject, it, vi } from 'vitest';
import { createSuiteDatabase } from '../support/services.js';

const AUDIENCE = 'observatory-search';
const SUBJECT = 'tailer';
const id = randomUUID().slice(0, 8);
const dataDir = tempDataDir('e2e-plugin-tail');
const tokenFile = join(dataDir, 'search-token');
let idp: OidcIssuer;
let search: ServiceProcess;
let db: pg.Pool;

beforeAll(async () => {
  idp = await startOidcIssuer();
  const database = `e2e_plugin_tail_${id}`;
  const databaseUrl = await createSuiteDatabase(database);
  // Search logs in as the reader, under row-level security, as a deployment has it.
  const roles = await createDatabaseRoles(inject('stack').databaseUrl, database);
  await migrate({ url: roles.owner.url, writerRole: roles.writer.name, readerRole: roles.reader.name });
  db = new pg.Pool({ connectionString: databaseUrl, max: 1 });
  const passwordFile = join(dataDir, 'admin-password');
  writeFileSync(passwordFile, 'plugin-tail-admin-password\n', { mode: 0o600 });
  const visibilityFile = join(dataDir, 'visibility.json');
  writeFileSync(visibilityFile, JSON.stringify([{ users: [SUBJECT], see: { all: true } }]));
  search = await startServiceProcess({
    name: 'search',
    dataDir,
    env: {
      DATABASE_URL: roles.reader.url,
      APPLICATION_SECRET: 'e2e-plugin-tail-application-secret-0123',
      SEARCH_AUTH_MODE: 'local',
      SEARCH_SESSION_SECRET: 'e2e-plugin-tail-session-secret-0123456789',
      SEARCH_LOCAL_ADMIN_PASSWORD_FILE: passwordFile,
      SEARCH_VISIBILITY_FILE: visibilityFile,
      SEARCH_BEARER_OIDC_ISSUER: idp.issuer,
      SEARCH_BEARER_AUDIENCE: AUDIENCE,
      // No leeway past `exp`, so a token of seconds ends its stream in seconds.
      SEARCH_BEARER_LEEWAY: '0s',
      OTEL_SDK_DISABLED: 'true',
    },
    listen: { host: 'PLAY_HTTP_ADDRESS', port: 'PLAY_HTTP_PORT' },
  });
});

afterAll(async () => {
  await search?.stop();
  await db?.end();
  await idp?.close();
  rmSync(dataDir, { recursive: true, force: true });
});

/** Stores an event of `type` as the consumer would (the tail reads what is stored after it opened). */
async function store(type: string): Promise<void> {
  // sql-witness: a stored event, without the pipeline in front of the store.
  await db.query(
    `INSERT INTO events.cloud_event (occurred_at, ce_source, ce_id, ce_type, raw)
     VALUES (now(), 'urn:plugin-tail', $1, $2, '{}'::jsonb)`,
    [randomUUID(), type],
  );
}

/** `kubectl observatory tail` as a process, on the token file; its output as it comes, and its exit. */
function plugin(): {
  child: ChildProcess;
  out: () => string;
  err: () => string;
  exit: Promise<number | null>;
} {
  const dir = join(repoRoot(), 'tools/kubectl-observatory');
  const child = spawn(
    process.execPath,
    ['--import', 'tsx', 'src/main.ts', 'tail', '--search-url', search.url, '--search-token-file', tokenFile],
    { cwd: dir, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let out = '';
  let err = '';
  child.stdout!.on('data', (b: Buffer) => {
    out += b.toString();
  });
  child.stderr!.on('data', (b: Buffer) => {
    err += b.toString();
  });
  const exit = new Promise<number | null>((done) => child.once('exit', (code) => done(code)));
  return { child, out: () => out, err: () => err, exit };
}

const token = (ttl: string) => idp.userToken({ subject: SUBJECT, audience: AUDIENCE, ttl });

describe('kubectl observatory tail with an expiring search token', () => {
  it('carries on past the expiry with the token its file holds by then, no event lost or repeated', async () => {
    writeFileSync(tokenFile, await token('4s'));
    const tail = plugin();
    try {
      await sleep(1_500); // the stream opens, its newest key read
      // Refreshed before the first token expires, as the kubelet does a projected token's file.
      writeFileSync(tokenFile, await token('10m'));
      // An event every 250 ms until well past the expiry, the stream's end and the reconnect.
      const types: string[] = [];
      for (let i = 0; i < 24; i++) {
        types.push(`com.example.n${i}`);
        await store(types[i]!);
        await sleep(250);
      }
      const printed = () =>
        tail
          .out()
          .trim()
          .split('\n')
          .map((l) => l.split(/\s+/).find((w) => w.startsWith('com.example.')));
      await vi.waitFor(() => expect(printed()).toEqual(types), { timeout: 10_000 });
      expect(tail.child.exitCode).toBeNull();
      expect(tail.err()).toBe('');
    } finally {
      tail.child.kill('SIGINT');
      await tail.exit;
    }
  }, 60_000);

  it('stops at the 401 once the token has expired and no new one came, without printing it', async () => {
    const expiring = await token('3s');
    writeFileSync(tokenFile, expiring);
    const tail = plugin();
    const code = await Promise.race([tail.exit, sleep(20_000, 'still running')]);
    if (code === 'still running') tail.child.kill('SIGINT');
    expect(code).toBe(1);
    expect(tail.err()).toMatch(/answered 401/);
    expect(tail.err()).not.toContain(expiring);
  }, 60_000);
});
