import { createPublicKey, type KeyObject } from 'node:crypto';
import {
  bool,
  ConfigError,
  custom,
  duration,
  type Env,
  oneOf,
  readConfig,
  str,
  url,
} from '../config/index.js';
import { parseSubjectScopes, type SubjectGrant } from './subject-policy.js';

export const HMAC_ALGORITHMS = ['HS256', 'HS384', 'HS512'] as const;
export const RSA_ALGORITHMS = ['RS256', 'RS384', 'RS512'] as const;
export const EC_ALGORITHMS = ['ES256', 'ES384'] as const;
/** Algorithms verified with a public key: a PEM key or a key set. */
export const PUBLIC_KEY_ALGORITHMS = [...RSA_ALGORITHMS, ...EC_ALGORITHMS, 'EdDSA'] as const;
export const AUTH_ALGORITHMS = [...HMAC_ALGORITHMS, ...PUBLIC_KEY_ALGORITHMS] as const;
export type AuthAlgorithm = (typeof AUTH_ALGORITHMS)[number];
export type PublicKeyAlgorithm = (typeof PUBLIC_KEY_ALGORITHMS)[number];

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
/**
 * `AUTH_MAX_TOKEN_AGE` unless set: a token issued longer ago is refused even before its `exp`,
 * so a leaked long-lived token stops working within a day. The token tool's default lifetime is
 * as long; a Kubernetes service-account token lives an hour by default.
 */
export const DEFAULT_MAX_TOKEN_AGE = '24h';

export type AuthConfig = AuthDisabled | AuthEnabled;

export interface AuthDisabled {
  enabled: false;
}

/** Where a key set comes from and how it is kept (see `key-set.ts`). */
export interface KeySetSettings {
  /** The JWKS URL (`AUTH_JWKS_URL`); absent when discovered from `oidcIssuer`. */
  jwksUrl?: string;
  /** The issuer whose `/.well-known/openid-configuration` names the key set (`AUTH_OIDC_ISSUER`). */
  oidcIssuer?: string;
  /** PEM file of the authority that signs the key set server's certificate (`AUTH_JWKS_CA_FILE`). */
  caFile?: string;
  /** File whose content is sent as a bearer token to the key set's own origin (`AUTH_JWKS_TOKEN_FILE`). */
  tokenFile?: string;
  /** The cache bound: keys are fetched again this often (`AUTH_JWKS_REFRESH`). */
  refreshMs: number;
  /** Least time between two fetches caused by an unknown `kid` (`AUTH_JWKS_COOLDOWN`). */
  cooldownMs: number;
  /** One fetch's time limit (`AUTH_JWKS_TIMEOUT`). */
  timeoutMs: number;
}

interface AuthCommon {
  enabled: true;
  algorithm: AuthAlgorithm;
  issuer?: string;
  audience?: string;
  requiredScope?: string;
  leewayMs: number;
  /** The claim read as the token's scopes: `scope` or e.g. `scp`. */
  scopeClaim: string;
  /** Tokens whose `iat` lies further back are refused as expired (`iat` then required); absent: no bound. */
  maxTokenAgeMs?: number;
  /** Scopes granted by subject, added to the token's own. */
  subjectScopes: readonly SubjectGrant[];
}

export type AuthEnabled = AuthCommon &
  (
    | {
        /** The HMAC secret bytes or the public key, checked at start-up. */ key: Uint8Array | KeyObject;
        keySet?: undefined;
      }
    | { keySet: KeySetSettings; key?: undefined }
  );

export interface AuthConfigOptions {
  /** Scope required when `AUTH_REQUIRED_SCOPE` is unset (ingest: `events:write`); none if absent. */
  defaultScope?: string;
  /** Prefix of every variable name; default `AUTH` (the consumer's admin API reads `ADMIN_AUTH`). */
  prefix?: string;
}

