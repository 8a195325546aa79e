/**
 * The search service logging in through the devstack's OpenID provider: the provider first, then
 * the service in `oidc` mode, then the service registered as the provider's web client (its
 * redirect URI needs the service's port).
 */
import { OIDC_CLIENT_SECRET, type OidcIssuer, startOidcIssuer } from '@event-observatory/devstack';
import { storedAuthenticatorFor } from '../src/auth/index.js';
import { type Harness, startHarness } from './harness.js';

export async function startOidcHarness(
  name: string,
  sessionSecret: string,
): Promise<{ idp: OidcIssuer; h: Harness }> {
  const idp = await startOidcIssuer();
  const h = await startHarness(name, {
    authenticate: storedAuthenticatorFor({
      mode: 'oidc',
      session: { secret: sessionSecret, maxAgeMs: 3_600_000 },
      issuer: idp.issuer,
      clientId: 'search',
      clientSecret: OIDC_CLIENT_SECRET,
      groupsClaim: 'groups',
      scopes: 'openid profile email groups',
    }),
  });
  idp.addWebClient({
    clientId: 'search',
    redirectUris: [`${h.url}/auth/callback`],
    postLogoutRedirectUris: [`${h.url}/`],
  });
  return { idp, h };
}
