import { createPrivateKey, randomBytes } from 'node:crypto';
import { type JWTPayload, SignJWT } from 'jose';
import { parseDuration } from '../config/index.js';
import { type AuthAlgorithm, isHmac } from './config.js';

export interface DevTokenOptions {
  /** HMAC secret (HS algorithms). */
  secret?: string;
  /** Private key as PEM (RS, ES and EdDSA algorithms). */
  privateKey?: string;
  /** Written as the `kid` header, selecting the key of a key set. */
  keyId?: string;
  /** More protected header members (tests of hostile headers such as `jku`). */
  header?: Record<string, unknown>;
  /** Default `HS256`. */
  algorithm?: AuthAlgorithm;
  /** Default `dev`. */
  subject?: string;
  /** Written as a space-delimited `scope` claim. */
  scopes?: readonly string[];
  /** Lifetime, as a duration (`12h`) or milliseconds; default `24h`. */
  ttl?: string | number;
  issuer?: string;
  audience?: string | string[];
  /** Issue time; default now. */
  now?: Date;
  /** Not valid before this time; default none. */
  notBefore?: Date;
  /** More claims. */
  claims?: JWTPayload;
}

/**
 * Mints a signed JWT for `make dev` and tests. Not for production use: a real issuer mints tokens.
 *
 * @example
 * ```ts
 * const token = await signDevToken({ secret: process.env.AUTH_SECRET!, scopes: ['events:write'] });
 * await fetch(`${INGEST_URL}/v1/events`, { headers: { authorization: `Bearer ${token}` } });
 * ```
 */
export async function signDevToken(opts: DevTokenOptions): Promise<string> {
  const algorithm = opts.algorithm ?? 'HS256';
  const now = opts.now ?? new Date();
  const ttlMs = typeof opts.ttl === 'number' ? opts.ttl : parseDuration(opts.ttl ?? '24h');
  const iat = Math.floor(now.getTime() / 1000);
  let jwt = new SignJWT({ ...opts.claims, ...(opts.scopes ? { scope: opts.scopes.join(' ') } : {}) })
    .setProtectedHeader({
      ...opts.header,
      alg: algorithm,
      typ: 'JWT',
      ...(opts.keyId === undefined ? {} : { kid: opts.keyId }),
    })
    .setSubject(opts.subject ?? 'dev')
    .setIssuedAt(iat)
    .setExpirationTime(iat + Math.floor(ttlMs / 1000));
  if (opts.notBefore) jwt = jwt.setNotBefore(Math.floor(opts.notBefore.getTime() / 1000));
  if (opts.issuer !== undefined) jwt = jwt.setIssuer(opts.issuer);
  if (opts.audience !== undefined) jwt = jwt.setAudience(opts.audience);
  if (isHmac(algorithm)) {
    if (!opts.secret) throw new Error(`signDevToken: ${algorithm} needs a secret`);
    return jwt.sign(new TextEncoder().encode(opts.secret));
  }
  if (!opts.privateKey) throw new Error(`signDevToken: ${algorithm} needs a privateKey (PEM)`);
  return jwt.sign(createPrivateKey(opts.privateKey));
}

/**
 * A random HMAC secret for development: 64 hex characters, long enough for HS256, HS384 and
 * HS512 under RFC 7518's minimum.
 *
 * @example
 * ```ts
 * const secret = process.env.AUTH_SECRET || randomDevSecret();
 * ```
 */
export function randomDevSecret(): string {
  return randomBytes(32).toString('hex');
}
