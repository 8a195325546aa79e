import { generateKeyPairSync } from 'node:crypto';
import { connect } from 'node:net';
import { Hono } from 'hono';
import { SignJWT } from 'jose';
import { register as globalRegister, Registry } from 'prom-client';
import { beforeAll, describe, expect, it } from 'vitest';
import { ConfigError } from '../config/index.js';
import { serveApp } from '../server/index.js';
import {
  type AuthConfig,
  type AuthReason,
  type AuthVariables,
  authConfigFromEnv,
  createVerifier,
  requireAuth,
  signDevToken,
} from './index.js';

const SECRET = 'test-secret-0123456789-abcdefghijklmnop'; // 39 bytes, enough for HS256
const NOW = new Date('2030-01-01T00:00:00Z');
const at = (offsetSeconds: number) => new Date(NOW.getTime() + offsetSeconds * 1000);

function hsConfig(extra: Record<string, string> = {}): AuthConfig {
  return authConfigFromEnv(
    { AUTH_SECRET: SECRET, AUTH_ISSUER: 'https://issuer.test', AUTH_AUDIENCE: 'observatory', ...extra },
    { defaultScope: 'events:write' },
  );
}

function token(opts: Partial<Parameters<typeof signDevToken>[0]> = {}): Promise<string> {
  return signDevToken({
    secret: SECRET,
    scopes: ['events:write'],
    issuer: 'https://issuer.test',
    audience: 'observatory',
    now: NOW,
    ttl: '10m',
    ...opts,
  });
}

async function decisionsOf(registry: Registry): Promise<Record<string, number>> {
  const metric = await registry.getSingleMetricAsString('auth_decisions_total');
  const out: Record<string, number> = {};
  for (const line of metric.split('\n')) {
    const m = /reason="([^"]+)",outcome="([^"]+)"\} (\d+)/.exec(line);
    if (m) out[`${m[1]}/${m[2]}`] = Number(m[3]);
  }
  return out;
}

function b64url(value: unknown): string {
  return Buffer.from(JSON.stringify(value)).toString('base64url');
}

