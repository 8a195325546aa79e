/**
 * Search's login as the chart renders it, per `search.auth.mode`: local (the default: a generated
 * admin password in a Secret, mounted as a file, NOTES telling how to read it and where its Secure
 * cookie is kept), oidc, proxy, off (NOTES says what it exposes); bearer tokens of this cluster's
 * service accounts; the tail caps.
 */
import { describe, expect, it } from 'vitest';
import { CHART_DIR } from '../src/paths.js';
import { helm, type K8sObject, REQUIRED_VALUES, render, renderError, setArgs } from './helm.js';

const find = (objects: K8sObject[], kind: string, name: string): K8sObject => {
  const found = objects.find((o) => o.kind === kind && o.metadata.name === name);
  if (!found) throw new Error(`no ${kind} ${name}`);
  return found;
};
const settings = (objects: K8sObject[]) => find(objects, 'ConfigMap', 'obs-search').data ?? {};
const pod = (objects: K8sObject[]) => find(objects, 'Deployment', 'obs-search').spec.template.spec;
const envOf = (objects: K8sObject[], name: string) =>
  pod(objects).containers[0].env.find((e: { name: string }) => e.name === name);
const volume = (objects: K8sObject[]) =>
  pod(objects).volumes.find((v: { name: string }) => v.name === 'search-auth');
const loginSecret = (objects: K8sObject[]) =>
  objects.find((o) => o.kind === 'Secret' && o.metadata.name === 'obs-login');

/** NOTES.txt as `helm install --dry-run` prints it. */
function notes(values: Record<string, string | number | boolean> = {}): string {
  const res = helm([
    'install',
    'obs',
    CHART_DIR,
    '--namespace',
    'observatory',
    '--dry-run=client',
    ...setArgs({ ...REQUIRED_VALUES, ...values }),
  ]);
  if (res.status !== 0) throw new Error(`helm install --dry-run failed: ${res.stderr}`);
  return res.stdout.slice(res.stdout.indexOf('NOTES:'));
}

const OIDC = {
  'search.auth.mode': 'oidc',
  'search.auth.oidc.issuer': 'https://login.example.com/realms/acme',
  'search.auth.oidc.clientId': 'observatory-search',
  'search.auth.oidc.clientSecret.existingSecret': 'search-oidc',
  'search.publicUrl': 'https://search.example.com',
};

describe('local login (the default)', () => {
  const objects = render();

  it('generates the session key and the admin password in <release>-login, the password mounted as the file', () => {
    expect(settings(objects)).toMatchObject({
      SEARCH_AUTH_MODE: 'local',
      SEARCH_LOCAL_ADMIN_PASSWORD_FILE: '/etc/observatory/search-auth/admin-password',
      SEARCH_OIDC_CLIENT_SECRET_FILE: '',
      SEARCH_TRUSTED_PROXIES: '',
    });
    const secret = loginSecret(objects);
    expect(Object.keys(secret?.data ?? {})).toEqual(['session-secret', 'admin-password']);
    for (const value of Object.values(secret?.data ?? {}))
      expect(Buffer.from(value, 'base64').length).toBeGreaterThanOrEqual(32);
    // Deleted with the release (nothing outlives it that needs the same password).
    expect(secret?.metadata.annotations).toBeUndefined();
    expect(volume(objects)).toEqual({
      name: 'search-auth',
      projected: {
        defaultMode: 292,
        sources: [
          { secret: { name: 'obs-login', items: [{ key: 'admin-password', path: 'admin-password' }] } },
        ],
      },
    });
    expect(pod(objects).containers[0].volumeMounts).toContainEqual({
      name: 'search-auth',
      mountPath: '/etc/observatory/search-auth',
      readOnly: true,
    });
    expect(envOf(objects, 'SEARCH_SESSION_SECRET')).toEqual({
      name: 'SEARCH_SESSION_SECRET',
      valueFrom: { secretKeyRef: { name: 'obs-login', key: 'session-secret', optional: false } },
    });
  });

  it('tells in NOTES how to read the admin password', () => {
    expect(notes()).toContain(
      "kubectl -n observatory get secret obs-login -o jsonpath='{.data.admin-password}' | base64 -d",
    );
  });

  it('leaves SEARCH_PUBLIC_URL unset (Secure cookies) unless given, refusing one without http(s)://', () => {
    expect(settings(objects).SEARCH_PUBLIC_URL).toBe('');
    expect(notes()).toContain('The session cookie is Secure');
    const plain = { 'search.publicUrl': 'http://10.0.0.7:30080' };
    expect(settings(render(plain)).SEARCH_PUBLIC_URL).toBe('http://10.0.0.7:30080');
    expect(notes(plain)).not.toContain('The session cookie is Secure');
    // Its scheme decides the cookies' Secure flag: a bare host name is refused at install.
    expect(
      renderError([...setArgs({ ...REQUIRED_VALUES, 'search.publicUrl': 'search.example.com' })]),
    ).toContain('publicUrl');
  });

  it("takes the operator's Secret instead, generating none", () => {
    const own = render({ 'search.auth.existingSecret': 'my-login' });
    expect(loginSecret(own)).toBeUndefined();
    expect(volume(own).projected.sources[0].secret.name).toBe('my-login');
    expect(envOf(own, 'SEARCH_SESSION_SECRET').valueFrom.secretKeyRef.name).toBe('my-login');
    expect(notes({ 'search.auth.existingSecret': 'my-login' })).toContain('get secret my-login -o jsonpath');
  });
});

