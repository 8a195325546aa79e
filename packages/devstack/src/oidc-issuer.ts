/**
 * A real OpenID provider (`oidc-provider`) on this machine for the tests: discovery, a key set and
 * client-credentials JWT access tokens, with the key operations a test needs (rotate, retire,
 * publish extra entries, go down and come back); and the authorization code flow for web clients
 * (`addWebClient`), whose users (`OIDC_USERS`) log in through a plain HTML form.
 */
import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { exportJWK, exportSPKI, generateKeyPair, importJWK, type JWK, SignJWT } from 'jose';
import Provider from 'oidc-provider';

/** Scopes the provider knows; every client may ask for any of them. */
export const OIDC_SCOPES = ['events:write', 'events:admin', 'events:read'] as const;
/** Secret of every client of the provider. */
export const OIDC_CLIENT_SECRET = 'oidc-test-client-secret';

export interface OidcUser {
  password: string;
  name: string;
  email: string;
  groups: readonly string[];
}

/** The people who can log in (the account id is the `sub`), each in a group of their own. */
export const OIDC_USERS: Readonly<Record<string, OidcUser>> = {
  alice: { password: 'alice-password', name: 'Alice', email: 'alice@example.test', groups: ['team-a'] },
  bob: { password: 'bob-password', name: 'Bob', email: 'bob@example.test', groups: ['team-b'] },
  admin: { password: 'admin-password', name: 'Admin', email: 'admin@example.test', groups: ['admin'] },
};

/** A client of the authorization code flow (a web site whose users log in). */
export interface WebClient {
  clientId: string;
  redirectUris: readonly string[];
  /** Where the end-session endpoint may send the browser back to. */
  postLogoutRedirectUris?: readonly string[];
}

export type OidcSigningAlgorithm = 'RS256' | 'ES256' | 'EdDSA';

export interface OidcIssuerOptions {
  /** Address to listen on; default 127.0.0.1 (this machine's address for pods). */
  host?: string;
  /** Default 0: an ephemeral port. */
  port?: number;
  /** Default RS256. */
  algorithm?: OidcSigningAlgorithm;
  /** Client ids (each one a token subject); default `producer`, `operator`, `stranger`. */
  clients?: readonly string[];
  /**
   * `both` (default): `scope` as a string and `scp` as an array; `scp`: only the array, as Entra
   * ID and Okta send it.
   */
  scopeClaims?: 'both' | 'scp';
  /** Web clients known from the start (more with `addWebClient`). */
  webClients?: readonly WebClient[];
}

export interface SigningKey {
  kid: string;
  algorithm: OidcSigningAlgorithm;
  /** Private JWK (with `kid`, `alg`, `use: sig`). */
  privateJwk: JWK;
  /** The public key as PEM. */
  publicPem: string;
}

export interface TokenRequest {
  client?: string;
  /** The token's `aud`; default `observatory-ingest`. */
  audience?: string;
  /** Space-separated; default `events:write`. */
  scope?: string;
}

export interface OidcIssuer {
  /** `http://host:port`, the `iss` of its tokens and the base of discovery. */
  readonly issuer: string;
  readonly jwksUrl: string;
  /** GET requests the key set endpoint answered (or refused while down) so far. */
  readonly jwksRequests: number;
  /** The published key set's signing keys, newest first; the first one signs. */
  readonly keys: readonly SigningKey[];
  /** A client-credentials access token: `sub` is the client id, scopes as `scopeClaims` says. */
  token(req?: TokenRequest): Promise<string>;
  /**
   * A person's JWT signed with the current key, valid `ttl` (default 10 minutes, a jose time span
   * such as `4s`): what a script presents as a bearer token to an authenticating proxy
   * (oauth2-proxy's `--skip-jwt-bearer-tokens`) or to search's bearer tokens, that trusts this
   * provider. `claims` (`email`, `groups`, ...) beside `sub`, `iss` and `aud`.
   */
  userToken(req: {
    subject: string;
    audience: string;
    claims?: Record<string, unknown>;
    ttl?: string;
  }): Promise<string>;
  /** Publishes a new key and signs with it from now on; returns it. */
  rotate(): Promise<SigningKey>;
  /** Removes a key from the published set (it signs no more). */
  retire(kid: string): Promise<void>;
  /** Public JWKs published beside the signing keys (hostile entries for the attack suite). */
  publishExtra(entries: JWK[]): void;
  /** Registers a web client (secret `OIDC_CLIENT_SECRET`), or replaces the one of that id. */
  addWebClient(client: WebClient): void;
  /** Stops answering: connections are refused. */
  stop(): Promise<void>;
  /** Answers again on the same address. */
  resume(): Promise<void>;
  close(): Promise<void>;
}

/**
 * Starts an OpenID provider on an ephemeral port with one signing key.
 *
 * @example
 * ```ts
 * const idp = await startOidcIssuer();
 * const env = { AUTH_OIDC_ISSUER: idp.issuer, AUTH_AUDIENCE: 'observatory-ingest' };
 * const token = await idp.token({ scope: 'events:write' });
 * ```
 */