describe('verifier decisions', () => {
  const registry = new Registry();
  const verifier = createVerifier(hsConfig(), { registry, now: () => NOW });
  const cases: Array<[string, () => Promise<string | undefined>, AuthReason, number]> = [
    ['accepts a valid token with the required scope', async () => `Bearer ${await token()}`, 'accepted', 200],
    ['refuses a request without authorization as absent', async () => undefined, 'absent', 401],
    ['refuses a non-Bearer scheme as absent', async () => 'Basic dXNlcjpwYXNz', 'absent', 401],
    ['refuses a Bearer header without a token as malformed', async () => 'Bearer ', 'malformed', 401],
    [
      'refuses a token that is not three segments as malformed',
      async () => 'Bearer abc.def',
      'malformed',
      401,
    ],
    ['refuses undecodable segments as malformed', async () => 'Bearer a.b.c', 'malformed', 401],
    [
      'refuses a token without sub as malformed',
      async () => `Bearer ${await signWithout('sub')}`,
      'malformed',
      401,
    ],
    [
      'refuses a token without exp as malformed',
      async () => `Bearer ${await signWithout('exp')}`,
      'malformed',
      401,
    ],
    [
      'refuses a token signed with another secret as bad-signature',
      async () => `Bearer ${await token({ secret: 'another-secret-0123456789-abcdefghijklm' })}`,
      'bad-signature',
      401,
    ],
    [
      'refuses an expired token as expired',
      async () => `Bearer ${await token({ now: at(-3600) })}`,
      'expired',
      401,
    ],
    [
      'refuses a token not valid yet as not-yet-valid',
      async () => `Bearer ${await token({ notBefore: at(120) })}`,
      'not-yet-valid',
      401,
    ],
    [
      'refuses a token for another audience as wrong-audience',
      async () => `Bearer ${await token({ audience: 'someone-else' })}`,
      'wrong-audience',
      401,
    ],
    [
      'refuses a token from another issuer as wrong-audience',
      async () => `Bearer ${await token({ issuer: 'https://elsewhere.test' })}`,
      'wrong-audience',
      401,
    ],
    [
      'refuses a verified token lacking the scope as scope-missing',
      async () => `Bearer ${await token({ scopes: ['events:read'] })}`,
      'scope-missing',
      403,
    ],
  ];

  async function signWithout(claim: 'sub' | 'exp'): Promise<string> {
    const jwt = new SignJWT({ scope: 'events:write' })
      .setProtectedHeader({ alg: 'HS256' })
      .setIssuer('https://issuer.test')
      .setAudience('observatory')
      .setIssuedAt(Math.floor(NOW.getTime() / 1000));
    if (claim !== 'sub') jwt.setSubject('someone');
    if (claim !== 'exp') jwt.setExpirationTime(Math.floor(NOW.getTime() / 1000) + 600);
    return jwt.sign(new TextEncoder().encode(SECRET));
  }

  for (const [name, header, reason, status] of cases) {
    it(name, async () => {
      const before = await decisionsOf(registry);
      const decision = await verifier.verify(await header());
      expect(decision.reason).toBe(reason);
      const outcome = decision.ok ? 'success' : 'failure';
      if (!decision.ok) expect(decision.error.code).toBe(status);
      const after = await decisionsOf(registry);
      const key = `${reason}/${outcome}`;
      expect(after[key]).toBe((before[key] ?? 0) + 1);
      const total = (r: Record<string, number>) => Object.values(r).reduce((a, b) => a + b, 0);
      expect(total(after)).toBe(total(before) + 1); // once per decision
    });
  }

  it('tolerates exp within the leeway (30s by default)', async () => {
    const decision = await verifier.verify(`Bearer ${await token({ now: at(-620) })}`); // expired 20s ago
    expect(decision.reason).toBe('accepted');
  });

  it('accepts scope as a JSON array and puts sub, scopes and iss on the principal', async () => {
    const jwt = await token({
      scopes: undefined,
      claims: { scope: ['events:read', 'events:write'] },
      subject: 'svc-a',
    });
    const decision = await verifier.verify(`Bearer ${jwt}`);
    expect(decision.ok).toBe(true);
    if (decision.ok) {
      expect(decision.principal.subject).toBe('svc-a');
      expect([...decision.principal.scopes].sort()).toEqual(['events:read', 'events:write']);
      expect(decision.principal.issuer).toBe('https://issuer.test');
    }
  });

  it('refuses a scope claim that is neither string nor array of strings as malformed', async () => {
    const decision = await verifier.verify(
      `Bearer ${await token({ scopes: undefined, claims: { scope: 42 } })}`,
    );
    expect(decision.reason).toBe('malformed');
  });

  it('counts disabled decisions only when authentication is switched off', async () => {
    const reg = new Registry();
    const off = createVerifier(authConfigFromEnv({ AUTH_ENABLED: 'false' }), { registry: reg });
    const decision = await off.verify(undefined);
    expect(decision).toMatchObject({ ok: true, reason: 'disabled', principal: { subject: 'anonymous' } });
    const counts = await decisionsOf(reg);
    expect(counts['disabled/success']).toBe(1);
    expect(
      Object.entries(counts)
        .filter(([k]) => k !== 'disabled/success')
        .every(([, v]) => v === 0),
    ).toBe(true);
    expect(Object.keys(counts)).toHaveLength(9); // every reason is exposed from the start
  });

  it('counts nothing when no registry is given (the consumer does not count)', async () => {
    const quiet = createVerifier(hsConfig(), { now: () => NOW });
    expect((await quiet.verify(`Bearer ${await token()}`)).reason).toBe('accepted');
    expect(globalRegister.getSingleMetric('auth_decisions_total')).toBeUndefined();
  });
});