describe('oidc login', () => {
  it('refuses the mode without issuer, client, client secret and public URL', () => {
    const error = renderError([...setArgs({ ...REQUIRED_VALUES, 'search.auth.mode': 'oidc' })]);
    expect(error).toContain('search.auth.mode=oidc needs search.auth.oidc.issuer');
    const { 'search.publicUrl': _url, ...withoutUrl } = OIDC;
    expect(renderError([...setArgs({ ...REQUIRED_VALUES, ...withoutUrl })])).toContain('search.publicUrl');
  });

  it('passes the provider, mounts the client secret as a file and keeps the session key', () => {
    const objects = render({
      ...OIDC,
      'search.auth.oidc.clientSecret.key': 'secret',
      'search.auth.oidc.groupsClaim': 'roles',
    });
    expect(settings(objects)).toMatchObject({
      SEARCH_AUTH_MODE: 'oidc',
      SEARCH_PUBLIC_URL: 'https://search.example.com',
      SEARCH_OIDC_ISSUER: 'https://login.example.com/realms/acme',
      SEARCH_OIDC_CLIENT_ID: 'observatory-search',
      SEARCH_OIDC_CLIENT_SECRET_FILE: '/etc/observatory/search-auth/oidc-client-secret',
      SEARCH_OIDC_GROUPS_CLAIM: 'roles',
      SEARCH_LOCAL_ADMIN_PASSWORD_FILE: '',
      SEARCH_BEARER_AUDIENCE: '',
    });
    expect(volume(objects).projected.sources).toEqual([
      { secret: { name: 'search-oidc', items: [{ key: 'secret', path: 'oidc-client-secret' }] } },
    ]);
    expect(loginSecret(objects)).toBeDefined();
    expect(notes(OIDC)).toContain(
      'Log in at https://login.example.com/realms/acme (client observatory-search)',
    );
  });
});

