import { generateKeyPairSync } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SignJWT } from 'jose';
import { describe, expect, it } from 'vitest';
import { ConfigError } from '../config/index.js';
import {
  authConfigFromEnv,
  createVerifier,
  grantedScopes,
  parseSubjectScopes,
  signDevToken,
} from './index.js';
import { keyFetch } from './key-fetch.js';

const JWKS = 'https://issuer.example/jwks';
const ISSUER = 'https://issuer.example';

function refusal(env: Record<string, string>, prefix?: string): string {
  try {
    authConfigFromEnv(env, prefix === undefined ? {} : { prefix });
  } catch (err) {
    expect(err).toBeInstanceOf(ConfigError);
    return (err as Error).message;
  }
  throw new Error('expected a ConfigError');
}

describe('key set settings', () => {
  it('reads a JWKS URL with RS256 by default and the refresh, cooldown and timeout defaults', () => {
    expect(authConfigFromEnv({ AUTH_JWKS_URL: JWKS, AUTH_AUDIENCE: 'observatory-ingest' })).toMatchObject({
      algorithm: 'RS256',
      audience: 'observatory-ingest',
      keySet: { jwksUrl: JWKS, refreshMs: 300_000, cooldownMs: 30_000, timeoutMs: 5_000 },
    });
  });

  it('makes the OIDC issuer the required issuer', () => {
    const config = authConfigFromEnv({
      AUTH_OIDC_ISSUER: ISSUER,
      AUTH_AUDIENCE: 'a',
      AUTH_ALGORITHM: 'ES256',
    });
    expect(config).toMatchObject({ issuer: ISSUER, algorithm: 'ES256', keySet: { oidcIssuer: ISSUER } });
  });

  it.each([
    [
      'an HMAC algorithm with a key set',
      { AUTH_JWKS_URL: JWKS, AUTH_AUDIENCE: 'a', AUTH_ALGORITHM: 'HS256' },
      /^AUTH_ALGORITHM: HS256 is an HMAC algorithm/,
    ],
    [
      'a key set without an audience',
      { AUTH_OIDC_ISSUER: ISSUER },
      /^AUTH_AUDIENCE: is required with a key set/,
    ],
    [
      'two key sources',
      { AUTH_SECRET: 'x'.repeat(40), AUTH_JWKS_URL: JWKS },
      /^AUTH_JWKS_URL: is set together with AUTH_SECRET/,
    ],
    [
      'a plain-http key set elsewhere than loopback',
      { AUTH_JWKS_URL: 'http://issuer.example/jwks', AUTH_AUDIENCE: 'a' },
      /^AUTH_JWKS_URL: must be an https URL/,
    ],
    [
      'an issuer other than the OIDC issuer',
      { AUTH_OIDC_ISSUER: ISSUER, AUTH_ISSUER: 'https://other', AUTH_AUDIENCE: 'a' },
      /^AUTH_ISSUER: differs from AUTH_OIDC_ISSUER/,
    ],
    [
      'a subject policy entry without scopes',
      { AUTH_SECRET: 'x'.repeat(40), AUTH_SUBJECT_SCOPES: 'system:serviceaccount:a:*=' },
      /^AUTH_SUBJECT_SCOPES: expected entries/,
    ],
  ])('refuses %s', (_name, env, message) => {
    expect(refusal(env)).toMatch(message);
  });

  it('names the prefixed variables of the admin API', () => {
    expect(refusal({}, 'ADMIN_AUTH')).toMatch(
      /^ADMIN_AUTH_SECRET: is required when ADMIN_AUTH_ALGORITHM is HS256/,
    );
    expect(refusal({ ADMIN_AUTH_JWKS_URL: JWKS }, 'ADMIN_AUTH')).toMatch(/^ADMIN_AUTH_AUDIENCE: /);
    // The ingest variables do not configure the admin API.
    expect(refusal({ AUTH_SECRET: 'x'.repeat(40) }, 'ADMIN_AUTH')).toMatch(/^ADMIN_AUTH_SECRET: /);
  });

  it('takes EC and Ed25519 PEM keys for ES256, ES384 and EdDSA, each only for its own curve', () => {
    const pem = (k: ReturnType<typeof generateKeyPairSync>) =>
      k.publicKey.export({ type: 'spki', format: 'pem' }).toString();
    const p256 = pem(generateKeyPairSync('ec', { namedCurve: 'P-256' }));
    const p384 = pem(generateKeyPairSync('ec', { namedCurve: 'P-384' }));
    const ed = pem(generateKeyPairSync('ed25519'));
    expect(
      authConfigFromEnv({ AUTH_ALGORITHM: 'ES256', AUTH_PUBLIC_KEY: p256, AUTH_AUDIENCE: 'a' }),
    ).toMatchObject({
      algorithm: 'ES256',
    });
    expect(
      authConfigFromEnv({ AUTH_ALGORITHM: 'ES384', AUTH_PUBLIC_KEY: p384, AUTH_AUDIENCE: 'a' }),
    ).toMatchObject({
      algorithm: 'ES384',
    });
    expect(
      authConfigFromEnv({ AUTH_ALGORITHM: 'EdDSA', AUTH_PUBLIC_KEY: ed, AUTH_AUDIENCE: 'a' }),
    ).toMatchObject({
      algorithm: 'EdDSA',
    });
    expect(refusal({ AUTH_ALGORITHM: 'ES256', AUTH_PUBLIC_KEY: p384 })).toMatch(
      /^AUTH_PUBLIC_KEY: is a ec secp384r1 key; ES256 needs ec prime256v1/,
    );
    expect(refusal({ AUTH_ALGORITHM: 'EdDSA', AUTH_PUBLIC_KEY: p256 })).toMatch(/^AUTH_PUBLIC_KEY: /);
  });
});