describe('verified-token cache', () => {
  it('serves a repeated token from the cache, still counting one decision per request', async () => {
    const registry = new Registry();
    const verifier = createVerifier(hsConfig(), { registry, now: () => NOW });
    const header = `Bearer ${await token({ subject: 'cached' })}`;
    const first = await verifier.verify(header);
    const second = await verifier.verify(header);
    expect(first.reason).toBe('accepted');
    expect(second.reason).toBe('accepted');
    if (first.ok && second.ok) {
      expect(second.principal).toBe(first.principal);
      expect(second.principal.subject).toBe('cached');
      expect(Object.isFrozen(second.principal)).toBe(true);
    }
    expect((await decisionsOf(registry))['accepted/success']).toBe(2);
  });

  it('re-checks exp with the leeway at every use: a cached token refuses as expired once it is', async () => {
    let now = NOW;
    const registry = new Registry();
    const verifier = createVerifier(hsConfig(), { registry, now: () => now });
    const header = `Bearer ${await token({ ttl: '10m' })}`; // exp = NOW + 600
    expect((await verifier.verify(header)).reason).toBe('accepted');
    now = at(600 + 29); // inside the 30 s leeway
    expect((await verifier.verify(header)).reason).toBe('accepted');
    now = at(600 + 30); // exp <= now - leeway
    expect((await verifier.verify(header)).reason).toBe('expired');
    expect((await verifier.verify(header)).reason).toBe('expired');
    const counts = await decisionsOf(registry);
    expect(counts['accepted/success']).toBe(2);
    expect(counts['expired/failure']).toBe(2);
  });

  it('re-checks nbf at every use when the clock goes back', async () => {
    let now = NOW;
    const verifier = createVerifier(hsConfig(), { now: () => now });
    const header = `Bearer ${await token({ notBefore: at(20) })}`; // within the leeway at NOW
    expect((await verifier.verify(header)).reason).toBe('accepted');
    now = at(-60);
    expect((await verifier.verify(header)).reason).toBe('not-yet-valid');
  });

  it('never caches refusals and never serves a different token string (one changed byte)', async () => {
    const verifier = createVerifier(hsConfig(), { now: () => NOW });
    const good = await token();
    expect((await verifier.verify(`Bearer ${good}`)).reason).toBe('accepted');
    const last = good.at(-1) === 'A' ? 'B' : 'A';
    const tampered = `${good.slice(0, -1)}${last}`;
    expect((await verifier.verify(`Bearer ${tampered}`)).reason).toBe('bad-signature');
    const scopeless = await token({ scopes: ['events:read'] });
    expect((await verifier.verify(`Bearer ${scopeless}`)).reason).toBe('scope-missing');
    expect((await verifier.verify(`Bearer ${scopeless}`)).reason).toBe('scope-missing');
  });

  it('stays bounded: the least recently used token is verified again after eviction', async () => {
    const verifier = createVerifier(hsConfig(), { now: () => NOW, cacheSize: 2 });
    const [a, b, c] = await Promise.all(['a', 'b', 'c'].map((subject) => token({ subject })));
    // A cache hit returns the very principal object of the first verification; a fresh
    // verification builds a new one.
    const principals: unknown[] = [];
    for (const t of [a, b, a, c, b]) {
      const decision = await verifier.verify(`Bearer ${t}`);
      expect(decision.ok).toBe(true);
      if (decision.ok) principals.push(decision.principal);
    }
    expect(principals[2]).toBe(principals[0]); // a was cached
    expect(principals[4]).not.toBe(principals[1]); // c evicted b, the least recently used
  });
});