/**
 * Reads the verifier's settings from the environment and refuses (throws `ConfigError`) when
 * authentication is enabled without usable key material: an unknown `AUTH_ALGORITHM`, an HMAC
 * algorithm without `AUTH_SECRET` or with one shorter than RFC 7518 allows, a public-key algorithm
 * without `AUTH_PUBLIC_KEY`, `AUTH_JWKS_URL` or `AUTH_OIDC_ISSUER`, a PEM key that does not fit the
 * algorithm, an HMAC algorithm with a key set, a public key or key set without `AUTH_AUDIENCE`, or a
 * subject pattern granting every namespace without `AUTH_SUBJECT_SCOPES_ANY_NAMESPACE=true`.
 * Every name starts with `opts.prefix` (default `AUTH`) instead of `AUTH`.
 *
 * | variable | default |
 * |---|---|
 * | `AUTH_ENABLED` | `true` (only `false` switches authentication off) |
 * | `AUTH_ALGORITHM` | `RS256` with a key set, `HS256` otherwise |
 * | `AUTH_SECRET` / `AUTH_PUBLIC_KEY` / `AUTH_JWKS_URL` / `AUTH_OIDC_ISSUER` | none: exactly one |
 * | `AUTH_JWKS_CA_FILE`, `AUTH_JWKS_TOKEN_FILE` | none |
 * | `AUTH_JWKS_REFRESH`, `AUTH_JWKS_COOLDOWN`, `AUTH_JWKS_TIMEOUT` | `5m`, `30s`, `5s` |
 * | `AUTH_ISSUER`, `AUTH_AUDIENCE` | none (not checked); the OIDC issuer is the issuer; a public key or key set needs an audience |
 * | `AUTH_REQUIRED_SCOPE` | `opts.defaultScope` |
 * | `AUTH_SCOPE_CLAIM` | `scope` |
 * | `AUTH_MAX_TOKEN_AGE` | `24h` (tokens need `iat`) |
 * | `AUTH_SUBJECT_SCOPES` | none |
 * | `AUTH_SUBJECT_SCOPES_ANY_NAMESPACE` | `false`: a `*` namespace segment is refused |
 * | `AUTH_LEEWAY` | `30s` (at most `5m`) |
 *
 * @example
 * ```ts
 * const authConfig = authConfigFromEnv(process.env, { defaultScope: 'events:write' });
 * const verifier = createVerifier(authConfig, { registry });
 * await verifier.start(); // fetches a key set; a static key starts at once
 * ```
 */
export function authConfigFromEnv(env: Env, opts: AuthConfigOptions = {}): AuthConfig {
  const p = opts.prefix ?? 'AUTH';
  const { enabled } = readConfig(env, { enabled: bool(`${p}_ENABLED`).default(true) });
  if (!enabled) return { enabled: false };
  const sources = ['SECRET', 'PUBLIC_KEY', 'JWKS_URL', 'OIDC_ISSUER'].filter(
    (name) => (env[`${p}_${name}`] ?? '').trim() !== '',
  );
  if (sources.length > 1) {
    throw new ConfigError(
      `${p}_${sources[1]}`,
      `is set together with ${p}_${sources[0]}; set only one key source`,
    );
  }
  const keySetGiven = sources[0] === 'JWKS_URL' || sources[0] === 'OIDC_ISSUER';
  const cfg = readConfig(env, {
    algorithm: oneOf(`${p}_ALGORITHM`, AUTH_ALGORITHMS).default(keySetGiven ? 'RS256' : 'HS256'),
    issuer: str(`${p}_ISSUER`).optional(),
    audience: str(`${p}_AUDIENCE`).optional(),
    requiredScope: str(`${p}_REQUIRED_SCOPE`, {
      pattern: /^\S+$/,
      hint: 'a single scope without spaces',
    }).optional(),
    leewayMs: duration(`${p}_LEEWAY`, { min: 0, max: MAX_LEEWAY_MS }).default('30s'),
    scopeClaim: str(`${p}_SCOPE_CLAIM`, {
      pattern: /^[\w.:-]+$/,
      hint: 'a claim name such as scope or scp',
    }).default('scope'),
    maxTokenAgeMs: duration(`${p}_MAX_TOKEN_AGE`, { min: 1000 }).default(DEFAULT_MAX_TOKEN_AGE),
    anyNamespace: bool(`${p}_SUBJECT_SCOPES_ANY_NAMESPACE`).default(false),
  });
  const subjectScopes = readConfig(env, {
    grants: custom(`${p}_SUBJECT_SCOPES`, (raw) =>
      parseSubjectScopes(raw, {
        anyNamespace: cfg.anyNamespace,
        acknowledge: `${p}_SUBJECT_SCOPES_ANY_NAMESPACE`,
      }),
    ).default([]),
  }).grants;
  const requiredScope = cfg.requiredScope ?? opts.defaultScope;
  const common: AuthCommon = {
    enabled: true,
    algorithm: cfg.algorithm,
    leewayMs: cfg.leewayMs,
    scopeClaim: cfg.scopeClaim,
    subjectScopes,
    maxTokenAgeMs: cfg.maxTokenAgeMs,
    ...(cfg.issuer === undefined ? {} : { issuer: cfg.issuer }),
    ...(cfg.audience === undefined ? {} : { audience: cfg.audience }),
    ...(requiredScope === undefined ? {} : { requiredScope }),
  };
  if (keySetGiven) return { ...common, ...keySetConfig(env, p, common) };
  if (isHmac(cfg.algorithm)) return { ...common, key: hmacSecret(env, p, cfg.algorithm) };
  const key = publicKey(env, p, cfg.algorithm);
  requireAudience(p, common, 'a public key');
  return { ...common, key };
}

