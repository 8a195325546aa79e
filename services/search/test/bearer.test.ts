/**
 * Bearer tokens against real OpenID providers of the devstack: one is the login's identity
 * provider, one stands for the Kubernetes API server's issuer (discovery and key set alike), one
 * is a stranger. A valid token reads pages, exports and the tail; an expired, foreign, mis-aimed
 * or garbage token is 401 `invalid_token` in the error body, never the mode's own refusal.
 */
import { createPrivateKey } from 'node:crypto';
import { type OidcIssuer, startOidcIssuer } from '@event-observatory/devstack';
import { signDevToken } from '@event-observatory/service-kit/auth';
import { errorHandler } from '@event-observatory/service-kit/errors';
import { type RunningServer, serveApp } from '@event-observatory/service-kit/server';
import { Hono } from 'hono';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type BearerTokens,
  bearerSettingsFromEnv,
  createBearerTokens,
  withBearer,
} from '../src/auth/bearer.js';
import { parseTrustedProxies, proxyAuthenticator } from '../src/auth/proxy.js';
import type { SearchEnv } from '../src/viewer.js';
import { type Harness, startHarness } from './harness.js';

const AUDIENCE = 'observatory-search';
const SA_AUDIENCE = 'observatory-search-sa';

let idp: OidcIssuer;
let cluster: OidcIssuer;
let stranger: OidcIssuer;
let tokens: BearerTokens;
let h: Harness;
/** Answers with the viewer the bearer token gave. */
let echo: RunningServer;

/** A token signed with the issuer's own current key (claims a client-credentials grant cannot carry). */
async function signedBy(
  issuer: OidcIssuer,
  opts: { subject: string; audience: string; claims?: Record<string, unknown>; now?: Date; ttl?: string },
): Promise<string> {
  const key = issuer.keys[0]!;
  const privateKey = createPrivateKey({ key: key.privateJwk as never, format: 'jwk' })
    .export({ type: 'pkcs8', format: 'pem' })
    .toString();
  return signDevToken({
    algorithm: key.algorithm,
    privateKey,
    keyId: key.kid,
    issuer: issuer.issuer,
    audience: opts.audience,
    subject: opts.subject,
    ttl: opts.ttl ?? '10m',
    ...(opts.now ? { now: opts.now } : {}),
    ...(opts.claims ? { claims: opts.claims } : {}),
  });
}

const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

beforeAll(async () => {
  [idp, cluster, stranger] = await Promise.all([startOidcIssuer(), startOidcIssuer(), startOidcIssuer()]);
  tokens = createBearerTokens(
    bearerSettingsFromEnv({
      SEARCH_OIDC_ISSUER: idp.issuer,
      SEARCH_OIDC_CLIENT_ID: AUDIENCE,
      SEARCH_SERVICE_ACCOUNT_OIDC_ISSUER: cluster.issuer,
      SEARCH_SERVICE_ACCOUNT_AUDIENCE: SA_AUDIENCE,
    }),
  );
  await tokens.start();
  // The mode's own authenticator refuses this peer: only a token gets in.
  const mode = proxyAuthenticator(parseTrustedProxies('10.0.0.0/8'));
  h = await startHarness('bearer', {
    seed: 20,
    authenticate: withBearer(tokens, mode),
    checks: tokens.checks,
  });
  const app = new Hono<SearchEnv>();
  app.onError(errorHandler());
  app.use(withBearer(tokens, mode));
  app.get('/who', (c) => c.json(c.get('viewer')));
  echo = await serveApp(app, { host: '127.0.0.1', port: 0, drainMs: 1_000 });
});

afterAll(async () => {
  tokens?.close();
  await Promise.all([h?.close(), echo?.close(), idp?.close(), cluster?.close(), stranger?.close()]);
});

async function who(token: string): Promise<unknown> {
  const res = await fetch(`${echo.url}/who`, { headers: bearer(token) });
  expect(res.status).toBe(200);
  return res.json();
}

async function expectInvalid(res: Response, reason: string): Promise<void> {
  expect(res.status).toBe(401);
  expect(res.headers.get('www-authenticate')).toBe('Bearer error="invalid_token"');
  expect(res.headers.get('location')).toBeNull();
  const body = (await res.json()) as { error: { status: string; details: { reason: string }[] } };
  expect(body.error.status).toBe('UNAUTHENTICATED');
  expect(body.error.details[0]?.reason).toBe(reason);
}