export async function startOidcIssuer(opts: OidcIssuerOptions = {}): Promise<OidcIssuer> {
  const host = opts.host ?? '127.0.0.1';
  const algorithm = opts.algorithm ?? 'RS256';
  const clients = opts.clients ?? ['producer', 'operator', 'stranger'];
  let keys: SigningKey[] = [await newKey(algorithm)];
  let extra: JWK[] = [];
  let webClients = [...(opts.webClients ?? [])];
  let jwksRequests = 0;
  const server = createServer();
  await listen(server, host, opts.port ?? 0);
  const port = (server.address() as { port: number }).port;
  const issuer = `http://${host}:${port}`;
  const scpOnly = opts.scopeClaims === 'scp';
  // Rebuilt when keys or clients change; logins in progress survive (its store is per process).
  const build = () => buildProvider(issuer, keys, clients, webClients, scpOnly);
  let provider = build();
  let handler = provider.callback();

  server.on('request', (req: IncomingMessage, res: ServerResponse) => {
    if (req.url?.startsWith('/interaction/')) {
      loginInteraction(provider, req, res).catch((err: Error) => {
        res.writeHead(500, { 'content-type': 'text/plain' });
        res.end(err.message);
      });
      return;
    }
    if (req.method === 'GET' && req.url === '/jwks') {
      jwksRequests++;
      const published = [...keys.map((k) => publicPart(k.privateJwk)), ...extra];
      res.writeHead(200, { 'content-type': 'application/jwk-set+json' });
      res.end(JSON.stringify({ keys: published }));
      return;
    }
    handler(req, res);
  });

  const stop = () =>
    new Promise<void>((resolve) => {
      server.close(() => resolve());
      server.closeAllConnections();
    });
  return {
    issuer,
    jwksUrl: `${issuer}/jwks`,
    get jwksRequests() {
      return jwksRequests;
    },
    get keys() {
      return keys;
    },
    async token(req = {}) {
      const client = req.client ?? clients[0]!;
      const audience = req.audience ?? 'observatory-ingest';
      const res = await fetch(`${issuer}/token`, {
        method: 'POST',
        headers: {
          'content-type': 'application/x-www-form-urlencoded',
          authorization: `Basic ${Buffer.from(`${client}:${OIDC_CLIENT_SECRET}`).toString('base64')}`,
        },
        body: new URLSearchParams({
          grant_type: 'client_credentials',
          scope: req.scope ?? 'events:write',
          resource: `urn:${audience}`,
        }),
      });
      const body = (await res.json()) as { access_token?: string; error_description?: string };
      if (res.status !== 200 || body.access_token === undefined) {
        throw new Error(`token request answered ${res.status}: ${body.error_description ?? ''}`);
      }
      return body.access_token;
    },
    async userToken({ subject, audience, claims = {}, ttl = '10m' }) {
      const key = keys[0]!;
      return new SignJWT(claims)
        .setProtectedHeader({ alg: key.algorithm, kid: key.kid, typ: 'JWT' })
        .setIssuer(issuer)
        .setSubject(subject)
        .setAudience(audience)
        .setIssuedAt()
        .setExpirationTime(ttl)
        .sign(await importJWK(key.privateJwk, key.algorithm));
    },
    async rotate() {
      const key = await newKey(algorithm);
      keys = [key, ...keys];
      provider = build();
      handler = provider.callback();
      return key;
    },
    async retire(kid) {
      keys = keys.filter((k) => k.kid !== kid);
      if (keys.length === 0) throw new Error('retire: the issuer needs one key left to sign');
      provider = build();
      handler = provider.callback();
    },
    publishExtra(entries) {
      extra = entries;
    },
    addWebClient(client) {
      webClients = [...webClients.filter((c) => c.clientId !== client.clientId), client];
      provider = build();
      handler = provider.callback();
    },
    stop,
    resume: () => listen(server, host, port),
    async close() {
      if (server.listening) await stop();
    },
  };
}

async function newKey(algorithm: OidcSigningAlgorithm): Promise<SigningKey> {
  const { privateKey, publicKey } = await generateKeyPair(algorithm, { extractable: true });
  const kid = randomUUID();
  return {
    kid,
    algorithm,
    privateJwk: { ...(await exportJWK(privateKey)), kid, alg: algorithm, use: 'sig' },
    publicPem: await exportSPKI(publicKey),
  };
}

/** The public members of a private JWK (RSA `n`/`e`, EC `crv`/`x`/`y`, OKP `crv`/`x`). */
function publicPart(jwk: JWK): JWK {
  const { d: _d, p: _p, q: _q, dp: _dp, dq: _dq, qi: _qi, ...pub } = jwk;
  return pub;
}

/**
 * The provider signs with the first key; client-credentials tokens are JWTs for `urn:<audience>`.
 * Web clients get ID tokens with the user's profile, email and groups, and skip the consent
 * prompt (they are the site's own).
 */
