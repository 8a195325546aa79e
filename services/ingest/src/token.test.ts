import { randomDevSecret } from '@event-observatory/service-kit/auth';
import { describe, expect, it } from 'vitest';
import { mintToken } from './token.js';

const secret = randomDevSecret();
const decodeJwt = (jwt: string) =>
  JSON.parse(Buffer.from(jwt.split('.')[1] ?? '', 'base64url').toString()) as Record<string, unknown>;

describe('observatory-token', () => {
  it('signs sub, exp, scope events:write and the audience ingest checks, with AUTH_SECRET', async () => {
    const token = await mintToken({ AUTH_SECRET: secret, AUTH_AUDIENCE: 'observatory-ingest' }, [
      '--subject',
      'ops',
      '--ttl',
      '1h',
    ]);
    const claims = decodeJwt(token);
    expect(claims).toMatchObject({ sub: 'ops', scope: 'events:write', aud: 'observatory-ingest' });
    expect((claims.exp as number) - (claims.iat as number)).toBe(3600);
  });

  it('refuses a public-key setting in one line, naming it', async () => {
    await expect(
      mintToken({ AUTH_ALGORITHM: 'RS256', AUTH_JWKS_URL: 'https://127.0.0.1/jwks', AUTH_AUDIENCE: 'a' }, []),
    ).rejects.toThrow(/observatory-token: ingest verifies a key set/);
  });
});