describe('bearer tokens', () => {
  it('a token of the identity provider reads the pages, the export and the tail', async () => {
    const token = await idp.token({ client: 'operator', audience: AUDIENCE, scope: 'events:read' });
    for (const path of ['/', '/events?range=all', '/events.ndjson?range=all', '/events.csv?range=all']) {
      const res = await h.get(path, bearer(token));
      expect(res.status, path).toBe(200);
      expect(res.headers.get('cache-control'), path).toBe('private, no-store');
      await res.text();
    }
    const tail = new AbortController();
    expect((await h.get('/events/tail?range=all', bearer(token), tail.signal)).status).toBe(200);
    tail.abort();
    expect(await who(token)).toEqual({ subject: 'operator', display: 'operator', groups: [], via: 'bearer' });
  });

  it('the viewer takes its groups from the groups claim and shows the email', async () => {
    const token = await signedBy(idp, {
      subject: 'u-123',
      audience: AUDIENCE,
      claims: { email: 'ada@example.com', groups: ['team-payments', 'admins'] },
    });
    expect(await who(token)).toEqual({
      subject: 'u-123',
      display: 'ada@example.com',
      groups: ['team-payments', 'admins'],
      via: 'bearer',
    });
    // One comma-separated string, as the login reads it from an ID token.
    const joined = await signedBy(idp, {
      subject: 'u-124',
      audience: AUDIENCE,
      claims: { groups: 'team-payments, admins' },
    });
    expect(await who(joined)).toMatchObject({ groups: ['team-payments', 'admins'] });
  });

  it('a service-account token is the service account, with the groups of its namespace', async () => {
    const token = await signedBy(cluster, {
      subject: 'system:serviceaccount:team-a:tailer',
      audience: SA_AUDIENCE,
      claims: { 'kubernetes.io': { namespace: 'team-a', serviceaccount: { name: 'tailer', uid: 'x' } } },
    });
    expect((await h.get('/events?range=all', bearer(token))).status).toBe(200);
    expect(await who(token)).toEqual({
      subject: 'system:serviceaccount:team-a:tailer',
      display: 'system:serviceaccount:team-a:tailer',
      groups: ['system:serviceaccounts', 'system:serviceaccounts:team-a'],
      via: 'service-account',
    });
    const notAnAccount = await signedBy(cluster, { subject: 'someone', audience: SA_AUDIENCE });
    await expectInvalid(await h.get('/events', bearer(notAnAccount)), 'malformed');
  });

  it('an expired token is refused', async () => {
    const token = await signedBy(idp, {
      subject: 'ada',
      audience: AUDIENCE,
      now: new Date(Date.now() - 2 * 3_600_000),
      ttl: '1h',
    });
    await expectInvalid(await h.get('/events', bearer(token)), 'expired');
  });

  it('a tail opened with a token ends once the token is no longer accepted (its expiry)', async () => {
    // No leeway past `exp`, so the test waits seconds, not the default 30 s more.
    const strict = createBearerTokens(
      bearerSettingsFromEnv({
        SEARCH_OIDC_ISSUER: idp.issuer,
        SEARCH_OIDC_CLIENT_ID: AUDIENCE,
        SEARCH_BEARER_LEEWAY: '0s',
      }),
    );
    await strict.start();
    const short = await startHarness('bearer_expiry', {
      authenticate: withBearer(strict, proxyAuthenticator(parseTrustedProxies('10.0.0.0/8'))),
    });
    try {
      const token = await signedBy(idp, { subject: 'tailer', audience: AUDIENCE, ttl: '3s' });
      const opened = Date.now();
      const res = await short.get('/events/tail?range=all', bearer(token));
      expect(res.status).toBe(200);
      await res.text(); // until the stream ends
      // `exp` is in whole seconds, so 2 to 3 s from signing; then within a poll (1 s).
      const lasted = Date.now() - opened;
      expect(lasted).toBeGreaterThan(1_500);
      expect(lasted).toBeLessThan(6_000);
      await expectInvalid(await short.get('/events', bearer(token)), 'expired');
    } finally {
      strict.close();
      await short.close();
    }
  }, 30_000);

  it("a foreign issuer's token, or one aimed at another audience, is refused", async () => {
    const foreign = await stranger.token({ audience: AUDIENCE, scope: 'events:read' });
    await expectInvalid(await h.get('/events.ndjson?range=all', bearer(foreign)), 'wrong-audience');
    const elsewhere = await idp.token({ audience: 'observatory-ingest', scope: 'events:write' });
    await expectInvalid(await h.get('/events', bearer(elsewhere)), 'wrong-audience');
    // The identity provider's key does not make a service-account token.
    const forged = await signedBy(idp, {
      subject: 'system:serviceaccount:kube-system:admin',
      audience: SA_AUDIENCE,
    });
    await expectInvalid(await h.get('/events', bearer(forged)), 'wrong-audience');
  });

  it('a garbage token is refused, on the tail too; without a token the mode decides', async () => {
    for (const value of ['garbage', 'a.b.c', 'ey.ey.ey']) {
      await expectInvalid(
        await h.get('/events/tail?range=all', { authorization: `Bearer ${value}` }),
        'malformed',
      );
    }
    // alg none: the algorithm is pinned.
    const none = `${Buffer.from('{"alg":"none"}').toString('base64url')}.${Buffer.from(`{"sub":"x","iss":"${idp.issuer}"}`).toString('base64url')}.`;
    await expectInvalid(await h.get('/events', bearer(none)), 'bad-signature');
    const res = await h.get('/events');
    expect(res.status).toBe(401);
    expect(
      ((await res.json()) as { error: { details: { reason: string }[] } }).error.details[0]?.reason,
    ).toBe('untrusted-peer');
  });

  it("readiness shows each source's key set beside the database", async () => {
    const res = await fetch(`${h.url}/health/ready`);
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({
      status: 'UP',
      database: 'UP',
      'oidc-keySet': 'fresh',
      'service-account-keySet': 'fresh',
    });
  });

  it('with no source configured, every bearer token is refused', async () => {
    const none = createBearerTokens(bearerSettingsFromEnv({}));
    const token = await idp.token({ audience: AUDIENCE });
    await expect(none.viewerOf(`Bearer ${token}`)).rejects.toMatchObject({ code: 401 });
  });
});
