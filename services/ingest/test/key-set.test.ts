/**
 * Producers authenticated by a real OpenID provider (`oidc-provider`, client-credentials JWTs):
 * discovery, rotation without a restart, the bounded refetch on unknown `kid`s, the provider down
 * at start and later, `scp` arrays, the audience and the maximum token age.
 */
import { randomUUID } from 'node:crypto';
import { type OidcIssuer, startOidcIssuer } from '@event-observatory/devstack';
import { authConfigFromEnv, KEY_SET_FETCHES, signDevToken } from '@event-observatory/service-kit/auth';
import { exportPKCS8, generateKeyPair } from 'jose';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { ceHeaders, createTopic, type Harness, startHarness, uniqueTopic, waitFor } from './harness.js';

const { bootstrapServers } = inject('kafka');
const AUDIENCE = 'observatory-ingest';
let topic: string;
const opened: { close(): Promise<void> }[] = [];

beforeAll(async () => {
  topic = uniqueTopic('ingest-key-set');
  await createTopic(bootstrapServers, topic);
});
afterAll(async () => {
  for (const o of opened.reverse()) await o.close();
});

async function issuer(opts: Parameters<typeof startOidcIssuer>[0] = {}): Promise<OidcIssuer> {
  const idp = await startOidcIssuer(opts);
  opened.push(idp);
  return idp;
}

/** The service verifying tokens of `idp` by discovery, with `env` added. */
async function serviceFor(idp: OidcIssuer, env: Record<string, string> = {}): Promise<Harness> {
  const auth = authConfigFromEnv(
    { AUTH_OIDC_ISSUER: idp.issuer, AUTH_AUDIENCE: AUDIENCE, ...env },
    { defaultScope: 'events:write' },
  );
  const h = await startHarness({ bootstrapServers, topic, auth });
  opened.push(h);
  return h;
}

function publish(h: Harness, token: string): Promise<Response> {
  return fetch(`${h.url}/v1/events`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, ...ceHeaders(randomUUID(), new Date().toISOString()) },
    body: 'payload',
  });
}

async function readiness(h: Harness): Promise<Record<string, string>> {
  return (await (await fetch(`${h.url}/health/ready`)).json()) as Record<string, string>;
}

async function fetchesCounted(h: Harness, outcome: string): Promise<number> {
  const text = await (await fetch(`${h.metricsUrl}/metrics`)).text();
  const line = text
    .split('\n')
    .find((l) => l.startsWith(`${KEY_SET_FETCHES}{`) && l.includes(`outcome="${outcome}"`));
  return Number(line?.split(' ').pop() ?? Number.NaN);
}

