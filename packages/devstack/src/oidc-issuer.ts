/**
 * A real OpenID provider (`oidc-provider`) on this machine for the tests: discovery, a key set and
 * client-credentials JWT access tokens, with the key operations a test needs (rotate, retire,
 * publish extra entries, go down and come back).
 */
import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { exportJWK, exportSPKI, generateKeyPair, type JWK } from 'jose';
import Provider from 'oidc-provider';

/** Scopes the provider knows; every client may ask for any of them. */
export const OIDC_SCOPES = ['events:write', 'events:admin', 'events:read'] as const;
/** Secret of every client of the provider. */
export const OIDC_CLIENT_SECRET = 'oidc-test-client-secret';

export type OidcSigningAlgorithm = 'RS256' | 'ES256' | 'EdDSA';

export interface OidcIssuerOptions {
  /** Address to listen on; default 127.0.0.1 (this machine's address for pods). */
  host?: string;
  /** Default RS256. */
  algorithm?: OidcSigningAlgorithm;
  /** Client ids (each one a token subject); default `producer`, `operator`, `stranger`. */
  clients?: readonly string[];
  /**
   * `both` (default): `scope` as a string and `scp` as an array; `scp`: only the array, as Entra
   * ID and Okta send it.
   */
  scopeClaims?: 'both' | 'scp';
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
  /** Publishes a new key and signs with it from now on; returns it. */
  rotate(): Promise<SigningKey>;
  /** Removes a key from the published set (it signs no more). */
  retire(kid: string): Promise<void>;
  /** Public JWKs published beside the signing keys (hostile entries for the attack suite). */
  publishExtra(entries: JWK[]): void;
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
  let jwksRequests = 0;
  const server = createServer();
  await listen(server, host, 0);
  const port = (server.address() as { port: number }).port;
  const issuer = `http://${host}:${port}`;
  const scpOnly = opts.scopeClaims === 'scp';
  const build = () => buildProvider(issuer, keys, clients, scpOnly).callback();
  let handler = build();

  server.on('request', (req: IncomingMessage, res: ServerResponse) => {
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
    async rotate() {
      const key = await newKey(algorithm);
      keys = [key, ...keys];
      handler = build();
      return key;
    },
    async retire(kid) {
      keys = keys.filter((k) => k.kid !== kid);
      if (keys.length === 0) throw new Error('retire: the issuer needs one key left to sign');
      handler = build();
    },
    publishExtra(entries) {
      extra = entries;
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

/** The provider signs with the first key; client-credentials tokens are JWTs for `urn:<audience>`. */
function buildProvider(
  issuer: string,
  keys: readonly SigningKey[],
  clients: readonly string[],
  scpOnly: boolean,
): Provider {
  return new Provider(issuer, {
    clients: clients.map((client_id) => ({
      client_id,
      client_secret: OIDC_CLIENT_SECRET,
      grant_types: ['client_credentials'],
      redirect_uris: [],
      response_types: [],
      scope: OIDC_SCOPES.join(' '),
      id_token_signed_response_alg: keys[0]!.algorithm,
    })),
    scopes: [...OIDC_SCOPES],
    ttl: { ClientCredentials: 600 },
    jwks: { keys: keys.map((k) => k.privateJwk) as never },
    features: {
      clientCredentials: { enabled: true },
      devInteractions: { enabled: false },
      resourceIndicators: {
        enabled: true,
        defaultResource: () => 'urn:observatory-ingest',
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

function listen(server: ReturnType<typeof createServer>, host: string, port: number): Promise<void> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
}
