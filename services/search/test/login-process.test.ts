/**
 * The login as a deployment runs it: the search service as a real process configured only by its
 * environment. It refuses to start without SEARCH_AUTH_MODE; in `local` mode without
 * SEARCH_PUBLIC_URL its session cookie is Secure; logged at debug level through wrong and right
 * logins and a logout, it writes neither the password, nor the session secret, nor a session cookie.
 */
import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  runServiceProcess,
  type ServiceProcess,
  startServiceProcess,
  tempDataDir,
} from '@event-observatory/devstack';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { Client, csrfOf, form, SESSION_COOKIE } from './login-client.js';

const PASSWORD = 'process-test-admin-password-7f3a';
const SESSION_SECRET = 'process-test-session-secret-0123456789abcdef';
const dataDir = tempDataDir('search-login-process');
const env = () => ({
  DATABASE_URL: inject('stack').databaseUrl,
  APPLICATION_SECRET: 'process-test-application-secret-0123456789',
  OTEL_SDK_DISABLED: 'true',
  LOG_LEVEL: 'debug',
});

let search: ServiceProcess;
let output = '';

beforeAll(async () => {
  const passwordFile = join(dataDir, 'admin-password');
  writeFileSync(passwordFile, `${PASSWORD}\n`, { mode: 0o600 });
  search = await startServiceProcess({
    name: 'search',
    dataDir,
    env: {
      ...env(),
      SEARCH_AUTH_MODE: 'local',
      SEARCH_SESSION_SECRET: SESSION_SECRET,
      SEARCH_LOCAL_ADMIN_PASSWORD_FILE: passwordFile,
    },
    listen: { host: 'PLAY_HTTP_ADDRESS', port: 'PLAY_HTTP_PORT' },
    onLine: (line) => {
      output += `${line}\n`;
    },
  });
});

afterAll(async () => {
  await search?.stop();
  rmSync(dataDir, { recursive: true, force: true });
});

describe('the search process', () => {
  it('refuses to start without SEARCH_AUTH_MODE, naming the four modes', async () => {
    const run = await runServiceProcess({ name: 'search', instance: 'search-no-mode', dataDir, env: env() });
    expect(run.code).not.toBe(0);
    expect(run.stdout + run.stderr).toMatch(
      /SEARCH_AUTH_MODE: required; expected one of oidc, proxy, local, off/,
    );
  });

  it('logs admin in with the password from its file, and logs nothing secret doing so', async () => {
    const client = new Client();
    const formAt = async () => csrfOf(await (await client.follow(`${search.url}/events`)).res.text());
    const wrong = await client.send(
      `${search.url}/login`,
      form({ csrf: await formAt(), username: 'admin', password: 'not-it' }, search.url),
    );
    expect(wrong.status).toBe(401);
    const right = await client.send(
      `${search.url}/login`,
      form({ csrf: await formAt(), username: 'admin', password: PASSWORD }, search.url),
    );
    // As the chart's default install runs it (no SEARCH_PUBLIC_URL): a cookie kept off plain http.
    const line = right.headers.getSetCookie().find((l) => l.startsWith(`${SESSION_COOKIE}=`));
    expect(line).toMatch(/; Secure/);
    const { res, url } = await client.follow(new URL(right.headers.get('location')!, search.url).href);
    expect(url).toBe(`${search.url}/events`);
    const page = await res.text();
    expect(page).toContain('Logged in as <strong class="viewer-name">admin</strong>');
    const cookie = client.jar.get(SESSION_COOKIE)!;
    await client.send(`${search.url}/logout`, form({ csrf: csrfOf(page) }, search.url));
    await search.stop();
    expect(output).toMatch(/listening/);
    for (const secret of [PASSWORD, SESSION_SECRET, cookie]) expect(output.includes(secret)).toBe(false);
  });
});
