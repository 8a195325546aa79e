/**
 * oauth2-proxy's alpha configuration as the proxy-mode tests run it (search's README, Proxy mode):
 * in front of `upstreams`, verifying tokens of an OpenID provider, and naming the user to the
 * upstream in the `X-Auth-Request-*` headers search reads (`injectRequestHeaders`; the legacy flags
 * send `X-Forwarded-User` instead).
 */
export interface OAuth2ProxyConfig {
  /** `host:port` it listens on. */
  bindAddress: string;
  /**
   * Path prefix and the URL it forwards to, most specific first. `passHostHeader: false` sends the
   * upstream's own host instead of the client's (search answers only the hosts it knows).
   */
  upstreams: { id: string; path: string; uri: string; passHostHeader?: boolean }[];
  issuer: string;
  clientId: string;
}

/** The YAML of `--alpha-config`. */
export function oauth2ProxyAlphaConfig(c: OAuth2ProxyConfig): string {
  const header = (name: string, claim: string) =>
    `  - name: ${name}\n    values:\n      - claimSource:\n          claim: ${claim}\n`;
  return [
    'server:',
    `  BindAddress: ${c.bindAddress}`,
    'upstreamConfig:',
    '  upstreams:',
    ...c.upstreams.map(
      (u) =>
        `    - id: ${u.id}\n      path: ${u.path}\n      uri: ${u.uri}` +
        (u.passHostHeader === undefined ? '' : `\n      passHostHeader: ${u.passHostHeader}`),
    ),
    'injectRequestHeaders:',
    header('X-Auth-Request-User', 'user'),
    header('X-Auth-Request-Email', 'email'),
    header('X-Auth-Request-Groups', 'groups'),
    'providers:',
    `  - id: oidc\n    provider: oidc\n    clientID: ${c.clientId}\n    clientSecret: unused`,
    `    oidcConfig:\n      issuerURL: ${c.issuer}\n      emailClaim: email\n      groupsClaim: groups\n      audienceClaims: [aud]`,
    '',
  ].join('\n');
}
