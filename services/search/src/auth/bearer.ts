/**
 * Bearer tokens for clients without a browser (the kubectl plugin's tail, scripts fetching
 * exports): `Authorization: Bearer <jwt>`, a token of the login's identity provider or a
 * Kubernetes service-account token, verified by the service kit's verifier (pinned algorithm, key
 * set by discovery, issuer, audience, expiry, maximum age). A request that carries one is decided
 * by it alone: a bad token is 401 `invalid_token`, never a login redirect, so a script sees why.
 */

import {
  type AuthConfig,
  authConfigFromEnv,
  createVerifier,
  type Principal,
  type VerifierOptions,
} from '@event-observatory/service-kit/auth';
import type { Env } from '@event-observatory/service-kit/config';
import { ApiError } from '@event-observatory/service-kit/errors';
import type { HealthCheck } from '@event-observatory/service-kit/health';
import type { Context } from 'hono';
import { type Authenticator, groupList, type Viewer } from '../viewer.js';

/** One kind of token and the verifier of its issuer. */
export interface BearerSource {
  /** `oidc`: the identity provider's tokens; `service-account`: the cluster's. */
  kind: 'oidc' | 'service-account';
  config: AuthConfig;
}

export interface BearerSettings {
  sources: BearerSource[];
  /** The claim holding an identity-provider token's groups (`SEARCH_OIDC_GROUPS_CLAIM`). */
  groupsClaim: string;
}

export interface BearerTokens {
  /** The viewer of a `Bearer` authorization value; throws the `ApiError` to answer otherwise. */
  viewerOf(authorization: string): Promise<Viewer>;
  /** Fetches the key sets; throws when one cannot be, so the service does not start blind. */
  start(): Promise<void>;
  close(): void;
  /** Readiness checks of the key sets. */
  readonly checks: Record<string, HealthCheck>;
}

const KEY_SOURCES = ['SECRET', 'PUBLIC_KEY', 'JWKS_URL', 'OIDC_ISSUER'];
const hasKeySource = (env: Env, prefix: string) =>
  KEY_SOURCES.some((name) => (env[`${prefix}_${name}`] ?? '').trim() !== '');

/**
 * The bearer sources the environment configures (README, "Bearer tokens"):
 * - `SEARCH_BEARER_*` (service kit's `AUTH_*` names under that prefix): the identity provider's
 *   tokens; the issuer defaults to `SEARCH_OIDC_ISSUER` and the audience to `SEARCH_OIDC_CLIENT_ID`;
 * - `SEARCH_SERVICE_ACCOUNT_*` likewise: Kubernetes service-account tokens (the API server's
 *   issuer, `_JWKS_CA_FILE` and `_JWKS_TOKEN_FILE` for its discovery, an audience of its own).
 * Throws `ConfigError` naming a bad variable.
 */
export function bearerSettingsFromEnv(env: Env): BearerSettings {
  const oidcDefaults: Record<string, string> = {};
  if (!hasKeySource(env, 'SEARCH_BEARER') && env.SEARCH_OIDC_ISSUER) {
    oidcDefaults.SEARCH_BEARER_OIDC_ISSUER = env.SEARCH_OIDC_ISSUER;
  }
  if (env.SEARCH_OIDC_CLIENT_ID) oidcDefaults.SEARCH_BEARER_AUDIENCE = env.SEARCH_OIDC_CLIENT_ID;
  const oidcEnv = { ...oidcDefaults, ...definedOnly(env) };
  const sources: BearerSource[] = [];
  for (const [kind, prefix, source] of [
    ['oidc', 'SEARCH_BEARER', oidcEnv],
    ['service-account', 'SEARCH_SERVICE_ACCOUNT', env],
  ] as const) {
    if (!hasKeySource(source, prefix)) continue;
    const config = authConfigFromEnv(source, { prefix });
    if (config.enabled) sources.push({ kind, config });
  }
  return { sources, groupsClaim: env.SEARCH_OIDC_GROUPS_CLAIM?.trim() || 'groups' };
}

function definedOnly(env: Env): Env {
  return Object.fromEntries(Object.entries(env).filter(([, v]) => v !== undefined && v !== ''));
}

const INVALID = 'Bearer error="invalid_token"';

function invalidToken(message: string, reason: string): ApiError {
  return new ApiError('Unauthorized', message, { reason, headers: { 'www-authenticate': INVALID } });
}

