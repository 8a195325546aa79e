/**
 * JWT attack suite (security) against the ingestion API and the consumer's admin API,
 * both running on the real broker (and PostgreSQL for the consumer) with issuer, audience and
 * scope configured. Every attack must end in 401 UNAUTHENTICATED (or 403 PERMISSION_DENIED for a
 * genuine token without the scope), with the spec's error body and the counted reason.
 */
import { generateKeyPairSync, randomUUID } from 'node:crypto';
import { authConfigFromEnv } from '@event-observatory/service-kit';
import type { Registry } from 'prom-client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createPipelineTopics,
  createSuiteDatabase,
  type StartedConsumer,
  type StartedIngest,
  startConsumer,
  startIngest,
} from '../../support/services.js';
import { exchange, head } from './raw-http.js';
import {
  type Claims,
  hmacToken,
  nowSeconds,
  rsaToken,
  signingInput,
  tamperedToken,
  unsecuredToken,
} from './tokens.js';

const SECRET = `jwt-suite-${randomUUID()}-${randomUUID()}`;
const ISSUER = 'https://issuer.security.test';
const AUDIENCE = 'event-observatory';
const env = { AUTH_SECRET: SECRET, AUTH_ISSUER: ISSUER, AUTH_AUDIENCE: AUDIENCE, AUTH_LEEWAY: '5s' };
const serviceKeys = generateKeyPairSync('rsa', { modulusLength: 2048 });
const attackerKeys = generateKeyPairSync('rsa', { modulusLength: 2048 });
const publicPem = serviceKeys.publicKey.export({ type: 'spki', format: 'pem' }).toString();

interface Target {
  name: string;
  scope: string;
  /** Sends one request with this `authorization` header (none when undefined). */
  call(authorization: string | undefined): Promise<Response>;
}

let ingest: StartedIngest;
let ingestRsa: StartedIngest;
let consumer: StartedConsumer;

/** A binary-mode event for `:validate`: the cheapest guarded ingestion operation. */
function validateOn(url: () => string): Target['call'] {
  return (authorization) =>
    fetch(`${url()}/v1/events:validate`, {
      method: 'POST',
      headers: {
        ...(authorization === undefined ? {} : { authorization }),
        'ce-specversion': '1.0',
        'ce-id': randomUUID(),
        'ce-source': '/security/jwt',
        'ce-type': 'security.jwt.probe',
        'ce-time': new Date().toISOString(),
      },
    });
}

const ingestTarget: Target = { name: 'ingest', scope: 'events:write', call: validateOn(() => ingest.url) };
const consumerTarget: Target = {
  name: 'consumer admin',
  scope: 'events:admin',
  call: (authorization) =>
    fetch(`${consumer.adminUrl}/admin/consumer`, {
      headers: authorization === undefined ? {} : { authorization },
    }),
};

beforeAll(async () => {
  const topic = `security-jwt-${randomUUID().slice(0, 8)}`;
  await createPipelineTopics(topic);
  ingest = await startIngest({
    topic,
    secret: SECRET,
    auth: authConfigFromEnv(env, { defaultScope: 'events:write' }),
  });
  ingestRsa = await startIngest({
    topic,
    secret: SECRET,
    auth: authConfigFromEnv(
      { AUTH_ALGORITHM: 'RS256', AUTH_PUBLIC_KEY: publicPem, AUTH_ISSUER: ISSUER, AUTH_AUDIENCE: AUDIENCE },
      { defaultScope: 'events:write' },
    ),
  });
  consumer = await startConsumer({
    topic,
    group: `security-jwt-${randomUUID().slice(0, 8)}`,
    databaseUrl: await createSuiteDatabase(`security_jwt_${randomUUID().slice(0, 8)}`),
    auth: authConfigFromEnv(env, { defaultScope: 'events:admin' }),
  });
});

afterAll(async () => {
  await Promise.all([ingest?.close(), ingestRsa?.close(), consumer?.close()]);
});

/** Claims of a genuine token for `scope`, valid for ten minutes. */
function claims(scope: unknown, extra: Claims = {}): Claims {
  const now = nowSeconds();
  return { sub: 'security-suite', iss: ISSUER, aud: AUDIENCE, iat: now, exp: now + 600, scope, ...extra };
}

const bearer = (token: string) => `Bearer ${token}`;

interface Attack {
  name: string;
  authorization(scope: string): string | undefined;
  status: 200 | 401 | 403;
  /** The `auth_decisions_total` reason the ingestion service counts. */
  reason: string;
}

