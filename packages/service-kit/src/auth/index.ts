/**
 * Bearer JWT authentication (README, "Authentication"): configuration from the environment, the
 * pinned-algorithm verifier with its decision counter, static keys and remote key sets (JWKS,
 * OIDC discovery), scopes granted by subject, the Hono middleware, dev tokens.
 * @module
 */
export {
  AUTH_ALGORITHMS,
  type AuthAlgorithm,
  type AuthConfig,
  type AuthConfigOptions,
  type AuthDisabled,
  type AuthEnabled,
  authConfigFromEnv,
  EC_ALGORITHMS,
  HMAC_ALGORITHMS,
  isHmac,
  type KeySetSettings,
  MAX_LEEWAY_MS,
  MIN_HMAC_SECRET_BYTES,
  MIN_RSA_MODULUS_BITS,
  PUBLIC_KEY_ALGORITHMS,
  type PublicKeyAlgorithm,
  RSA_ALGORITHMS,
} from './config.js';
export { type DevTokenOptions, randomDevSecret, signDevToken } from './dev-token.js';
export { KEY_SET_FETCHES, KEY_SET_STALENESS, KeySetError, RemoteKeySet } from './key-set.js';
export { type AuthVariables, principalOf, requireAuth } from './middleware.js';
export { Remembered } from './remembered.js';
export { grantedScopes, parseSubjectScopes, type SubjectGrant } from './subject-policy.js';
export {
  ANONYMOUS,
  AUTH_DECISIONS,
  AUTH_REASONS,
  type AuthDecision,
  type AuthFailureReason,
  type AuthReason,
  createVerifier,
  DEFAULT_TOKEN_CACHE_SIZE,
  type Principal,
  reasonForJoseError,
  scopesOf,
  type Verifier,
  type VerifierOptions,
} from './verifier.js';
