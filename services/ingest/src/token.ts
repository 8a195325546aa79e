/**
 * Mints a producer token with the ingest service's own static key (`observatory-token`, token-cli.ts):
 * the settings ingest reads (AUTH_SECRET, AUTH_ALGORITHM, AUTH_AUDIENCE, AUTH_ISSUER), a JWT with
 * `sub`, `exp` and `scope: events:write`. HMAC keys only: with a public key or a key set, tokens come
 * from whoever holds the private key.
 */
import { parseArgs } from 'node:util';
import { authConfigFromEnv, isHmac, signDevToken } from '@event-observatory/service-kit/auth';

/** The token for `args` with the settings of `env`; throws a one-line error when it cannot. */
export async function mintToken(env: Record<string, string | undefined>, args: string[]): Promise<string> {
  const { values } = parseArgs({
    args,
    options: {
      subject: { type: 'string', default: 'producer' },
      ttl: { type: 'string', default: '24h' },
      scope: { type: 'string', default: 'events:write' },
    },
  });
  const auth = authConfigFromEnv(env, { defaultScope: 'events:write' });
  if (!auth.enabled) throw new Error('observatory-token: AUTH is off here (no key): any token is accepted');
  if (auth.keySet || !isHmac(auth.algorithm))
    throw new Error(
      `observatory-token: ingest verifies ${auth.keySet ? 'a key set' : `${auth.algorithm} with a public key`}; mint tokens where the private key is`,
    );
  return signDevToken({
    secret: env.AUTH_SECRET,
    algorithm: auth.algorithm,
    subject: values.subject,
    ttl: values.ttl,
    scopes: values.scope.split(/[\s,]+/).filter(Boolean),
    ...(auth.audience ? { audience: auth.audience } : {}),
    ...(auth.issuer ? { issuer: auth.issuer } : {}),
  });
}