export function isHmac(alg: AuthAlgorithm): alg is (typeof HMAC_ALGORITHMS)[number] {
  return alg.startsWith('HS');
}

/** https, or http to a loopback host (tests and a sidecar). */
const keySetUrl = (variable: string) => url(variable, { protocols: ['https:', 'http:'] }).optional();

function keySetConfig(env: Env, p: string, common: AuthCommon): { keySet: KeySetSettings; issuer?: string } {
  if (isHmac(common.algorithm)) {
    throw new ConfigError(
      `${p}_ALGORITHM`,
      `${common.algorithm} is an HMAC algorithm; a public key set verifies ${PUBLIC_KEY_ALGORITHMS.join(', ')}`,
    );
  }
  requireAudience(p, common, 'a key set');
  const s = readConfig(env, {
    jwksUrl: keySetUrl(`${p}_JWKS_URL`),
    oidcIssuer: keySetUrl(`${p}_OIDC_ISSUER`),
    caFile: str(`${p}_JWKS_CA_FILE`).optional(),
    tokenFile: str(`${p}_JWKS_TOKEN_FILE`).optional(),
    refreshMs: duration(`${p}_JWKS_REFRESH`, { min: 1000 }).default('5m'),
    cooldownMs: duration(`${p}_JWKS_COOLDOWN`, { min: 0 }).default('30s'),
    timeoutMs: duration(`${p}_JWKS_TIMEOUT`, { min: 100, max: 60_000 }).default('5s'),
  });
  for (const [name, value] of [
    ['JWKS_URL', s.jwksUrl],
    ['OIDC_ISSUER', s.oidcIssuer],
  ] as const) {
    if (value !== undefined && !isSecureOrLoopback(new URL(value))) {
      throw new ConfigError(`${p}_${name}`, 'must be an https URL (http only to a loopback address)');
    }
  }
  if (s.oidcIssuer !== undefined && common.issuer !== undefined && common.issuer !== s.oidcIssuer) {
    throw new ConfigError(
      `${p}_ISSUER`,
      `differs from ${p}_OIDC_ISSUER, which is the required issuer; unset one`,
    );
  }
  const keySet: KeySetSettings = {
    refreshMs: s.refreshMs,
    cooldownMs: s.cooldownMs,
    timeoutMs: s.timeoutMs,
    ...(s.jwksUrl === undefined ? {} : { jwksUrl: s.jwksUrl }),
    ...(s.oidcIssuer === undefined ? {} : { oidcIssuer: s.oidcIssuer }),
    ...(s.caFile === undefined ? {} : { caFile: s.caFile }),
    ...(s.tokenFile === undefined ? {} : { tokenFile: s.tokenFile }),
  };
  const issuer = s.oidcIssuer ?? common.issuer;
  return { keySet, ...(issuer === undefined ? {} : { issuer }) };
}