const attacks: Attack[] = [
  {
    name: 'a genuine token (control)',
    authorization: (s) => bearer(hmacToken(claims(s), SECRET)),
    status: 200,
    reason: 'accepted',
  },
  {
    name: 'scope as a space-delimited string holding the scope among others',
    authorization: (s) => bearer(hmacToken(claims(`events:read ${s} other`), SECRET)),
    status: 200,
    reason: 'accepted',
  },
  {
    name: 'scope as a JSON array holding the scope',
    authorization: (s) => bearer(hmacToken(claims(['events:read', s]), SECRET)),
    status: 200,
    reason: 'accepted',
  },
  {
    name: 'an audience array containing the audience',
    authorization: (s) => bearer(hmacToken(claims(s, { aud: ['other', AUDIENCE] }), SECRET)),
    status: 200,
    reason: 'accepted',
  },
  {
    name: 'an unknown kid on a token signed with the configured key (kid selects nothing)',
    authorization: (s) => bearer(hmacToken(claims(s), SECRET, { kid: 'no-such-key' })),
    status: 200,
    reason: 'accepted',
  },
  {
    name: 'no authorization header',
    authorization: () => undefined,
    status: 401,
    reason: 'absent',
  },
  {
    name: 'another scheme (Basic)',
    authorization: () => `Basic ${Buffer.from(`user:${SECRET}`).toString('base64')}`,
    status: 401,
    reason: 'absent',
  },
  {
    name: 'scope as a string without the scope',
    authorization: () => bearer(hmacToken(claims('events:read events:admin:x'), SECRET)),
    status: 403,
    reason: 'scope-missing',
  },
  {
    name: 'scope as an array without the scope',
    authorization: () => bearer(hmacToken(claims(['events:read']), SECRET)),
    status: 403,
    reason: 'scope-missing',
  },
  {
    name: 'a scope that only starts like the required one',
    authorization: (s) => bearer(hmacToken(claims(`${s}s ${s.toUpperCase()}`), SECRET)),
    status: 403,
    reason: 'scope-missing',
  },
  {
    name: 'scope as a number',
    authorization: () => bearer(hmacToken(claims(7), SECRET)),
    status: 401,
    reason: 'malformed',
  },
  {
    name: 'alg none with an empty signature',
    authorization: (s) => bearer(unsecuredToken(claims(s))),
    status: 401,
    reason: 'bad-signature',
  },
  {
    name: 'alg None with the genuine HS256 signature kept',
    authorization: (s) => {
      const genuine = hmacToken(claims(s), SECRET).split('.')[2];
      return bearer(`${signingInput({ alg: 'None', typ: 'JWT' }, claims(s))}.${genuine}`);
    },
    status: 401,
    reason: 'bad-signature',
  },
  {
    name: 'HS384 signed with the right secret (the algorithm is pinned to HS256)',
    authorization: (s) => bearer(hmacToken(claims(s), SECRET, { alg: 'HS384' })),
    status: 401,
    reason: 'bad-signature',
  },
  {
    name: 'an RS256 token signed with an attacker key, its public key embedded as jwk',
    authorization: (s) =>
      bearer(
        rsaToken(claims(s), attackerKeys.privateKey, {
          jwk: attackerKeys.publicKey.export({ format: 'jwk' }),
        }),
      ),
    status: 401,
    reason: 'bad-signature',
  },
  {
    name: 'signed with another secret',
    authorization: (s) => bearer(hmacToken(claims(s), `${SECRET}-not`)),
    status: 401,
    reason: 'bad-signature',
  },
  {
    name: 'a path-traversal kid on a token signed with an empty key',
    authorization: (s) => bearer(hmacToken(claims(s), '', { kid: '../../../../dev/null' })),
    status: 401,
    reason: 'bad-signature',
  },
  {
    name: 'a tampered payload (scope and subject changed after signing)',
    authorization: (s) =>
      bearer(tamperedToken(hmacToken(claims('events:read'), SECRET), claims(s, { sub: 'admin' }))),
    status: 401,
    reason: 'bad-signature',
  },
  {
    name: 'expired beyond the leeway',
    authorization: (s) => bearer(hmacToken(claims(s, { exp: nowSeconds() - 60 }), SECRET)),
    status: 401,
    reason: 'expired',
  },
  {
    name: 'not yet valid beyond the leeway',
    authorization: (s) => bearer(hmacToken(claims(s, { nbf: nowSeconds() + 600 }), SECRET)),
    status: 401,
    reason: 'not-yet-valid',
  },
  {
    name: 'a wrong issuer',
    authorization: (s) => bearer(hmacToken(claims(s, { iss: `${ISSUER}.evil` }), SECRET)),
    status: 401,
    reason: 'wrong-audience',
  },
  {
    name: 'a wrong audience',
    authorization: (s) => bearer(hmacToken(claims(s, { aud: ['other', `${AUDIENCE}-x`] }), SECRET)),
    status: 401,
    reason: 'wrong-audience',
  },
  {
    name: 'no exp claim',
    authorization: (s) => bearer(hmacToken(claims(s, { exp: undefined }), SECRET)),
    status: 401,
    reason: 'malformed',
  },
  {
    name: 'no sub claim',
    authorization: (s) => bearer(hmacToken(claims(s, { sub: undefined }), SECRET)),
    status: 401,
    reason: 'malformed',
  },
  {
    name: 'two segments only',
    authorization: (s) => bearer(hmacToken(claims(s), SECRET).split('.').slice(0, 2).join('.')),
    status: 401,
    reason: 'malformed',
  },
  {
    name: 'a header that is not JSON',
    authorization: (s) => bearer(`bm90IGpzb24.${hmacToken(claims(s), SECRET).split('.').slice(1).join('.')}`),
    status: 401,
    reason: 'malformed',
  },
  {
    name: 'a 12 KiB token of valid base64url that is not a JWT',
    authorization: () => bearer(`${'A'.repeat(6_000)}.${'B'.repeat(6_000)}.${'C'.repeat(300)}`),
    status: 401,
    reason: 'malformed',
  },
];

