/**
 * The JWT attack suite against a key set: the ingestion API verifies the tokens of a
 * real OpenID provider found by discovery (RS256 pinned, audience `observatory-ingest`). Tokens
 * are hand-made (tokens.ts) so each can be exactly as wrong as an attacker makes it.
 */
import { createPrivateKey, createPublicKey, generateKeyPairSync, randomUUID } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import { type OidcIssuer, type SigningKey, startOidcIssuer } from '@event-observatory/devstack';
import { authConfigFromEnv } from '@event-observatory/service-kit';
import type { Registry } from 'prom-client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPipelineTopics, type StartedIngest, startIngest } from '../../support/services.js';
import { type Claims, hmacToken, nowSeconds, rsaToken } from './tokens.js';

const AUDIENCE = 'observatory-ingest';
const attacker = generateKeyPairSync('rsa', { modulusLength: 2048 });
const attackerJwk = {
  ...attacker.publicKey.export({ format: 'jwk' }),
  kid: 'attacker',
  alg: 'RS256',
  use: 'sig',
};
const encryption = generateKeyPairSync('rsa', { modulusLength: 2048 });
const HMAC_SECRET = `published-hmac-${randomUUID()}`;

let idp: OidcIssuer;
let ingest: StartedIngest;
/** An attacker's server a `jku` or `x5u` header points at; it counts what it is asked. */
let elsewhere: Server;
let elsewhereUrl: string;
let elsewhereRequests = 0;

beforeAll(async () => {
  idp = await startOidcIssuer();
  idp.publishExtra([
    { ...encryption.publicKey.export({ format: 'jwk' }), kid: 'encryption-key', alg: 'RS256', use: 'enc' },
    { kty: 'oct', k: Buffer.from(HMAC_SECRET).toString('base64url'), kid: 'shared-hmac', alg: 'HS256' },
  ]);
  elsewhere = createServer((_req, res) => {
    elsewhereRequests++;
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ keys: [attackerJwk] }));
  });
  await new Promise<void>((resolve) => elsewhere.listen(0, '127.0.0.1', resolve));
  elsewhereUrl = `http://127.0.0.1:${(elsewhere.address() as { port: number }).port}`;
  const topic = `security-key-set-${randomUUID().slice(0, 8)}`;
  await createPipelineTopics(topic);
  ingest = await startIngest({
    topic,
    secret: 'unused-secret-of-the-key-set-suite-0123456789',
    auth: authConfigFromEnv(
      {
        AUTH_OIDC_ISSUER: idp.issuer,
        AUTH_AUDIENCE: AUDIENCE,
        AUTH_JWKS_REFRESH: '1s',
        AUTH_JWKS_COOLDOWN: '1s',
        AUTH_LEEWAY: '5s',
      },
      { defaultScope: 'events:write' },
    ),
  });
});

afterAll(async () => {
  await ingest?.close();
  await idp?.close();
  await new Promise((resolve) => elsewhere?.close(resolve));
});

function claims(extra: Claims = {}): Claims {
  const now = nowSeconds();
  return {
    sub: 'key-set-suite',
    iss: idp.issuer,
    aud: AUDIENCE,
    iat: now,
    exp: now + 600,
    scope: 'events:write',
    ...extra,
  };
}

const signingKey = (key: SigningKey) => createPrivateKey({ key: key.privateJwk as never, format: 'jwk' });
const publicJwk = (key: SigningKey) =>
  createPublicKey({ key: key.privateJwk as never, format: 'jwk' }).export({ format: 'jwk' });

function validate(token: string): Promise<Response> {
  return fetch(`${ingest.url}/v1/events:validate`, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${token}`,
      'ce-specversion': '1.0',
      'ce-id': randomUUID(),
      'ce-source': '/security/key-set',
      'ce-type': 'security.key-set.probe',
      'ce-time': new Date().toISOString(),
    },
  });
}

async function decisions(registry: Registry, reason: string): Promise<number> {
  const metric = await registry.getSingleMetric('auth_decisions_total')!.get();
  return metric.values.filter((v) => v.labels.reason === reason).reduce((s, v) => s + v.value, 0);
}

interface Attack {
  name: string;
  token(): Promise<string> | string;
}

const attacks: Attack[] = [
  {
    name: "HS256 keyed with the set's RSA public key as PEM, under its kid (algorithm confusion)",
    token: () => {
      const key = idp.keys[0]!;
      return hmacToken(
        claims(),
        createPublicKey({ key: key.privateJwk as never, format: 'jwk' }).export({
          type: 'spki',
          format: 'pem',
        }),
        { kid: key.kid },
      );
    },
  },
  {
    name: "HS256 keyed with the set's RSA key as published JSON, under its kid",
    token: () => hmacToken(claims(), JSON.stringify(publicJwk(idp.keys[0]!)), { kid: idp.keys[0]!.kid }),
  },
  {
    name: "HS256 keyed with the RSA modulus bytes of the set's key",
    token: () =>
      hmacToken(claims(), Buffer.from(String(publicJwk(idp.keys[0]!).n), 'base64url'), {
        kid: idp.keys[0]!.kid,
      }),
  },
  {
    name: 'HS256 signed with an HMAC key the set publishes (a symmetric key in a public set)',
    token: () => hmacToken(claims(), HMAC_SECRET, { kid: 'shared-hmac' }),
  },
  {
    name: 'RS256 signed with a key the set publishes for encryption (use: enc)',
    token: () => rsaToken(claims(), encryption.privateKey, { kid: 'encryption-key' }),
  },
  {
    name: 'RS256 signed with an attacker key whose set a jku header points at',
    token: () => rsaToken(claims(), attacker.privateKey, { kid: 'attacker', jku: `${elsewhereUrl}/jwks` }),
  },
  {
    name: 'RS256 signed with an attacker key whose certificate an x5u header points at',
    token: () =>
      rsaToken(claims(), attacker.privateKey, { kid: 'attacker', x5u: `${elsewhereUrl}/cert.pem` }),
  },
  {
    name: 'RS256 signed with an attacker key embedded as jwk under a kid of the set',
    token: () => rsaToken(claims(), attacker.privateKey, { kid: idp.keys[0]!.kid, jwk: attackerJwk }),
  },
];

describe('an ingestion API verifying a key set', () => {
  it('accepts a genuine token of the issuer (control)', async () => {
    expect((await validate(await idp.token())).status).toBe(200);
    expect(
      (await validate(rsaToken(claims(), signingKey(idp.keys[0]!), { kid: idp.keys[0]!.kid }))).status,
    ).toBe(200);
  });

  it.each(attacks)('refuses $name with 401 bad-signature', async (attack) => {
    const before = await decisions(ingest.registry, 'bad-signature');
    const res = await validate(await attack.token());
    expect(res.status).toBe(401);
    expect(((await res.json()) as { error: { status: string } }).error.status).toBe('UNAUTHENTICATED');
    expect(await decisions(ingest.registry, 'bad-signature')).toBe(before + 1);
  });

  it('never fetches what a jku or x5u header names', () => {
    expect(elsewhereRequests).toBe(0);
  });

  it('refuses a token whose key was an entry of the set but has expired from it (retired), within the refresh bound', async () => {
    const retiring = idp.keys[0]!;
    const token = rsaToken(claims(), signingKey(retiring), { kid: retiring.kid });
    expect((await validate(token)).status).toBe(200);
    await idp.rotate();
    await idp.retire(retiring.kid);
    const deadline = Date.now() + 5_000;
    let status = 200;
    while (status === 200 && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 250));
      status = (await validate(token)).status;
    }
    expect(status).toBe(401);
  });
});