describe('algorithm pinning', () => {
  let rsa: { publicPem: string; privatePem: string };
  beforeAll(() => {
    const pair = generateKeyPairSync('rsa', { modulusLength: 2048 });
    rsa = {
      publicPem: pair.publicKey.export({ type: 'spki', format: 'pem' }).toString(),
      privatePem: pair.privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
    };
  });
  const rsVerifier = () =>
    createVerifier(
      authConfigFromEnv({
        AUTH_ALGORITHM: 'RS256',
        AUTH_PUBLIC_KEY: rsa.publicPem,
        AUTH_AUDIENCE: 'observatory',
      }),
      { now: () => NOW },
    );
  const hsVerifier = () => createVerifier(authConfigFromEnv({ AUTH_SECRET: SECRET }), { now: () => NOW });

  it('accepts an RS256 token signed by the private key when RS256 is pinned', async () => {
    const jwt = await signDevToken({
      algorithm: 'RS256',
      privateKey: rsa.privatePem,
      audience: 'observatory',
      now: NOW,
    });
    expect((await rsVerifier().verify(`Bearer ${jwt}`)).reason).toBe('accepted');
  });

  it('rejects an HS256 token signed with the RSA public key as the secret when RS256 is pinned', async () => {
    const jwt = await signDevToken({ algorithm: 'HS256', secret: rsa.publicPem, now: NOW });
    const decision = await rsVerifier().verify(`Bearer ${jwt}`);
    expect(decision.reason).toBe('bad-signature');
    expect(decision.ok).toBe(false);
  });

  it('rejects an unsigned alg:none token', async () => {
    const payload = { sub: 'x', exp: Math.floor(NOW.getTime() / 1000) + 600, scope: 'events:write' };
    const unsigned = `${b64url({ alg: 'none', typ: 'JWT' })}.${b64url(payload)}.`;
    for (const verifier of [hsVerifier(), rsVerifier()]) {
      const decision = await verifier.verify(`Bearer ${unsigned}`);
      expect(decision.reason).toBe('bad-signature');
    }
  });

  it('rejects a token whose alg differs from the pinned one (HS512 and RS256 against HS256)', async () => {
    const hs512 = await signDevToken({ algorithm: 'HS512', secret: 'x'.repeat(64), now: NOW });
    const rs256 = await signDevToken({ algorithm: 'RS256', privateKey: rsa.privatePem, now: NOW });
    expect((await hsVerifier().verify(`Bearer ${hs512}`)).reason).toBe('bad-signature');
    expect((await hsVerifier().verify(`Bearer ${rs256}`)).reason).toBe('bad-signature');
  });

  it('accepts AUTH_PUBLIC_KEY with literal \\n escapes (one-line environment values)', () => {
    const oneLine = rsa.publicPem.trim().replace(/\n/g, '\\n');
    expect(
      authConfigFromEnv({ AUTH_ALGORITHM: 'RS256', AUTH_PUBLIC_KEY: oneLine, AUTH_AUDIENCE: 'observatory' }),
    ).toMatchObject({
      enabled: true,
      algorithm: 'RS256',
    });
  });

  it('refuses to start with a public key but no audience: the signer signs for other services too', () => {
    expect(() => authConfigFromEnv({ AUTH_ALGORITHM: 'RS256', AUTH_PUBLIC_KEY: rsa.publicPem })).toThrow(
      /^AUTH_AUDIENCE: is required with a public key/,
    );
  });

  it('refuses to start with a private key, a non-RSA key or a short RSA key in AUTH_PUBLIC_KEY', () => {
    const ec = generateKeyPairSync('ec', { namedCurve: 'P-256' }).publicKey.export({
      type: 'spki',
      format: 'pem',
    });
    const short = generateKeyPairSync('rsa', { modulusLength: 1024 }).publicKey.export({
      type: 'spki',
      format: 'pem',
    });
    for (const key of [rsa.privatePem, ec.toString(), short.toString()]) {
      expect(() => authConfigFromEnv({ AUTH_ALGORITHM: 'RS256', AUTH_PUBLIC_KEY: key })).toThrow(
        /^AUTH_PUBLIC_KEY: /,
      );
    }
  });
});

describe('start-up refusals', () => {
  const refusals: Array<[string, Record<string, string>, RegExp]> = [
    ['no key material at all (enabled by default)', {}, /^AUTH_SECRET: is required/],
    ['an HMAC algorithm without a secret', { AUTH_ALGORITHM: 'HS384' }, /^AUTH_SECRET: is required/],
    [
      'an HMAC secret shorter than the hash',
      { AUTH_SECRET: 'short' },
      /^AUTH_SECRET: HS256 needs .* at least 32 bytes/,
    ],
    [
      'HS512 with a 40-byte secret',
      { AUTH_ALGORITHM: 'HS512', AUTH_SECRET: 'y'.repeat(40) },
      /at least 64 bytes/,
    ],
    [
      'an RSA algorithm without a public key',
      { AUTH_ALGORITHM: 'RS256', AUTH_SECRET: SECRET },
      /^AUTH_PUBLIC_KEY: is required/,
    ],
    [
      'an unparseable public key',
      { AUTH_ALGORITHM: 'RS512', AUTH_PUBLIC_KEY: 'not a pem' },
      /^AUTH_PUBLIC_KEY: is not a PEM/,
    ],
    [
      'an unknown algorithm',
      { AUTH_ALGORITHM: 'PS256', AUTH_SECRET: SECRET },
      /^AUTH_ALGORITHM: expected one of HS256/,
    ],
    ['alg none', { AUTH_ALGORITHM: 'none', AUTH_SECRET: SECRET }, /^AUTH_ALGORITHM: /],
    [
      'AUTH_ENABLED that is not true or false',
      { AUTH_ENABLED: 'no', AUTH_SECRET: SECRET },
      /^AUTH_ENABLED: expected true or false/,
    ],
    [
      'a leeway that is not small',
      { AUTH_SECRET: SECRET, AUTH_LEEWAY: '1h' },
      /^AUTH_LEEWAY: expected a duration from 0ms to 5m/,
    ],
  ];
  for (const [name, env, message] of refusals) {
    it(`refuses to start with ${name}`, () => {
      let error: unknown;
      try {
        authConfigFromEnv(env);
      } catch (err) {
        error = err;
      }
      expect(error).toBeInstanceOf(ConfigError);
      expect((error as Error).message).toMatch(message);
      expect((error as Error).message).not.toContain('\n');
      expect((error as Error).message).not.toContain(SECRET);
    });
  }

  it('starts without key material only when AUTH_ENABLED=false is explicit', () => {
    expect(authConfigFromEnv({ AUTH_ENABLED: 'false' })).toEqual({ enabled: false });
    expect(authConfigFromEnv({ AUTH_ENABLED: 'FALSE' })).toEqual({ enabled: false });
  });

  it('applies the defaults: HS256, leeway 30s, the service scope; AUTH_REQUIRED_SCOPE overrides it', () => {
    expect(hsConfig()).toMatchObject({ algorithm: 'HS256', leewayMs: 30_000, requiredScope: 'events:write' });
    expect(hsConfig({ AUTH_REQUIRED_SCOPE: 'events:admin', AUTH_LEEWAY: '5s' })).toMatchObject({
      requiredScope: 'events:admin',
      leewayMs: 5000,
    });
  });
});

