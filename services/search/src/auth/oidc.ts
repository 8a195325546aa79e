/**
 * The `oidc` login: the authorization code flow with PKCE (`openid-client`). `/login` sends the
 * browser to the provider with a fresh state, nonce and code verifier sealed in the login cookie;
 * `/auth/callback` checks all three, takes the ID token's claims (groups from the configured
 * claim, else from the userinfo endpoint) and starts the session. Logout ends the provider's
 * session too when it has an end-session endpoint.
 */
import type { Logger } from '@event-observatory/service-kit/logger';
import type { Context } from 'hono';
import * as client from 'openid-client';
import { groupList, type SearchEnv, type Viewer } from '../viewer.js';
import { ErrorPage } from '../views/error.js';
import type { LoginMode } from './login.js';
import { returnPath, type SessionStore, SessionTooLargeError } from './session.js';

export interface OidcOptions {
  issuer: string;
  clientId: string;
  clientSecret: string;
  /** The claim holding the viewer's groups (an array, or one string). */
  groupsClaim: string;
  scopes: string;
  /** External base URL; unset: the origin the request came to. */
  publicUrl?: string;
  logger?: Logger;
}

export const CALLBACK_PATH = '/auth/callback';

export function oidcLogin(sessions: SessionStore, opts: OidcOptions): LoginMode {
  let discovered: Promise<client.Configuration> | undefined;
  // Discovered on first use and kept; a failure is retried by the next login, so the service
  // starts (and serves its health) while the provider is away.
  const provider = () => {
    discovered ??= client
      .discovery(
        new URL(opts.issuer),
        opts.clientId,
        undefined,
        client.ClientSecretBasic(opts.clientSecret),
        opts.issuer.startsWith('http:') ? { execute: [client.allowInsecureRequests] } : undefined,
      )
      .catch((err: unknown) => {
        discovered = undefined;
        throw err;
      });
    return discovered;
  };
  const base = (c: Context) => opts.publicUrl ?? new URL(c.req.url).origin;
  const failed = (c: Context<SearchEnv>, err: unknown) => {
    opts.logger?.warn({ err }, 'OIDC login failed');
    const message =
      err instanceof SessionTooLargeError
        ? `Your account has too many groups to keep in a session cookie. Ask for ${opts.groupsClaim} to list fewer.`
        : 'The identity provider did not complete the login. Open the site again to log in.';
    return c.html(ErrorPage({ title: 'Login failed', message }), 401);
  };

  return {
    routes: {
      'GET /login': async (c) => {
        try {
          const config = await provider();
          const verifier = client.randomPKCECodeVerifier();
          const state = client.randomState();
          const nonce = client.randomNonce();
          await sessions.beginFlow(c, { next: returnPath(c.req.query('next')), state, nonce, verifier });
          const url = client.buildAuthorizationUrl(config, {
            redirect_uri: `${base(c)}${CALLBACK_PATH}`,
            scope: opts.scopes,
            code_challenge: await client.calculatePKCECodeChallenge(verifier),
            code_challenge_method: 'S256',
            state,
            nonce,
          });
          return c.redirect(url.href, 302);
        } catch (err) {
          return failed(c, err);
        }
      },
      [`GET ${CALLBACK_PATH}`]: async (c) => {
        const flow = await sessions.takeFlow(c);
        try {
          if (flow?.state === undefined || flow.nonce === undefined || flow.verifier === undefined) {
            throw new Error('no login in progress (its cookie is missing or expired)');
          }
          const config = await provider();
          const current = new URL(`${base(c)}${CALLBACK_PATH}${new URL(c.req.url).search}`);
          const tokens = await client.authorizationCodeGrant(config, current, {
            pkceCodeVerifier: flow.verifier,
            expectedState: flow.state,
            expectedNonce: flow.nonce,
            idTokenExpected: true,
          });
          const claims = tokens.claims()!;
          const groups =
            opts.groupsClaim in claims
              ? claims[opts.groupsClaim]
              : config.serverMetadata().userinfo_endpoint
                ? (await client.fetchUserInfo(config, tokens.access_token, claims.sub))[opts.groupsClaim]
                : undefined;
          await sessions.start(c, viewerOf(claims, groups));
          return c.redirect(flow.next, 303);
        } catch (err) {
          return failed(c, err);
        }
      },
    },
    async afterLogout(c) {
      const config = await provider().catch(() => undefined);
      if (!config?.serverMetadata().end_session_endpoint) return '/';
      return client.buildEndSessionUrl(config, {
        client_id: opts.clientId,
        post_logout_redirect_uri: `${base(c)}/`,
      }).href;
    },
  };
}

function viewerOf(claims: client.IDToken, groups: unknown): Viewer {
  const text = (name: string) => (typeof claims[name] === 'string' ? (claims[name] as string) : undefined);
  return {
    subject: claims.sub,
    display: text('name') ?? text('email') ?? text('preferred_username') ?? claims.sub,
    groups: groupList(groups),
    via: 'oidc',
  };
}
