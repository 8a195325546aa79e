import { type JWTPayload, type JWTVerifyOptions, jwtVerify } from 'jose';
import { Counter, type Registry } from 'prom-client';
import { ApiError } from '../errors/index.js';
import type { HealthCheck } from '../health/index.js';
import type { Logger } from '../logger/index.js';
import type { AuthConfig } from './config.js';
import { RemoteKeySet } from './key-set.js';
import { Remembered } from './remembered.js';
import { grantedScopes } from './subject-policy.js';

/** The closed set of `auth_decisions_total{reason}`: no other value is ever exported. */
export const AUTH_REASONS = [
  'absent',
  'malformed',
  'bad-signature',
  'expired',
  'not-yet-valid',
  'wrong-audience',
  'scope-missing',
  'accepted',
  'disabled',
] as const;
export type AuthReason = (typeof AUTH_REASONS)[number];
export type AuthFailureReason = Exclude<AuthReason, 'accepted' | 'disabled'>;

export const AUTH_DECISIONS = 'auth_decisions_total';

/** The result of verifying a token: the caller's principal. */
export interface Principal {
  subject: string;
  scopes: ReadonlySet<string>;
  issuer?: string;
  /** Every verified claim, for services that need more. */
  claims: JWTPayload;
}

/** The principal of every request when authentication is disabled. */
export const ANONYMOUS: Principal = Object.freeze({
  subject: 'anonymous',
  scopes: new Set<string>(),
  claims: {},
});

export type AuthDecision =
  | { ok: true; reason: 'accepted' | 'disabled'; principal: Principal }
  | { ok: false; reason: AuthFailureReason; error: ApiError };

export interface Verifier {
  readonly enabled: boolean;
  /** Decides on the value of an `authorization` header (undefined when absent). Never throws. */
  verify(authorization: string | undefined): Promise<AuthDecision>;
  /**
   * Fetches a key set (discovery first when configured) and starts refreshing it; throws
   * `KeySetError` when it cannot, so the service refuses to start. Nothing to do for a static key.
   */
  start(): Promise<void>;
  /** Stops refreshing the key set. */
  close(): void;
  /** Readiness checks to add to the service's: `keySet` for a key set, none for a static key. */
  readonly checks: Record<string, HealthCheck>;
}

export interface VerifierOptions {
  /**
   * Counts `auth_decisions_total{reason,outcome}` (unless `countDecisions` is false) and the key
   * set meters here; omit it to count nothing.
   */
  registry?: Registry;
  /** Default true; the consumer's admin verifier does not count decisions (`auth_decisions_total` is ingest's meter). */
  countDecisions?: boolean;
  /** Key set refresh failures are logged here. */
  logger?: Logger;
  /** Called once per decision, e.g. to log refusals at debug level. */
  onDecision?: (decision: AuthDecision) => void;
  /** The verifier's clock; default now. */
  now?: () => Date;
  /**
   * Verified tokens remembered (see `createVerifier`); default 1024, 0 turns the cache off.
   */
  cacheSize?: number;
}

/** Default number of verified tokens `createVerifier` remembers. */
export const DEFAULT_TOKEN_CACHE_SIZE = 1024;

/** A token that passed every check, with the time claims to re-check at each use. */
interface VerifiedToken {
  principal: Principal;
  /** The earlier of `exp` and `iat` plus the maximum token age. */
  exp: number;
  nbf: number | undefined;
  /** The key set generation it was verified under. */
  generation: number;
}

const BEARER = /^Bearer(?:[ \t]+(.*))?$/i;
const TOKEN68 = /^[A-Za-z0-9\-._~+/]+=*$/;

/**
 * A JWT verifier (README, "Authentication"): the algorithm pinned by configuration (the token's own
 * `alg` is never trusted: `none`, an RS token for an HS verifier or an HS token signed with the
 * RSA public key are all refused as `bad-signature`), `exp`/`nbf` with leeway, `iss` exact, `aud`
 * containing the configured audience, the required scope from `scope` (space-delimited string or
 * JSON array), `sub` as the principal's subject. `exp` and `sub` are required claims.
 * With a registry, every decision increments `auth_decisions_total{reason,outcome}` once.
 *
 * Verified-token cache: a token that was accepted is remembered by its exact string (at most
 * `cacheSize` of them, least recently used dropped first) together with its `exp` and `nbf`.
 * A later request bearing the identical string skips the signature check (which costs far more
 * than everything else a request does) but not the decision: `exp` and `nbf` are checked again
 * against the clock with the same leeway, and a token that no longer passes them is forgotten
 * and verified in full, so it gets its exact refusal. Signature, algorithm, issuer, audience,
 * subject and scope depend only on the token string and this verifier's fixed configuration, so
 * the remembered outcome cannot differ from a fresh one. Refusals are never cached. Every
 * request still counts exactly one decision.
 *
 * @example
 * ```ts
 * const verifier = createVerifier(authConfigFromEnv(process.env, { defaultScope: 'events:write' }), { registry });
 * const decision = await verifier.verify(c.req.header('authorization'));
 * if (!decision.ok) throw decision.error; // 401 UNAUTHENTICATED or 403 PERMISSION_DENIED
 * ```
 */