/** The `iss` a token claims, read without verifying it: only to choose the verifier. */
function claimedIssuer(authorization: string): string | undefined {
  const payload = authorization.replace(/^Bearer\s+/i, '').split('.')[1];
  if (payload === undefined) return undefined;
  try {
    const iss = (JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as { iss?: unknown }).iss;
    return typeof iss === 'string' ? iss : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Verifiers of the configured sources. A token goes to the source of its `iss` (else to a source
 * that checks no issuer), so each request gets exactly one decision and its exact refusal.
 */
export function createBearerTokens(settings: BearerSettings, opts: VerifierOptions = {}): BearerTokens {
  const sources = settings.sources.map((s) => ({
    ...s,
    issuer: s.config.enabled ? s.config.issuer : undefined,
    verifier: createVerifier(s.config, opts),
  }));
  // A token without a readable `iss` goes to the first source, whose verifier says what is wrong.
  const pick = (iss: string | undefined) =>
    iss === undefined
      ? sources[0]
      : (sources.find((s) => s.issuer === iss) ?? sources.find((s) => s.issuer === undefined));
  return {
    async viewerOf(authorization) {
      const source = pick(claimedIssuer(authorization));
      if (!source)
        throw invalidToken(
          'the bearer token was not issued by an issuer this service trusts',
          'wrong-audience',
        );
      const decision = await source.verifier.verify(authorization);
      if (!decision.ok) {
        // 403 insufficient_scope when a required scope is configured; every other refusal 401.
        if (decision.error.code === 403) throw decision.error;
        throw invalidToken(decision.error.message, decision.reason);
      }
      return source.kind === 'oidc'
        ? providerViewer(decision.principal, settings.groupsClaim)
        : serviceAccountViewer(decision.principal);
    },
    start: async () => {
      await Promise.all(sources.map((s) => s.verifier.start()));
    },
    close: () => {
      for (const s of sources) s.verifier.close();
    },
    checks: Object.fromEntries(
      sources.flatMap((s) =>
        Object.entries(s.verifier.checks).map(([name, check]) => [`${s.kind}-${name}`, check]),
      ),
    ),
  };
}

function providerViewer(p: Principal, groupsClaim: string): Viewer {
  const claims = p.claims as Record<string, unknown>;
  const shown = [claims.email, claims.preferred_username, claims.name].find(
    (v): v is string => typeof v === 'string' && v !== '',
  );
  return {
    subject: p.subject,
    display: shown ?? p.subject,
    groups: groupList(claims[groupsClaim]),
    via: 'bearer',
  };
}

const SERVICE_ACCOUNT = /^system:serviceaccount:([^:]+):([^:]+)$/;

/** Groups as the API server gives a service account: all of them, and those of its namespace. */
function serviceAccountViewer(p: Principal): Viewer {
  const namespace = SERVICE_ACCOUNT.exec(p.subject)?.[1];
  if (namespace === undefined) {
    throw invalidToken(
      'the bearer token is not a service-account token (system:serviceaccount:<namespace>:<name>)',
      'malformed',
    );
  }
  return {
    subject: p.subject,
    display: p.subject,
    groups: ['system:serviceaccounts', `system:serviceaccounts:${namespace}`],
    via: 'service-account',
  };
}

/**
 * A request with `Authorization: Bearer …` is decided by the token, unless `modeDecides` claims it
 * (a trusted proxy that named the user); any other goes to the mode's own authenticator (a session
 * cookie, the proxy's headers). Not used when login is off.
 */
export function withBearer(
  tokens: BearerTokens,
  modeAuthenticator: Authenticator,
  modeDecides: (c: Context) => boolean = () => false,
): Authenticator {
  return async (c, next) => {
    const authorization = c.req.header('authorization');
    if (authorization === undefined || !/^Bearer(\s|$)/i.test(authorization.trim()) || modeDecides(c)) {
      return modeAuthenticator(c, next);
    }
    c.set('viewer', await tokens.viewerOf(authorization));
    // Asked again as a long answer goes (the live tail): a verified token is remembered, so this is
    // its expiry and age checked once more, not a signature.
    c.set('loginHolds', () =>
      tokens.viewerOf(authorization).then(
        () => true,
        () => false,
      ),
    );
    await next();
  };
}
