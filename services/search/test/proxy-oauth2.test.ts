/**
 * Proxy mode behind a real oauth2-proxy (built from the Go module proxy by
 * scripts/install/oauth2-proxy.sh) in front of the service, both on 127.0.0.1, verifying JWTs of
 * the devstack's OpenID provider (`--skip-jwt-bearer-tokens`, the path scripts take) and naming
 * the user in `X-Auth-Request-*` (`injectRequestHeaders`). Search trusts 127.0.0.1 only: the same
 * headers sent straight to search from 127.0.0.2 are refused, and oauth2-proxy overwrites any a
 * client sends it.
 */
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { rmSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { join } from 'node:path';
import {
  freePort,
  type OidcIssuer,
  oauth2ProxyAlphaConfig,
  repoRoot,
  startOidcIssuer,
  tempDataDir,
} from '@event-observatory/devstack';
import { type RunningServer, serveApp } from '@event-observatory/service-kit/server';
import { Hono } from 'hono';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseTrustedProxies, proxyAuthenticator } from '../src/auth/proxy.js';
import type { SearchEnv } from '../src/viewer.js';
import { type Harness, startHarness } from './harness.js';

const CLIENT = 'observatory-search';

let idp: OidcIssuer;
let h: Harness;
/** The viewer as search's authenticator saw it, behind the same proxy. */
let echo: RunningServer;
let proxy: ChildProcess;
let proxyUrl: string;
let echoProxyUrl: string;
let configDir: string;

function userToken(claims: Record<string, unknown>): Promise<string> {
  return idp.userToken({ subject: 'u-ada', audience: CLIENT, claims });
}

/** oauth2-proxy with two upstreams: the echo of the viewer, and search. */
function alphaConfig(port: number): string {
  return oauth2ProxyAlphaConfig({
    bindAddress: `127.0.0.1:${port}`,
    upstreams: [
      { id: 'echo', path: '/who', uri: `${echo.url}/who` },
      { id: 'search', path: '/', uri: `${h.url}/` },
    ],
    issuer: idp.issuer,
    clientId: CLIENT,
  });
}

/** A GET from a chosen local address (fetch cannot choose one). */
function getFrom(localAddress: string, url: string, headers: Record<string, string>): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request(url, { localAddress, headers }, (res) => {
      res.resume();
      resolve(res.statusCode ?? 0);
    });
    req.on('error', reject);
    req.end();
  });
}

beforeAll(async () => {
  const bin = execFileSync(join(repoRoot(), 'scripts/install/oauth2-proxy.sh'), { encoding: 'utf8' }).trim();
  idp = await startOidcIssuer();
  const trusted = proxyAuthenticator(parseTrustedProxies('127.0.0.1/32'));
  h = await startHarness('proxy_oauth2', { seed: 20, authenticate: trusted });
  const app = new Hono<SearchEnv>();
  app.use(trusted);
  app.get('/who', (c) => c.json(c.get('viewer')));
  echo = await serveApp(app, { host: '127.0.0.1', port: 0, drainMs: 1_000 });
  const port = await freePort();
  configDir = tempDataDir('oauth2-proxy');
  const config = join(configDir, 'alpha.yaml');
  writeFileSync(config, alphaConfig(port));
  proxy = spawn(
    bin,
    [
      `--alpha-config=${config}`,
      '--cookie-secret=0123456789abcdef0123456789abcdef',
      '--cookie-secure=false',
      '--email-domain=*',
      '--skip-jwt-bearer-tokens=true',
    ],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  // Its log, shown only when it does not start.
  let log = '';
  for (const out of [proxy.stdout, proxy.stderr]) out?.on('data', (chunk: Buffer) => (log += chunk));
  proxyUrl = `http://127.0.0.1:${port}`;
  echoProxyUrl = `${proxyUrl}/who`;
  for (const end = Date.now() + 30_000; ; ) {
    const ok = await fetch(`${proxyUrl}/ping`).then(
      (r) => r.ok,
      () => false,
    );
    if (ok) break;
    if (Date.now() > end || proxy.exitCode !== null) throw new Error(`oauth2-proxy did not start:\n${log}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}, 900_000);

afterAll(async () => {
  proxy?.kill();
  await Promise.all([h?.close(), echo?.close(), idp?.close()]);
  if (configDir) rmSync(configDir, { recursive: true, force: true });
});

describe('proxy mode behind oauth2-proxy', () => {
  it("reads the pages as the user oauth2-proxy names, with the token's email and groups", async () => {
    const token = await userToken({ email: 'ada@example.com', groups: ['team-payments', 'admins'] });
    const auth = { authorization: `Bearer ${token}` };
    for (const path of ['/events?range=all', '/events.ndjson?range=all']) {
      const res = await fetch(`${proxyUrl}${path}`, { headers: auth });
      expect(res.status, path).toBe(200);
      await res.text();
    }
    const who = await fetch(echoProxyUrl, { headers: auth });
    expect(await who.json()).toEqual({
      subject: 'u-ada',
      display: 'ada@example.com',
      groups: ['team-payments', 'admins'],
      via: 'proxy',
    });
  });

  it('overwrites the identity headers a client sends it', async () => {
    const token = await userToken({ email: 'ada@example.com', groups: ['team-payments'] });
    const who = await fetch(echoProxyUrl, {
      headers: {
        authorization: `Bearer ${token}`,
        'x-auth-request-user': 'root',
        'x-auth-request-groups': 'admins',
      },
    });
    expect(await who.json()).toMatchObject({ subject: 'u-ada', groups: ['team-payments'] });
  });

  it('refuses a request without a token at oauth2-proxy, and the same headers sent around it', async () => {
    expect((await fetch(`${proxyUrl}/events`, { redirect: 'manual' })).status).not.toBe(200);
    const forged = { 'x-auth-request-user': 'u-ada', 'x-auth-request-email': 'ada@example.com' };
    expect(await getFrom('127.0.0.2', `${h.url}/events?range=all`, forged)).toBe(401);
  });
});