describe('subject policy', () => {
  const policy = parseSubjectScopes(
    'system:serviceaccount:payments:*=events:write; system:serviceaccount:*:exporter=events:write events:read\nsystem:serviceaccount:ops:replayer=events:admin',
    { anyNamespace: true },
  );

  it('grants by namespace and by name, a star staying within one segment', () => {
    expect(grantedScopes(policy, 'system:serviceaccount:payments:api')).toEqual(['events:write']);
    expect(grantedScopes(policy, 'system:serviceaccount:billing:exporter')).toEqual([
      'events:write',
      'events:read',
    ]);
    expect(grantedScopes(policy, 'system:serviceaccount:ops:replayer')).toEqual(['events:admin']);
    expect(grantedScopes(policy, 'system:serviceaccount:payments-eu:api')).toEqual([]);
    expect(grantedScopes(policy, 'system:serviceaccount:pay:ments:api')).toEqual([]);
    expect(grantedScopes(policy, 'system:serviceaccount:ops:replayer2')).toEqual([]);
  });

  it('refuses a * in the namespace segment unless acknowledged: whoever creates a namespace would get the scopes', () => {
    for (const pattern of [
      'system:serviceaccount:*:exporter',
      'system:serviceaccount:team-*:api',
      '*:*:*:*',
    ]) {
      expect(() =>
        authConfigFromEnv({ AUTH_SECRET: 'x'.repeat(40), AUTH_SUBJECT_SCOPES: `${pattern}=events:write` }),
      ).toThrow(
        /^AUTH_SUBJECT_SCOPES: .* has a \* in the namespace segment: .* set AUTH_SUBJECT_SCOPES_ANY_NAMESPACE=true/,
      );
    }
    const acknowledged = authConfigFromEnv({
      AUTH_SECRET: 'x'.repeat(40),
      AUTH_SUBJECT_SCOPES: 'system:serviceaccount:*:exporter=events:write',
      AUTH_SUBJECT_SCOPES_ANY_NAMESPACE: 'true',
    });
    expect(acknowledged.enabled && acknowledged.subjectScopes.map((g) => g.pattern)).toEqual([
      'system:serviceaccount:*:exporter',
    ]);
    // A star in the name only, or a subject that is not a service account, spans no namespace.
    expect(parseSubjectScopes('system:serviceaccount:payments:*=s; user-*=s')).toHaveLength(2);
  });

  it('treats regular-expression characters in a pattern literally', () => {
    const [grant] = parseSubjectScopes('a.b+c=s');
    expect(grant!.matcher.test('a.b+c')).toBe(true);
    expect(grant!.matcher.test('axbbc')).toBe(false);
  });

  it('adds the granted scopes to a verified token, and a subject outside the policy gets 403 scope-missing', async () => {
    const secret = 'subject-policy-secret-0123456789abcdef';
    const verifier = createVerifier(
      authConfigFromEnv(
        { AUTH_SECRET: secret, AUTH_SUBJECT_SCOPES: 'system:serviceaccount:payments:*=events:write' },
        { defaultScope: 'events:write' },
      ),
    );
    const inside = await signDevToken({ secret, subject: 'system:serviceaccount:payments:api' });
    const outside = await signDevToken({ secret, subject: 'system:serviceaccount:other:api' });
    const accepted = await verifier.verify(`Bearer ${inside}`);
    expect(accepted.ok && [...accepted.principal.scopes]).toEqual(['events:write']);
    const refused = await verifier.verify(`Bearer ${outside}`);
    expect(refused).toMatchObject({ ok: false, reason: 'scope-missing', error: { code: 403 } });
  });
});

