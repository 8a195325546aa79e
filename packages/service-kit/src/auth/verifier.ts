import { type JWTPayload, jwtVerify } from 'jose';
import { Counter, type Registry } from 'prom-client';
import { ApiError } from '../errors/index.js';
import type { AuthConfig } from './config.js';

/** The closed set of `auth_decisions_total{reason}` (Document 2, closed tag-value sets). */
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

/** The result of verifying a token (Document 1, Principal). */
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
}

export interface VerifierOptions {
  /** Counts `auth_decisions_total{reason,outcome}` here; omit it to count nothing (consumer). */
  registry?: Registry;
  /** Called once per decision, e.g. to log refusals at debug level. */
  onDecision?: (decision: AuthDecision) => void;
  /** The verifier's clock; default now. */
  now?: () => Date;
}

const BEARER = /^Bearer(?:[ \t]+(.*))?$/i;
const TOKEN68 = /^[A-Za-z0-9\-._~+/]+=*$/;

/**
 * A JWT verifier for Document 1 section 5: the algorithm pinned by configuration (the token's own
 * `alg` is never trusted: `none`, an RS token for an HS verifier or an HS token signed with the
 * RSA public key are all refused as `bad-signature`), `exp`/`nbf` with leeway, `iss` exact, `aud`
 * containing the configured audience, the required scope from `scope` (space-delimited string or
 * JSON array), `sub` as the principal's subject. `exp` and `sub` are required claims.
 * With a registry, every decision increments `auth_decisions_total{reason,outcome}` once.
 *
 * @example
 * ```ts
 * const verifier = createVerifier(authConfigFromEnv(process.env, { defaultScope: 'events:write' }), { registry });
 * const decision = await verifier.verify(c.req.header('authorization'));
 * if (!decision.ok) throw decision.error; // 401 UNAUTHENTICATED or 403 PERMISSION_DENIED
 * ```
 */
export function createVerifier(config: AuthConfig, opts: VerifierOptions = {}): Verifier {
  const counter = opts.registry ? decisionsCounter(opts.registry) : undefined;
  const record = (decision: AuthDecision): AuthDecision => {
    counter?.inc({ reason: decision.reason, outcome: decision.ok ? 'success' : 'failure' });
    opts.onDecision?.(decision);
    return decision;
  };
  if (!config.enabled) {
    return {
      enabled: false,
      verify: async () => record({ ok: true, reason: 'disabled', principal: ANONYMOUS }),
    };
  }
  const { algorithm, key, issuer, audience, requiredScope, leewayMs } = config;
  return {
    enabled: true,
    async verify(authorization) {
      const bearer = BEARER.exec(authorization?.trim() ?? '');
      if (!bearer) return record(refuse('absent'));
      const token = bearer[1]?.trim() ?? '';
      if (!TOKEN68.test(token) || token.split('.').length !== 3) return record(refuse('malformed'));
      let payload: JWTPayload;
      try {
        ({ payload } = await jwtVerify(token, key, {
          algorithms: [algorithm],
          clockTolerance: Math.floor(leewayMs / 1000),
          requiredClaims: ['exp', 'sub'],
          ...(issuer === undefined ? {} : { issuer }),
          ...(audience === undefined ? {} : { audience }),
          ...(opts.now ? { currentDate: opts.now() } : {}),
        }));
      } catch (err) {
        return record(refuse(reasonForJoseError(err)));
      }
      const scopes = scopesOf(payload.scope);
      if (typeof payload.sub !== 'string' || payload.sub === '' || scopes === undefined) {
        return record(refuse('malformed'));
      }
      if (requiredScope !== undefined && !scopes.has(requiredScope)) {
        return record(refuse('scope-missing', requiredScope));
      }
      const principal: Principal = {
        subject: payload.sub,
        scopes,
        claims: payload,
        ...(typeof payload.iss === 'string' ? { issuer: payload.iss } : {}),
      };
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
      return 'bad-signature';
    case 'ERR_JWT_CLAIM_VALIDATION_FAILED':
      if (why === 'check_failed' && claim === 'nbf') return 'not-yet-valid';
      if (why === 'check_failed' && (claim === 'aud' || claim === 'iss')) return 'wrong-audience';
      return 'malformed';
    default:
      return 'malformed';
  }
}

/** `scope` as a space-delimited string or a JSON array of strings; `undefined` when neither. */
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
