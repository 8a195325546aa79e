import { createPublicKey, type KeyObject } from 'node:crypto';
import { bool, ConfigError, duration, type Env, oneOf, readConfig, str } from '../config/index.js';

export const HMAC_ALGORITHMS = ['HS256', 'HS384', 'HS512'] as const;
export const RSA_ALGORITHMS = ['RS256', 'RS384', 'RS512'] as const;
export const AUTH_ALGORITHMS = [...HMAC_ALGORITHMS, ...RSA_ALGORITHMS] as const;
export type AuthAlgorithm = (typeof AUTH_ALGORITHMS)[number];

/** RFC 7518 section 3.2: an HMAC key at least as long as the hash output. */
export const MIN_HMAC_SECRET_BYTES: Record<(typeof HMAC_ALGORITHMS)[number], number> = {
  HS256: 32,
  HS384: 48,
  HS512: 64,
};

/** RFC 7518 section 3.3: RSA keys of 2048 bits or larger. */
export const MIN_RSA_MODULUS_BITS = 2048;

/** The largest `AUTH_LEEWAY` accepted: the spec wants it small on purpose. */
export const MAX_LEEWAY_MS = 5 * 60_000;

export type AuthConfig = AuthDisabled | AuthEnabled;

export interface AuthDisabled {
  enabled: false;
}

export interface AuthEnabled {
  enabled: true;
  algorithm: AuthAlgorithm;
  /** The HMAC secret bytes or the RSA public key, checked at start-up. */
  key: Uint8Array | KeyObject;
  issuer?: string;
  audience?: string;
  requiredScope?: string;
  leewayMs: number;
}

export interface AuthConfigOptions {
  /** Scope required when `AUTH_REQUIRED_SCOPE` is unset (ingest: `events:write`); none if absent. */
  defaultScope?: string;
}

/**
 * Reads the verifier's settings from the environment and refuses (throws `ConfigError`) when
 * authentication is enabled without usable key material: an unknown `AUTH_ALGORITHM`, an HMAC
 * algorithm without `AUTH_SECRET` or with one shorter than RFC 7518 allows, an RSA algorithm
 * without `AUTH_PUBLIC_KEY` or with one that is not an RSA public key of 2048 bits or more.
 *
 * | variable | default |
 * |---|---|
 * | `AUTH_ENABLED` | `true` (only `false` switches authentication off) |
 * | `AUTH_ALGORITHM` | `HS256` |
 * | `AUTH_SECRET` / `AUTH_PUBLIC_KEY` | none |
 * | `AUTH_ISSUER`, `AUTH_AUDIENCE` | none (not checked) |
 * | `AUTH_REQUIRED_SCOPE` | `opts.defaultScope` |
 * | `AUTH_LEEWAY` | `30s` (at most `5m`) |
 *
 * @example
 * ```ts
 * const authConfig = authConfigFromEnv(process.env, { defaultScope: 'events:write' });
 * const verifier = createVerifier(authConfig, { registry });
 * ```
 */
export function authConfigFromEnv(env: Env, opts: AuthConfigOptions = {}): AuthConfig {
  const { enabled } = readConfig(env, { enabled: bool('AUTH_ENABLED').default(true) });
  if (!enabled) return { enabled: false };
  const cfg = readConfig(env, {
    algorithm: oneOf('AUTH_ALGORITHM', AUTH_ALGORITHMS).default('HS256'),
    issuer: str('AUTH_ISSUER').optional(),
    audience: str('AUTH_AUDIENCE').optional(),
    requiredScope: str('AUTH_REQUIRED_SCOPE', {
      pattern: /^\S+$/,
      hint: 'a single scope without spaces',
    }).optional(),
    leewayMs: duration('AUTH_LEEWAY', { min: 0, max: MAX_LEEWAY_MS }).default('30s'),
  });
  const key = isHmac(cfg.algorithm) ? hmacSecret(env, cfg.algorithm) : rsaPublicKey(env);
  const requiredScope = cfg.requiredScope ?? opts.defaultScope;
  return {
    enabled: true,
    algorithm: cfg.algorithm,
    key,
    leewayMs: cfg.leewayMs,
    ...(cfg.issuer === undefined ? {} : { issuer: cfg.issuer }),
    ...(cfg.audience === undefined ? {} : { audience: cfg.audience }),
    ...(requiredScope === undefined ? {} : { requiredScope }),
  };
}

export function isHmac(alg: AuthAlgorithm): alg is (typeof HMAC_ALGORITHMS)[number] {
  return alg.startsWith('HS');
}

function hmacSecret(env: Env, alg: (typeof HMAC_ALGORITHMS)[number]): Uint8Array {
  const secret = env.AUTH_SECRET ?? '';
  if (secret.trim() === '') {
    throw new ConfigError(
      'AUTH_SECRET',
      `is required when AUTH_ALGORITHM is ${alg} and AUTH_ENABLED is true`,
    );
  }
  const bytes = new TextEncoder().encode(secret);
  const min = MIN_HMAC_SECRET_BYTES[alg];
  if (bytes.byteLength < min) {
    throw new ConfigError(
      'AUTH_SECRET',
      `${alg} needs a secret of at least ${min} bytes (RFC 7518 section 3.2), got ${bytes.byteLength}`,
    );
  }
  return bytes;
}

function rsaPublicKey(env: Env): KeyObject {
  const raw = env.AUTH_PUBLIC_KEY ?? '';
  if (raw.trim() === '') {
    throw new ConfigError(
      'AUTH_PUBLIC_KEY',
      'is required (PEM) when AUTH_ALGORITHM is RS256, RS384 or RS512',
    );
  }
  const pem = raw.includes('\\n') ? raw.replace(/\\n/g, '\n') : raw;
  if (/PRIVATE KEY-----/.test(pem)) {
    throw new ConfigError('AUTH_PUBLIC_KEY', 'holds a private key; give the public key (PEM) only');
  }
  let key: KeyObject;
  try {
    key = createPublicKey({ key: pem, format: 'pem' });
  } catch {
    throw new ConfigError('AUTH_PUBLIC_KEY', 'is not a PEM public key (expected -----BEGIN PUBLIC KEY-----)');
  }
  if (key.asymmetricKeyType !== 'rsa') {
    throw new ConfigError(
      'AUTH_PUBLIC_KEY',
      `is a ${key.asymmetricKeyType ?? 'non-RSA'} key; RS algorithms need RSA`,
    );
  }
  const bits = key.asymmetricKeyDetails?.modulusLength ?? 0;
  if (bits < MIN_RSA_MODULUS_BITS) {
    throw new ConfigError(
      'AUTH_PUBLIC_KEY',
      `RSA key of ${bits} bits is too short; at least ${MIN_RSA_MODULUS_BITS} (RFC 7518 section 3.3)`,
    );
  }
  return key;
}