export function createVerifier(config: AuthConfig, opts: VerifierOptions = {}): Verifier {
  const counter =
    opts.registry && opts.countDecisions !== false ? decisionsCounter(opts.registry) : undefined;
  const record = (decision: AuthDecision): AuthDecision => {
    counter?.inc({ reason: decision.reason, outcome: decision.ok ? 'success' : 'failure' });
    opts.onDecision?.(decision);
    return decision;
  };
  if (!config.enabled) {
    return {
      enabled: false,
      verify: async () => record({ ok: true, reason: 'disabled', principal: ANONYMOUS }),
      start: async () => {},
      close: () => {},
      checks: {},
    };
  }
  const { algorithm, issuer, audience, requiredScope, leewayMs, scopeClaim, maxTokenAgeMs } = config;
  const keySet =
    config.keySet === undefined
      ? undefined
      : new RemoteKeySet(config.keySet, {
          ...(opts.registry ? { registry: opts.registry } : {}),
          ...(opts.logger ? { logger: opts.logger } : {}),
        });
  const staticKey = config.key;
  const check = (token: string, options: JWTVerifyOptions) =>
    staticKey === undefined
      ? jwtVerify(token, keySet!.getKey, options)
      : jwtVerify(token, staticKey, options);
  const generation = () => keySet?.generation ?? 0;
  const cacheSize = opts.cacheSize ?? DEFAULT_TOKEN_CACHE_SIZE;
  const toleranceSeconds = Math.floor(leewayMs / 1000);
  const verified = new Remembered<VerifiedToken>(cacheSize);
  /** The remembered principal when `token` still passes its time checks (jose's arithmetic). */
  const remembered = (token: string): Principal | undefined => {
    const now = Math.floor((opts.now ? opts.now() : new Date()).getTime() / 1000);
    return verified.get(
      token,
      (entry) =>
        entry.generation === generation() &&
        !(entry.nbf !== undefined && entry.nbf > now + toleranceSeconds) &&
        entry.exp > now - toleranceSeconds,
    )?.principal;
  };
  const remember = (token: string, principal: Principal, payload: JWTPayload, gen: number): void => {
    if (typeof payload.exp !== 'number') return;
    const ageBound =
      maxTokenAgeMs !== undefined && typeof payload.iat === 'number'
        ? payload.iat + Math.floor(maxTokenAgeMs / 1000)
        : Number.POSITIVE_INFINITY;
    verified.set(token, {
      principal,
      exp: Math.min(payload.exp, ageBound),
      nbf: typeof payload.nbf === 'number' ? payload.nbf : undefined,
      generation: gen,
    });
  };
  return {
    enabled: true,
    start: async () => keySet?.start(),
    close: () => keySet?.close(),
    checks: keySet ? { keySet: () => keySet.check() } : {},
    async verify(authorization) {
      const bearer = BEARER.exec(authorization?.trim() ?? '');
      if (!bearer) return record(refuse('absent'));
      const token = bearer[1]?.trim() ?? '';
      const known = remembered(token);
      if (known !== undefined) return record({ ok: true, reason: 'accepted', principal: known });
      if (!TOKEN68.test(token) || token.split('.').length !== 3) return record(refuse('malformed'));
      let payload: JWTPayload;
      // Read before verifying: a key set change during the check must not leave the token cached
      // under the newer generation.
      const gen = generation();
      try {
        ({ payload } = await check(token, {
          algorithms: [algorithm],
          clockTolerance: Math.floor(leewayMs / 1000),
          requiredClaims: maxTokenAgeMs === undefined ? ['exp', 'sub'] : ['exp', 'sub', 'iat'],
          ...(issuer === undefined ? {} : { issuer }),
          ...(audience === undefined ? {} : { audience }),
          ...(maxTokenAgeMs === undefined ? {} : { maxTokenAge: Math.floor(maxTokenAgeMs / 1000) }),
          ...(opts.now ? { currentDate: opts.now() } : {}),
        }));
      } catch (err) {
        return record(refuse(reasonForJoseError(err)));
      }
      const own = scopesOf(payload[scopeClaim]);
      if (typeof payload.sub !== 'string' || payload.sub === '' || own === undefined) {
        return record(refuse('malformed'));
      }
      const scopes = new Set([...own, ...grantedScopes(config.subjectScopes, payload.sub)]);
      if (requiredScope !== undefined && !scopes.has(requiredScope)) {
        return record(refuse('scope-missing', requiredScope));
      }
      // Frozen: the same principal object may serve many requests through the cache.
      const principal: Principal = Object.freeze({
        subject: payload.sub,
        scopes,
        claims: Object.freeze(payload),
        ...(typeof payload.iss === 'string' ? { issuer: payload.iss } : {}),
      });
      remember(token, principal, payload, gen);
      return record({ ok: true, reason: 'accepted', principal });
    },
  };
}