function buildProvider(
  issuer: string,
  keys: readonly SigningKey[],
  clients: readonly string[],
  webClients: readonly WebClient[],
  scpOnly: boolean,
): Provider {
  const web = new Set(webClients.map((c) => c.clientId));
  return new Provider(issuer, {
    clients: [
      ...clients.map((client_id) => ({
        client_id,
        client_secret: OIDC_CLIENT_SECRET,
        grant_types: ['client_credentials'],
        redirect_uris: [],
        response_types: [],
        scope: OIDC_SCOPES.join(' '),
        id_token_signed_response_alg: keys[0]!.algorithm,
      })),
      ...webClients.map((c) => ({
        client_id: c.clientId,
        client_secret: OIDC_CLIENT_SECRET,
        grant_types: ['authorization_code'],
        response_types: ['code' as const],
        redirect_uris: [...c.redirectUris],
        post_logout_redirect_uris: [...(c.postLogoutRedirectUris ?? [])],
        token_endpoint_auth_method: 'client_secret_basic' as const,
        id_token_signed_response_alg: keys[0]!.algorithm,
      })),
    ],
    scopes: ['openid', ...OIDC_SCOPES],
    claims: {
      openid: ['sub'],
      profile: ['name', 'preferred_username'],
      email: ['email'],
      groups: ['groups'],
    },
    // Scope-granted claims in the ID token too, as most providers send them.
    conformIdTokenClaims: false,
    findAccount: (_ctx, id) => {
      const user = OIDC_USERS[id];
      if (!user) return undefined;
      return {
        accountId: id,
        claims: () => ({
          sub: id,
          name: user.name,
          preferred_username: id,
          email: user.email,
          groups: [...user.groups],
        }),
      };
    },
    loadExistingGrant: async (ctx) => {
      const { client, session, provider } = ctx.oidc;
      if (!client || !session?.accountId) return undefined;
      const known = session.grantIdFor(client.clientId);
      if (known) return provider.Grant.find(known);
      if (!web.has(client.clientId)) return undefined;
      const grant = new provider.Grant({ clientId: client.clientId, accountId: session.accountId });
      grant.addOIDCScope([...(ctx.oidc.requestParamOIDCScopes ?? [])].join(' '));
      await grant.save();
      session.ensureClientContainer(client.clientId);
      session.grantIdFor(client.clientId, grant.jti);
      return grant;
    },
    ttl: {
      ClientCredentials: 600,
      AccessToken: 600,
      IdToken: 600,
      Interaction: 600,
      Grant: 3600,
      Session: 3600,
    },
    jwks: { keys: keys.map((k) => k.privateJwk) as never },
    features: {
      clientCredentials: { enabled: true },
      devInteractions: { enabled: false },
      resourceIndicators: {
        enabled: true,
        // Web clients log users in: their access token is for the userinfo endpoint.
        defaultResource: (_ctx, client) => (web.has(client.clientId) ? undefined : 'urn:observatory-ingest'),
        useGrantedResource: () => true,
        getResourceServerInfo: (_ctx, resource) => ({
          audience: resource.replace(/^urn:/, ''),
          scope: OIDC_SCOPES.join(' '),
          accessTokenFormat: 'jwt',
          jwt: { sign: { alg: keys[0]!.algorithm } },
        }),
      },
    },
    formats: {
      customizers: {
        // Entra ID and Okta send scopes as `scp`, an array.
        jwt(_ctx, token, jwt) {
          jwt.payload.scp = (token.scope ?? '').split(' ').filter((s) => s !== '');
          if (scpOnly) delete jwt.payload.scope;
        },
      },
    },
  });
}

/**
 * The login form of an interaction (`/interaction/<uid>`): GET shows it, POST checks the user name
 * and password against `OIDC_USERS` and hands the account to the provider, which resumes the
 * authorization request.
 */
async function loginInteraction(
  provider: Provider,
  req: IncomingMessage,
  res: ServerResponse,
): Promise<void> {
  const details = await provider.interactionDetails(req, res);
  const form = (status: number, problem: string) => {
    res.writeHead(status, { 'content-type': 'text/html; charset=utf-8' });
    res.end(`<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>Sign in</title></head><body>
<h1>Sign in to the test provider</h1>${problem === '' ? '' : `<p role="alert">${problem}</p>`}
<form method="post" action="/interaction/${details.uid}">
<label for="username">User name</label> <input id="username" name="username" autocomplete="username">
<label for="password">Password</label> <input id="password" name="password" type="password" autocomplete="current-password">
<button type="submit">Sign in</button></form></body></html>`);
  };
  if (req.method !== 'POST') return form(200, '');
  const body = new URLSearchParams(await readBody(req));
  const accountId = body.get('username') ?? '';
  if (OIDC_USERS[accountId]?.password !== body.get('password'))
    return form(401, 'Wrong user name or password.');
  await provider.interactionFinished(req, res, { login: { accountId } }, { mergeWithLastSubmission: false });
}

async function readBody(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

function listen(server: ReturnType<typeof createServer>, host: string, port: number): Promise<void> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
}