describe('requireAuth middleware', () => {
  const app = new Hono<{ Variables: AuthVariables }>();
  app.use('/v1/*', requireAuth(createVerifier(hsConfig(), { now: () => NOW })));
  app.post('/v1/events', (c) => c.json({ subject: c.get('principal').subject }));

  it('puts the principal on the context', async () => {
    const res = await app.request('/v1/events', {
      method: 'POST',
      headers: { authorization: `Bearer ${await token({ subject: 'producer-1' })}` },
    });
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ subject: 'producer-1' });
  });

  it('refuses a request repeating authorization, even when its first copy is valid (served by Node.js)', async () => {
    const server = await serveApp(app, { host: '127.0.0.1', port: 0 });
    try {
      const valid = await token();
      const status = await new Promise<string>((resolve, reject) => {
        const socket = connect(server.port, '127.0.0.1', () =>
          socket.end(
            `POST /v1/events HTTP/1.1\r\nhost: x\r\nconnection: close\r\ncontent-length: 0\r\n` +
              `authorization: Bearer ${valid}\r\nauthorization: Bearer other\r\n\r\n`,
          ),
        );
        let head = '';
        socket.on('data', (c: Buffer) => {
          head += c.toString('latin1');
        });
        socket.on('end', () => resolve(head.split('\r\n')[0]!));
        socket.on('error', reject);
      });
      expect(status).toBe('HTTP/1.1 401 Unauthorized');
    } finally {
      await server.close();
    }
  });

  it('answers an absent credential with 401, a bare Bearer challenge and UNAUTHENTICATED', async () => {
    const res = await app.request('/v1/events', { method: 'POST' });
    expect(res.status).toBe(401);
    expect(res.headers.get('www-authenticate')).toBe('Bearer');
    expect(await res.json()).toMatchObject({ error: { code: 401, status: 'UNAUTHENTICATED', details: [] } });
  });

  it('answers a credential that does not verify with error="invalid_token"', async () => {
    const res = await app.request('/v1/events', {
      method: 'POST',
      headers: { authorization: 'Bearer a.b.c' },
    });
    expect(res.status).toBe(401);
    expect(res.headers.get('www-authenticate')).toBe('Bearer error="invalid_token"');
  });

  it('answers a missing scope with 403 PERMISSION_DENIED and error="insufficient_scope"', async () => {
    const res = await app.request('/v1/events', {
      method: 'POST',
      headers: { authorization: `Bearer ${await token({ scopes: ['events:read'] })}` },
    });
    expect(res.status).toBe(403);
    expect(res.headers.get('www-authenticate')).toBe(
      'Bearer error="insufficient_scope", scope="events:write"',
    );
    expect(await res.json()).toMatchObject({ error: { code: 403, status: 'PERMISSION_DENIED' } });
  });
});