/** The ingestion service's `auth_decisions_total{reason}`, summed over outcomes. */
async function decisions(registry: Registry, reason: string): Promise<number> {
  const metric = await registry.getSingleMetric('auth_decisions_total')!.get();
  return metric.values.filter((v) => v.labels.reason === reason).reduce((s, v) => s + v.value, 0);
}

async function expectAnswer(target: Target, attack: Attack): Promise<void> {
  const res = await target.call(attack.authorization(target.scope));
  expect(res.status).toBe(attack.status);
  if (attack.status === 200) return;
  const body = (await res.json()) as { error: { code: number; status: string } };
  expect(body.error).toMatchObject({
    code: attack.status,
    status: attack.status === 401 ? 'UNAUTHENTICATED' : 'PERMISSION_DENIED',
  });
  expect(res.headers.get('www-authenticate')).toMatch(/^Bearer/);
}

describe.each([ingestTarget, consumerTarget])('the $name API', (target) => {
  it.each(attacks)('answers $status to $name', async (attack) => {
    await expectAnswer(target, attack);
  });
});

describe('the ingestion API counts every decision under its closed-set reason', () => {
  it.each(attacks)('counts $name as $reason', async (attack) => {
    const before = await decisions(ingest.registry, attack.reason);
    await ingestTarget.call(attack.authorization(ingestTarget.scope));
    expect(await decisions(ingest.registry, attack.reason)).toBe(before + 1);
  });
});

describe('an ingestion API pinned to RS256', () => {
  const rsa = validateOn(() => ingestRsa.url);

  it('accepts a token signed with its key pair (control)', async () => {
    expect((await rsa(bearer(rsaToken(claims('events:write'), serviceKeys.privateKey)))).status).toBe(200);
  });

  it('refuses an HS256 token whose HMAC key is its own public key PEM (algorithm confusion)', async () => {
    const res = await rsa(bearer(hmacToken(claims('events:write'), publicPem)));
    expect(res.status).toBe(401);
    expect(await decisions(ingestRsa.registry, 'bad-signature')).toBeGreaterThanOrEqual(1);
  });

  it('refuses an HS256 token whose HMAC key is its public key in DER', async () => {
    const der = serviceKeys.publicKey.export({ type: 'spki', format: 'der' });
    expect((await rsa(bearer(hmacToken(claims('events:write'), der)))).status).toBe(401);
  });

  it('refuses an RS256 token signed with another key pair', async () => {
    expect((await rsa(bearer(rsaToken(claims('events:write'), attackerKeys.privateKey)))).status).toBe(401);
  });
});

describe('a token too large for a header block', () => {
  it.each([
    { name: 'ingest', url: () => ingest.url, target: ingestTarget },
    { name: 'consumer admin', url: () => consumer.adminUrl, target: consumerTarget },
  ])(
    'is refused by the $name listener with 431 in the error body shape, and the service keeps answering',
    async ({ url, target }) => {
      const huge = bearer(hmacToken(claims(target.scope, { pad: 'x'.repeat(64 * 1024) }), SECRET));
      const { responses } = await exchange(Number(new URL(url()).port), [
        head('GET /admin/consumer HTTP/1.1', [
          ['host', 'localhost'],
          ['authorization', huge],
        ]),
      ]);
      // Node refuses a header block over its 16 KiB limit before any route runs.
      expect(responses.map((r) => r.status)).toEqual([431]);
      expect(JSON.parse(responses[0]!.body).error).toMatchObject({ code: 431 });
      expect((await target.call(bearer(hmacToken(claims(target.scope), SECRET)))).status).toBe(200);
    },
  );
});