describe('maximum token age', () => {
  it('refuses a cached token once it is older than the bound, though exp is far away', async () => {
    const secret = 'max-age-secret-0123456789abcdefghijkl';
    let now = new Date('2030-01-01T00:00:00Z');
    const verifier = createVerifier(
      authConfigFromEnv({ AUTH_SECRET: secret, AUTH_MAX_TOKEN_AGE: '10m', AUTH_LEEWAY: '0s' }),
      { now: () => now },
    );
    const token = `Bearer ${await signDevToken({ secret, now, ttl: '24h' })}`;
    expect(await verifier.verify(token)).toMatchObject({ ok: true });
    now = new Date(now.getTime() + 9 * 60_000);
    expect(await verifier.verify(token)).toMatchObject({ ok: true });
    now = new Date(now.getTime() + 2 * 60_000);
    expect(await verifier.verify(token)).toMatchObject({ ok: false, reason: 'expired' });
  });

  it('bounds the age by 24 h unless set: a day-old token is refused though its exp is a week away', async () => {
    const secret = 'max-age-secret-0123456789abcdefghijkl';
    const issued = new Date('2030-01-01T00:00:00Z');
    let now = issued;
    const verifier = createVerifier(authConfigFromEnv({ AUTH_SECRET: secret, AUTH_LEEWAY: '0s' }), {
      now: () => now,
    });
    const token = `Bearer ${await signDevToken({ secret, now: issued, ttl: '7d' })}`;
    now = new Date(issued.getTime() + 23 * 3_600_000);
    expect(await verifier.verify(token)).toMatchObject({ ok: true });
    now = new Date(issued.getTime() + 25 * 3_600_000);
    expect(await verifier.verify(token)).toMatchObject({ ok: false, reason: 'expired' });
  });

  it('refuses a token without iat when a maximum age is set', async () => {
    const secret = 'max-age-secret-0123456789abcdefghijkl';
    const verifier = createVerifier(authConfigFromEnv({ AUTH_SECRET: secret, AUTH_MAX_TOKEN_AGE: '10m' }));
    const noIat = await new SignJWT({})
      .setProtectedHeader({ alg: 'HS256' })
      .setSubject('s')
      .setExpirationTime('1h')
      .sign(new TextEncoder().encode(secret));
    expect(await verifier.verify(`Bearer ${noIat}`)).toMatchObject({ ok: false, reason: 'malformed' });
  });
});

describe('the key set fetch', () => {
  it('sends the token file only to the allowed origins, read again at every fetch', async () => {
    const seen: (string | undefined)[] = [];
    const servers = await Promise.all(
      [0, 1].map(
        () =>
          new Promise<Server>((resolve) => {
            const server = createServer((req, res) => {
              seen.push(req.headers.authorization);
              res.end('{}');
            });
            server.listen(0, '127.0.0.1', () => resolve(server));
          }),
      ),
    );
    const urls = servers.map((s) => `http://127.0.0.1:${(s.address() as { port: number }).port}/jwks`);
    const dir = mkdtempSync(join(tmpdir(), 'key-fetch-'));
    const tokenFile = join(dir, 'token');
    try {
      writeFileSync(tokenFile, 'first\n');
      const get = keyFetch({ tokenFile, tokenOrigins: new Set([new URL(urls[0]!).origin]) });
      const init = {
        method: 'GET' as const,
        redirect: 'manual' as const,
        headers: new Headers(),
        signal: AbortSignal.timeout(2000),
      };
      await get(urls[0]!, init);
      await get(urls[1]!, init);
      writeFileSync(tokenFile, 'second\n');
      await get(urls[0]!, init);
      expect(seen).toEqual(['Bearer first', undefined, 'Bearer second']);
    } finally {
      for (const s of servers) s.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
