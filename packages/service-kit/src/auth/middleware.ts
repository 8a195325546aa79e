import type { Context, MiddlewareHandler } from 'hono';
import { errorResponse } from '../errors/index.js';
import { requestHeader } from '../server/headers.js';
import type { Principal, Verifier } from './verifier.js';

/** Context variables set by `requireAuth`; use as `new Hono<{ Variables: AuthVariables }>()`. */
export interface AuthVariables {
  principal: Principal;
}

/**
 * Hono middleware that verifies the bearer token of every request it guards and puts the
 * principal on the context (`c.get('principal')`). A refusal answers at once with the spec's
 * error body: 401 UNAUTHENTICATED with `WWW-Authenticate: Bearer` (no credential) or
 * `Bearer error="invalid_token"`, 403 PERMISSION_DENIED with `error="insufficient_scope"`.
 *
 * @example
 * ```ts
 * const app = new Hono<{ Variables: AuthVariables }>();
 * app.use('/v1/*', requireAuth(verifier));
 * app.post('/v1/events', (c) => c.json({ by: c.get('principal').subject }));
 * ```
 */
export function requireAuth(verifier: Verifier): MiddlewareHandler<{ Variables: AuthVariables }> {
  return async function requireAuthMiddleware(c, next) {
    const decision = await verifier.verify(requestHeader(c, 'authorization'));
    if (!decision.ok) return errorResponse(c, decision.error);
    c.set('principal', decision.principal);
    await next();
  };
}

/** The principal `requireAuth` put on the context; throws when the route is not guarded. */
export function principalOf(c: Context): Principal {
  const principal = c.get('principal') as Principal | undefined;
  if (!principal)
    throw new Error('principalOf: no principal on the context; is the route behind requireAuth?');
  return principal;
}
