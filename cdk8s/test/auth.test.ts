/**
 * The three ways producers authenticate (a key Secret, an OIDC issuer, this cluster's service
 * accounts) and the admin API's own settings, as the chart renders them.
 */
import { describe, expect, it } from 'vitest';
import { type K8sObject, REQUIRED_VALUES, render } from './helm.js';

const named = (objects: K8sObject[], kind: string, name: string) => {
  const found = objects.find((o) => o.kind === kind && o.metadata.name === name);
  if (!found) throw new Error(`no ${kind} ${name}`);
  return found;
};
const settings = (objects: K8sObject[], component: string) =>
  named(objects, 'ConfigMap', `obs-${component}`).data ?? {};
const pod = (objects: K8sObject[], component: string) =>
  named(objects, 'Deployment', `obs-${component}`).spec.template.spec;
const keyEnv = (objects: K8sObject[], component: string) =>
  pod(objects, component).containers[0].env.find((e: { name: string }) =>
    /AUTH_(SECRET|PUBLIC_KEY)$/.test(e.name),
  );

const { 'secrets.auth.name': _auth, 'secrets.admin.name': _admin, ...withoutKeys } = REQUIRED_VALUES;

describe('producers with a key Secret (the default)', () => {
  const objects = render();

  it('gives ingest AUTH_SECRET from secrets.auth and the admin API ADMIN_AUTH_SECRET from secrets.admin, never one for both', () => {
    expect(keyEnv(objects, 'ingest')).toEqual({
      name: 'AUTH_SECRET',
      valueFrom: { secretKeyRef: { name: 'observatory-auth', key: 'AUTH_SECRET', optional: false } },
    });
    expect(keyEnv(objects, 'consumer')).toEqual({
      name: 'ADMIN_AUTH_SECRET',
      valueFrom: { secretKeyRef: { name: 'observatory-admin', key: 'ADMIN_AUTH_SECRET', optional: false } },
    });
    expect(Object.keys(settings(objects, 'consumer')).filter((k) => k.startsWith('AUTH_'))).toEqual([]);
    expect(Object.keys(settings(objects, 'ingest')).filter((k) => k.startsWith('ADMIN_'))).toEqual([]);
  });

  it('requires an audience per service by default', () => {
    expect(settings(objects, 'ingest').AUTH_AUDIENCE).toBe('observatory-ingest');
    expect(settings(objects, 'consumer').ADMIN_AUTH_AUDIENCE).toBe('observatory-admin');
  });

  it('names the public key variable for a public-key algorithm', () => {
    const rs = render({ 'auth.algorithm': 'ES256', 'admin.algorithm': 'RS256' });
    expect(keyEnv(rs, 'ingest').name).toBe('AUTH_PUBLIC_KEY');
    expect(keyEnv(rs, 'consumer').name).toBe('ADMIN_AUTH_PUBLIC_KEY');
  });

  it('generates both keys, apart, in the Secret <release>-tokens when no key Secret is named', () => {
    const objects = render({ 'secrets.auth.name': '', 'secrets.admin.name': '' });
    const tokens = objects.find((o) => o.kind === 'Secret' && o.metadata.name === 'obs-tokens');
    expect(Object.keys(tokens?.data ?? {})).toEqual(['AUTH_SECRET', 'ADMIN_AUTH_SECRET']);
    expect(tokens?.data?.AUTH_SECRET).not.toBe(tokens?.data?.ADMIN_AUTH_SECRET);
  });
});

describe('producers of an OIDC issuer', () => {
  const objects = render({
    ...withoutKeys,
    'auth.oidcIssuer': 'https://login.example.com/tenant/v2.0',
    'auth.scopeClaim': 'scp',
    'admin.jwksUrl': 'https://login.example.com/keys',
  });

  it('needs no key Secret and passes the issuer, the scope claim and the admin key set', () => {
    expect(settings(objects, 'ingest')).toMatchObject({
      AUTH_OIDC_ISSUER: 'https://login.example.com/tenant/v2.0',
      AUTH_SCOPE_CLAIM: 'scp',
      AUTH_JWKS_CA_FILE: '',
      AUTH_JWKS_TOKEN_FILE: '',
    });
    expect(settings(objects, 'consumer')).toMatchObject({
      ADMIN_AUTH_JWKS_URL: 'https://login.example.com/keys',
    });
    expect(keyEnv(objects, 'ingest').valueFrom.secretKeyRef.optional).toBe(true);
    expect(keyEnv(objects, 'consumer').valueFrom.secretKeyRef.optional).toBe(true);
    expect(pod(objects, 'ingest').automountServiceAccountToken).toBe(false);
  });
});

describe("producers with this cluster's service-account tokens", () => {
  const objects = render({
    ...withoutKeys,
    'secrets.admin.name': 'observatory-admin',
    'auth.serviceAccounts': true,
    'auth.subjectScopes': 'system:serviceaccount:payments:*=events:write',
  });

  it("verifies the API server's issuer with the ingest pod's own token and the cluster CA", () => {
    expect(settings(objects, 'ingest')).toMatchObject({
      AUTH_OIDC_ISSUER: 'https://kubernetes.default.svc.cluster.local',
      AUTH_JWKS_CA_FILE: '/var/run/secrets/kubernetes.io/serviceaccount/ca.crt',
      AUTH_JWKS_TOKEN_FILE: '/var/run/secrets/kubernetes.io/serviceaccount/token',
      AUTH_AUDIENCE: 'observatory-ingest',
      AUTH_SUBJECT_SCOPES: 'system:serviceaccount:payments:*=events:write',
    });
  });

  it('mounts a service-account token in the ingest pods only', () => {
    expect(pod(objects, 'ingest').automountServiceAccountToken).toBe(true);
    expect(pod(objects, 'consumer').automountServiceAccountToken).toBe(false);
    expect(pod(objects, 'search').automountServiceAccountToken).toBe(false);
  });
});