/**
 * A key of someone else's signer (an identity provider's, a cluster's) signs tokens for many
 * services: without an audience, a token meant for any of them would pass here.
 */
function requireAudience(p: string, common: AuthCommon, source: string): void {
  if (common.audience !== undefined) return;
  throw new ConfigError(
    `${p}_AUDIENCE`,
    `is required with ${source}: without it any token of that signer, for any service, would pass`,
  );
}

function isSecureOrLoopback(u: URL): boolean {
  return u.protocol === 'https:' || ['localhost', '127.0.0.1', '[::1]'].includes(u.hostname);
}

function hmacSecret(env: Env, p: string, alg: (typeof HMAC_ALGORITHMS)[number]): Uint8Array {
  const secret = env[`${p}_SECRET`] ?? '';
  if (secret.trim() === '') {
    throw new ConfigError(
      `${p}_SECRET`,
      `is required when ${p}_ALGORITHM is ${alg} and ${p}_ENABLED is true`,
    );
  }
  const bytes = new TextEncoder().encode(secret);
  const min = MIN_HMAC_SECRET_BYTES[alg];
  if (bytes.byteLength < min) {
    throw new ConfigError(
      `${p}_SECRET`,
      `${alg} needs a secret of at least ${min} bytes (RFC 7518 section 3.2), got ${bytes.byteLength}`,
    );
  }
  return bytes;
}

/** The key type (and curve) each public-key algorithm needs. */
const KEY_TYPES: Record<PublicKeyAlgorithm, { type: string; curve?: string }> = {
  RS256: { type: 'rsa' },
  RS384: { type: 'rsa' },
  RS512: { type: 'rsa' },
  ES256: { type: 'ec', curve: 'prime256v1' },
  ES384: { type: 'ec', curve: 'secp384r1' },
  EdDSA: { type: 'ed25519' },
};

function publicKey(env: Env, p: string, alg: PublicKeyAlgorithm): KeyObject {
  const variable = `${p}_PUBLIC_KEY`;
  const raw = env[variable] ?? '';
  if (raw.trim() === '') {
    throw new ConfigError(
      variable,
      `is required (PEM) when ${p}_ALGORITHM is ${alg}, unless ${p}_JWKS_URL or ${p}_OIDC_ISSUER names a key set`,
    );
  }
  const pem = raw.includes('\\n') ? raw.replace(/\\n/g, '\n') : raw;
  if (/PRIVATE KEY-----/.test(pem)) {
    throw new ConfigError(variable, 'holds a private key; give the public key (PEM) only');
  }
  let key: KeyObject;
  try {
    key = createPublicKey({ key: pem, format: 'pem' });
  } catch {
    throw new ConfigError(variable, 'is not a PEM public key (expected -----BEGIN PUBLIC KEY-----)');
  }
  const want = KEY_TYPES[alg];
  const curve = key.asymmetricKeyDetails?.namedCurve;
  if (key.asymmetricKeyType !== want.type || (want.curve !== undefined && curve !== want.curve)) {
    const got = [key.asymmetricKeyType ?? 'unknown', curve].filter(Boolean).join(' ');
    throw new ConfigError(
      variable,
      `is a ${got} key; ${alg} needs ${[want.type, want.curve].filter(Boolean).join(' ')}`,
    );
  }
  const bits = key.asymmetricKeyDetails?.modulusLength ?? 0;
  if (want.type === 'rsa' && bits < MIN_RSA_MODULUS_BITS) {
    throw new ConfigError(
      variable,
      `RSA key of ${bits} bits is too short; at least ${MIN_RSA_MODULUS_BITS} (RFC 7518 section 3.3)`,
    );
  }
  return key;
}