/** The counter, shared when several verifiers count into one registry; every series starts at 0. */
function decisionsCounter(registry: Registry): Counter<'reason' | 'outcome'> {
  const existing = registry.getSingleMetric(AUTH_DECISIONS);
  if (existing) return existing as Counter<'reason' | 'outcome'>;
  const counter = new Counter({
    name: AUTH_DECISIONS,
    help: 'Authentication decisions by closed-set reason and outcome, one per request',
    labelNames: ['reason', 'outcome'] as const,
    registers: [registry],
  });
  for (const reason of AUTH_REASONS) {
    counter.inc(
      { reason, outcome: reason === 'accepted' || reason === 'disabled' ? 'success' : 'failure' },
      0,
    );
  }
  return counter;
}

/**
 * Maps a jose failure to the closed reason set. A wrong `iss` counts as `wrong-audience`: the set
 * has no issuer reason, and both mean "a genuine token minted for another deployment".
 */
export function reasonForJoseError(err: unknown): AuthFailureReason {
  const code = (err as { code?: string } | undefined)?.code;
  const claim = (err as { claim?: string } | undefined)?.claim;
  const why = (err as { reason?: string } | undefined)?.reason;
  switch (code) {
    case 'ERR_JWT_EXPIRED':
      return 'expired';
    case 'ERR_JOSE_ALG_NOT_ALLOWED':
    case 'ERR_JWS_SIGNATURE_VERIFICATION_FAILED':
    // No key of the set fits the token's `kid`, `alg` and `use` (unknown, retired or `use: enc`).
    case 'ERR_JWKS_NO_MATCHING_KEY':
    case 'ERR_JWKS_MULTIPLE_MATCHING_KEYS':
      return 'bad-signature';
    case 'ERR_JWT_CLAIM_VALIDATION_FAILED':
      // `iat` fails only under a maximum token age, when it lies in the future.
      if (why === 'check_failed' && (claim === 'nbf' || claim === 'iat')) return 'not-yet-valid';
      if (why === 'check_failed' && (claim === 'aud' || claim === 'iss')) return 'wrong-audience';
      return 'malformed';
    default:
      return 'malformed';
  }
}

/** A scope claim as a space-delimited string or a JSON array of strings; `undefined` when neither. */
export function scopesOf(scope: unknown): Set<string> | undefined {
  if (scope === undefined) return new Set();
  if (typeof scope === 'string') return new Set(scope.split(/\s+/).filter((s) => s !== ''));
  if (Array.isArray(scope) && scope.every((s) => typeof s === 'string')) {
    return new Set(scope.flatMap((s: string) => s.split(/\s+/)).filter((s) => s !== ''));
  }
  return undefined;
}

const MESSAGES: Record<AuthFailureReason, string> = {
  absent: 'a bearer token is required',
  malformed: 'the bearer token is not a well-formed JWT with the required claims',
  'bad-signature': 'the bearer token signature did not verify',
  expired: 'the bearer token has expired',
  'not-yet-valid': 'the bearer token is not valid yet',
  'wrong-audience': 'the bearer token was not issued for this service',
  'scope-missing': 'the bearer token lacks the required scope',
};

function refuse(reason: AuthFailureReason, scope?: string): AuthDecision {
  if (reason === 'scope-missing') {
    const challenge = `Bearer error="insufficient_scope", scope="${scope ?? ''}"`;
    return {
      ok: false,
      reason,
      error: new ApiError('Forbidden', `${MESSAGES[reason]} ${scope ?? ''}`.trim(), {
        headers: { 'www-authenticate': challenge },
      }),
    };
  }
  const challenge = reason === 'absent' ? 'Bearer' : 'Bearer error="invalid_token"';
  return {
    ok: false,
    reason,
    error: new ApiError('Unauthorized', MESSAGES[reason], { headers: { 'www-authenticate': challenge } }),
  };
}
