/**
 * Proxy mode over real sockets: the service bound on 127.0.0.1 believes oauth2-proxy's headers
 * when its trusted CIDRs include 127.0.0.1 and refuses every request (401 in the spec's body)
 * when they do not, whatever `X-Forwarded-For` claims; health needs no login.
 */
import { errorHandler } from '@event-observatory/service-kit/errors';
import { type RunningServer, serveApp } from '@event-observatory/service-kit/server';
import { Hono } from 'hono';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bearerSettingsFromEnv, createBearerTokens } from '../src/auth/bearer.js';
import { authenticatorFor } from '../src/auth/index.js';
import { parseTrustedProxies, proxyAuthenticator, trustedProxiesFromEnv } from '../src/auth/proxy.js';
import type { SearchEnv } from '../src/viewer.js';
import { type Harness, startHarness } from './harness.js';

const PROXY_HEADERS = {
  'x-auth-request-user': 'ada',
  'x-auth-request-email': 'ada@example.com',
  'x-auth-request-groups': 'team-payments, admins',
};

let trusted: Harness;
let untrusted: Harness;
/** An app that answers with the viewer the authenticator set, served the same way. */
let echo: RunningServer;
/** The same, with the service's composition: bearer tokens beside the proxy (none accepted here). */
let echoWithBearer: RunningServer;

beforeAll(async () => {
  [trusted, untrusted] = await Promise.all([
    startHarness('proxy_trusted', {
      seed: 20,
      authenticate: proxyAuthenticator(parseTrustedProxies('10.0.0.0/8, 127.0.0.1/32')),
    }),
    startHarness('proxy_untrusted', {
      seed: 20,
      authenticate: proxyAuthenticator(parseTrustedProxies('10.0.0.0/8,fd00::/8')),
    }),
  ]);
  const app = new Hono<SearchEnv>();
  app.use(proxyAuthenticator(parseTrustedProxies('127.0.0.0/8')));
  app.get('/who', (c) => c.json(c.get('viewer')));
  echo = await serveApp(app, { host: '127.0.0.1', port: 0, drainMs: 1_000 });
  const composed = new Hono<SearchEnv>();
  composed.onError(errorHandler());
  composed.use(
    authenticatorFor(
      { mode: 'proxy' },
      {
        trustedProxies: parseTrustedProxies('127.0.0.0/8'),
        bearer: createBearerTokens(bearerSettingsFromEnv({})),
      },
    ),
  );
  composed.get('/who', (c) => c.json(c.get('viewer')));
  echoWithBearer = await serveApp(composed, { host: '127.0.0.1', port: 0, drainMs: 1_000 });
});

afterAll(async () => {
  await Promise.all([trusted?.close(), untrusted?.close(), echo?.close(), echoWithBearer?.close()]);
});

async function expectRefused(res: Response, reason: string): Promise<void> {
  expect(res.status).toBe(401);
  expect(res.headers.get('www-authenticate')).toBe('Bearer');
  const body = (await res.json()) as {
    error: { code: number; status: string; details: { reason: string }[] };
  };
  expect(body.error.code).toBe(401);
  expect(body.error.status).toBe('UNAUTHENTICATED');
  expect(body.error.details[0]?.reason).toBe(reason);
}

describe('proxy mode', () => {
  it('a trusted peer naming a user reads the pages, the export and the tail, none of them cacheable', async () => {
    for (const path of ['/', '/events?range=all', '/events.ndjson?range=all']) {
      const res = await trusted.get(path, PROXY_HEADERS);
      expect(res.status, path).toBe(200);
      // One user's events: an ingress cache must not hand them to the next user.
      expect(res.headers.get('cache-control'), path).toBe('private, no-store');
      await res.text();
    }
    const tail = new AbortController();
    const res = await trusted.get('/events/tail?range=all', PROXY_HEADERS, tail.signal);
    expect(res.status).toBe(200);
    expect(res.headers.get('cache-control')).toBe('private, no-store');
    tail.abort();
  });

  it('the viewer is the user the proxy named, with its email shown and its groups', async () => {
    const res = await fetch(`${echo.url}/who`, { headers: PROXY_HEADERS });
    expect(await res.json()).toEqual({
      subject: 'ada',
      display: 'ada@example.com',
      groups: ['team-payments', 'admins'],
      via: 'proxy',
    });
    const bare = await fetch(`${echo.url}/who`, { headers: { 'x-auth-request-user': 'bob' } });
    expect(await bare.json()).toEqual({ subject: 'bob', display: 'bob', groups: [], via: 'proxy' });
  });

  it('a trusted peer naming no user is refused', async () => {
    await expectRefused(
      await trusted.get('/events?range=all', { 'x-auth-request-email': 'ada@example.com' }),
      'no-proxy-user',
    );
  });

  it('an untrusted peer is refused with the headers, and X-Forwarded-For changes nothing', async () => {
    for (const path of ['/', '/events?range=all', '/events.csv?range=all', '/events/tail?range=all']) {
      await expectRefused(await untrusted.get(path, PROXY_HEADERS), 'untrusted-peer');
    }
    await expectRefused(
      await untrusted.get('/events', {
        ...PROXY_HEADERS,
        'x-forwarded-for': '10.1.2.3',
        'x-real-ip': '10.1.2.3',
      }),
      'untrusted-peer',
    );
  });

  it("a trusted proxy's named user wins over the bearer token it passed on; without a name, the token decides", async () => {
    // oauth2-proxy checked a script's token itself and passes its Authorization header on.
    const passedOn = { authorization: 'Bearer a.token-of-a-provider-search-does-not-know.x' };
    const named = await fetch(`${echoWithBearer.url}/who`, { headers: { ...PROXY_HEADERS, ...passedOn } });
    expect(await named.json()).toMatchObject({ subject: 'ada', via: 'proxy' });
    const unnamed = await fetch(`${echoWithBearer.url}/who`, { headers: passedOn });
    expect(unnamed.status).toBe(401);
  });

  it('health needs no login from anyone', async () => {
    expect((await untrusted.get('/health/live')).status).toBe(200);
    expect((await untrusted.get('/health/ready')).status).toBe(200);
  });
});

describe('SEARCH_TRUSTED_PROXIES', () => {
  it('takes IPv4 and IPv6 ranges and single addresses; an IPv4-mapped peer matches its IPv4 range', () => {
    const t = parseTrustedProxies(' 10.0.0.0/8 , 192.168.1.5, fd00::/8 ');
    expect(t.cidrs).toEqual(['10.0.0.0/8', '192.168.1.5', 'fd00::/8']);
    expect(t.has('10.200.0.1')).toBe(true);
    expect(t.has('::ffff:10.200.0.1')).toBe(true);
    expect(t.has('192.168.1.5')).toBe(true);
    expect(t.has('192.168.1.6')).toBe(false);
    expect(t.has('fd12::1')).toBe(true);
    expect(t.has('fe80::1')).toBe(false);
    expect(t.has('not-an-address')).toBe(false);
  });

  it('refuses a bad entry or an empty list, naming the variable', () => {
    for (const raw of [
      '10.0.0.0/33',
      'fd00::/129',
      'example.com',
      '10.0.0.0/8/1',
      '10.0.0.0/x',
      '10.0.0.0/',
      ' , ',
    ]) {
      expect(() => trustedProxiesFromEnv({ SEARCH_TRUSTED_PROXIES: raw }), raw).toThrow(
        /SEARCH_TRUSTED_PROXIES/,
      );
    }
    expect(() => trustedProxiesFromEnv({})).toThrow(/SEARCH_TRUSTED_PROXIES/);
  });
});