/** A token signed by a key the issuer never published, with a `kid` of its own. */
async function strangerToken(kid: string): Promise<string> {
  const { privateKey } = await generateKeyPair('RS256', { extractable: true });
  return signDevToken({
    algorithm: 'RS256',
    privateKey: await exportPKCS8(privateKey),
    keyId: kid,
    audience: AUDIENCE,
    scopes: ['events:write'],
  });
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('a service verifying an OIDC issuer found by discovery', () => {
  let idp: OidcIssuer;
  let h: Harness;
  beforeAll(async () => {
    idp = await issuer();
    // No scheduled refresh during these tests: every fetch after the first is an unknown kid's.
    h = await serviceFor(idp, { AUTH_JWKS_REFRESH: '10m', AUTH_JWKS_COOLDOWN: '2s' });
  });

  it('accepts a client-credentials token of the issuer and says the key set is fresh', async () => {
    expect((await publish(h, await idp.token({ scope: 'events:write' }))).status).toBe(200);
    expect(await readiness(h)).toMatchObject({ status: 'UP', keySet: 'fresh' });
  });

  it('refuses a token of the issuer for another audience (the admin API) with 401', async () => {
    const res = await publish(h, await idp.token({ audience: 'observatory-admin', scope: 'events:write' }));
    expect(res.status).toBe(401);
  });

  it('answers 403 to a token of the issuer without the scope', async () => {
    expect((await publish(h, await idp.token({ scope: 'events:read' }))).status).toBe(403);
  });

  it('accepts a token signed with a newly published key without a restart', async () => {
    await sleep(2_100); // past the cooldown of the last fetch
    const before = idp.jwksRequests;
    await idp.rotate();
    expect((await publish(h, await idp.token())).status).toBe(200);
    expect(idp.jwksRequests - before).toBe(1);
  });

  it('fetches the key set once for a flood of unknown kids, and not again within the cooldown', async () => {
    await sleep(2_100);
    const tokens = await Promise.all(Array.from({ length: 40 }, (_, i) => strangerToken(`flood-${i}`)));
    const before = idp.jwksRequests;
    const statuses = await Promise.all(tokens.map((t) => publish(h, t).then((r) => r.status)));
    expect(new Set(statuses)).toEqual(new Set([401]));
    expect(idp.jwksRequests - before).toBe(1);
    const again = await Promise.all(tokens.map((t) => publish(h, t).then((r) => r.status)));
    expect(new Set(again)).toEqual(new Set([401]));
    expect(idp.jwksRequests - before).toBe(1);
  });
});

describe('a service refreshing its key set every second', () => {
  let idp: OidcIssuer;
  let h: Harness;
  beforeAll(async () => {
    idp = await issuer();
    h = await serviceFor(idp, { AUTH_JWKS_REFRESH: '1s', AUTH_JWKS_COOLDOWN: '2s' });
  });

  it('refuses the tokens of a retired key after the refresh bound, though it accepted them before', async () => {
    const old = idp.keys[0]!;
    const oldToken = await idp.token();
    expect((await publish(h, oldToken)).status).toBe(200);
    await idp.rotate();
    await idp.retire(old.kid);
    const newToken = await idp.token();
    await waitFor(async () => ((await publish(h, oldToken)).status === 401 ? true : undefined), 5_000);
    expect((await publish(h, newToken)).status).toBe(200);
  });

  it('keeps the cached keys when the issuer goes down, and says so in readiness and the meter', async () => {
    const fresh = await idp.token(); // a token string the service has not seen yet
    const failuresBefore = await fetchesCounted(h, 'failure');
    await idp.stop();
    try {
      const ready = await waitFor(async () => {
        const body = await readiness(h);
        return body.keySet?.startsWith('cached') ? body : undefined;
      }, 5_000);
      expect(ready.status).toBe('UP');
      expect(ready.keySet).toMatch(/refresh failing/);
      expect((await publish(h, fresh)).status).toBe(200);
      expect(await fetchesCounted(h, 'failure')).toBeGreaterThan(failuresBefore);
    } finally {
      await idp.resume();
    }
    await waitFor(async () => ((await readiness(h)).keySet === 'fresh' ? true : undefined), 5_000);
  });
});

describe('start-up', () => {
  it('refuses to start when the issuer cannot be reached', async () => {
    const idp = await issuer();
    await idp.stop();
    const auth = authConfigFromEnv({ AUTH_OIDC_ISSUER: idp.issuer, AUTH_AUDIENCE: AUDIENCE });
    await expect(startHarness({ bootstrapServers, topic, auth })).rejects.toThrow(
      /OIDC discovery .* fetch failed/,
    );
  });

  it('refuses to start when the key set URL answers no key set', async () => {
    const idp = await issuer();
    const auth = authConfigFromEnv({ AUTH_JWKS_URL: `${idp.issuer}/nothing-here`, AUTH_AUDIENCE: AUDIENCE });
    await expect(startHarness({ bootstrapServers, topic, auth })).rejects.toThrow(/key set .*nothing-here/);
  });
});

describe('claims as real issuers send them', () => {
  it('reads scopes from an `scp` array when AUTH_SCOPE_CLAIM=scp', async () => {
    const idp = await issuer({ scopeClaims: 'scp' });
    const byScp = await serviceFor(idp, { AUTH_SCOPE_CLAIM: 'scp' });
    const byScope = await serviceFor(idp);
    const token = await idp.token({ scope: 'events:read events:write' });
    expect((await publish(byScp, token)).status).toBe(200);
    // The default claim, `scope`, is absent from these tokens: no scope, 403.
    expect((await publish(byScope, token)).status).toBe(403);
    expect((await publish(byScp, await idp.token({ scope: 'events:read' }))).status).toBe(403);
  });

  it('refuses a token older than AUTH_MAX_TOKEN_AGE although it has not expired', async () => {
    const idp = await issuer({ algorithm: 'ES256' });
    const h = await serviceFor(idp, { AUTH_ALGORITHM: 'ES256', AUTH_MAX_TOKEN_AGE: '1s', AUTH_LEEWAY: '0s' });
    const token = await idp.token();
    expect((await publish(h, token)).status).toBe(200);
    await sleep(2_500);
    const res = await publish(h, token);
    expect(res.status).toBe(401);
    expect(res.headers.get('www-authenticate')).toBe('Bearer error="invalid_token"');
  });
});