describe('proxy login', () => {
  it('refuses the mode without trusted CIDRs, and a CIDR list with a host name', () => {
    expect(renderError([...setArgs({ ...REQUIRED_VALUES, 'search.auth.mode': 'proxy' })])).toContain(
      'search.auth.proxy.trustedCidrs',
    );
    expect(
      renderError([
        ...setArgs({
          ...REQUIRED_VALUES,
          'search.auth.mode': 'proxy',
          'search.auth.proxy.trustedCidrs[0]': 'proxy.example.com',
        }),
      ]),
    ).toContain('trustedCidrs');
  });

  it('passes the CIDRs comma-separated, mounts no file, and NOTES names them', () => {
    const values = {
      'search.auth.mode': 'proxy',
      'search.auth.proxy.trustedCidrs[0]': '10.42.0.0/16',
      'search.auth.proxy.trustedCidrs[1]': 'fd00::/8',
    };
    const objects = render(values);
    expect(settings(objects)).toMatchObject({
      SEARCH_AUTH_MODE: 'proxy',
      SEARCH_TRUSTED_PROXIES: '10.42.0.0/16,fd00::/8',
      SEARCH_LOCAL_ADMIN_PASSWORD_FILE: '',
    });
    expect(volume(objects)).toBeUndefined();
    expect(notes(values)).toContain('believed only from\n   10.42.0.0/16, fd00::/8');
  });
});

describe('login off', () => {
  const values = { 'search.auth.mode': 'off', 'search.auth.bearer.serviceAccounts': true };
  const objects = render(values);

  it('generates no login Secret, mounts nothing, verifies no bearer token and needs no session key', () => {
    expect(settings(objects)).toMatchObject({
      SEARCH_AUTH_MODE: 'off',
      SEARCH_SERVICE_ACCOUNT_OIDC_ISSUER: '',
    });
    expect(loginSecret(objects)).toBeUndefined();
    expect(volume(objects)).toBeUndefined();
    expect(envOf(objects, 'SEARCH_SESSION_SECRET').valueFrom.secretKeyRef.optional).toBe(true);
    expect(pod(objects).automountServiceAccountToken).toBe(false);
  });

  it('says plainly in NOTES that anyone reaching the Service reads every team’s events', () => {
    const text = notes(values);
    expect(text).toContain('WARNING: login is OFF (search.auth.mode=off)');
    expect(text).toContain("Anyone who reaches the search Service reads\n   every team's events");
    expect(notes()).not.toContain('login is OFF');
  });
});

describe('bearer tokens and tail caps', () => {
  it("verifies this cluster's service-account tokens only when asked, mounting a token for the key set", () => {
    expect(settings(render())).toMatchObject({
      SEARCH_SERVICE_ACCOUNT_OIDC_ISSUER: '',
      SEARCH_SERVICE_ACCOUNT_JWKS_TOKEN_FILE: '',
    });
    expect(pod(render()).automountServiceAccountToken).toBe(false);
    const objects = render({
      'search.auth.bearer.serviceAccounts': true,
      'search.auth.bearer.serviceAccountAudience': 'reads',
    });
    expect(settings(objects)).toMatchObject({
      SEARCH_SERVICE_ACCOUNT_OIDC_ISSUER: 'https://kubernetes.default.svc.cluster.local',
      SEARCH_SERVICE_ACCOUNT_AUDIENCE: 'reads',
      SEARCH_SERVICE_ACCOUNT_JWKS_CA_FILE: '/var/run/secrets/kubernetes.io/serviceaccount/ca.crt',
      SEARCH_SERVICE_ACCOUNT_JWKS_TOKEN_FILE: '/var/run/secrets/kubernetes.io/serviceaccount/token',
    });
    expect(pod(objects).automountServiceAccountToken).toBe(true);
    // helm test reads search with a token of that audience.
    const test = find(objects, 'Pod', 'obs-test');
    expect(test.spec.volumes).toContainEqual({
      name: 'search-token',
      projected: {
        sources: [{ serviceAccountToken: { path: 'token', audience: 'reads', expirationSeconds: 600 } }],
      },
    });
  });

  it('passes the tail caps', () => {
    expect(settings(render())).toMatchObject({
      SEARCH_TAIL_MAX_PER_VIEWER: '5',
      SEARCH_TAIL_MAX_PER_POD: '50',
    });
    expect(settings(render({ 'search.tailMaxPerViewer': 2, 'search.tailMaxPerPod': 20 }))).toMatchObject({
      SEARCH_TAIL_MAX_PER_VIEWER: '2',
      SEARCH_TAIL_MAX_PER_POD: '20',
    });
  });
});
