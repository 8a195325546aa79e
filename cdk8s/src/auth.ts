/**
 * How the ingest API authenticates producers (`auth.*`: a key Secret, an OIDC issuer or key set,
 * or this cluster's service-account tokens) and how the consumer's admin API authenticates
 * operators (`admin.*`, `ADMIN_AUTH_*`, its own key and audience): values, settings and the key
 * Secret's environment variable of each.
 */
import type * as k8s from 'cdk8s-plus-34/lib/imports/k8s.js';
import { secretName } from './bundled.js';
import { scalar, text, value, valueText } from './helm.js';
import { bool, oneOf, str, type Tree } from './values-schema.js';

const ALGORITHMS = ['', 'HS256', 'HS384', 'HS512', 'RS256', 'RS384', 'RS512', 'ES256', 'ES384', 'EdDSA'];
/** Where a pod's automounted service-account token and the cluster CA are. */
const SERVICE_ACCOUNT_DIR = '/var/run/secrets/kubernetes.io/serviceaccount';

const verifierValues = (variable: string, audience: string): Tree => ({
  algorithm: oneOf(
    ALGORITHMS,
    '',
    `${variable}_ALGORITHM (empty: HS256 with a key Secret, RS256 with a key set)`,
  ),
  issuer: str('', `${variable}_ISSUER (empty: not checked; an OIDC issuer is checked anyway)`),
  audience: str(audience, `${variable}_AUDIENCE: the audience tokens must carry (required with a key set)`),
  oidcIssuer: str(
    '',
    `${variable}_OIDC_ISSUER: verify tokens of this OpenID issuer (discovery); no key Secret then`,
  ),
  jwksUrl: str('', `${variable}_JWKS_URL: verify tokens against this key set; no key Secret then`),
  scopeClaim: str('scope', `${variable}_SCOPE_CLAIM: the claim holding the scopes (scp for Entra ID, Okta)`),
  maxTokenAge: str(
    '',
    `${variable}_MAX_TOKEN_AGE: refuse tokens issued longer ago, though not expired (empty: 24h; tokens need iat)`,
  ),
});

/** `auth.*`: the ingest API's producers. */
export const authValues: Tree = {
  ...verifierValues('AUTH', 'observatory-ingest'),
  subjectScopes: str(
    '',
    'AUTH_SUBJECT_SCOPES: scopes granted by token subject, `<subject glob>=<scopes>` entries separated by ; or new lines',
  ),
  subjectScopesAnyNamespace: bool(
    false,
    'AUTH_SUBJECT_SCOPES_ANY_NAMESPACE: accept a * in the namespace segment of auth.subjectScopes (system:serviceaccount:*:name), which grants whoever may create a matching namespace',
  ),
  serviceAccounts: bool(
    false,
    "producers send this cluster's service-account tokens (audience auth.audience): ingest verifies them against the API server's issuer, with its own token and the cluster CA; grant scopes with auth.subjectScopes",
  ),
  kubernetesIssuer: str(
    'https://kubernetes.default.svc.cluster.local',
    "the cluster's --service-account-issuer (with auth.serviceAccounts)",
  ),
};

/** `admin.*`: the consumer's admin API, apart from ingest. */
export const adminValues: Tree = verifierValues('ADMIN_AUTH', 'observatory-admin');

/** Helm condition: a values section (`auth`, `admin`) verifies a key set, so needs no key Secret. */
export function usesKeySet(section: 'auth' | 'admin'): string {
  const own = `.Values.${section}.oidcIssuer .Values.${section}.jwksUrl`;
  return section === 'auth' ? `(or ${own} .Values.auth.serviceAccounts)` : `(or ${own})`;
}

const common = (variable: string, section: string) => ({
  [`${variable}_ALGORITHM`]: value(`${section}.algorithm`),
  [`${variable}_ISSUER`]: value(`${section}.issuer`),
  [`${variable}_AUDIENCE`]: value(`${section}.audience`),
  [`${variable}_JWKS_URL`]: value(`${section}.jwksUrl`),
  [`${variable}_SCOPE_CLAIM`]: value(`${section}.scopeClaim`),
  [`${variable}_MAX_TOKEN_AGE`]: value(`${section}.maxTokenAge`),
});

/** The ingest ConfigMap's `AUTH_*` settings. */
export function ingestAuthSettings(): Record<string, string> {
  const ifServiceAccounts = (then: string, otherwise = '') =>
    text(`{{ if .Values.auth.serviceAccounts }}${then}{{ else }}${otherwise}{{ end }}`);
  return {
    ...common('AUTH', 'auth'),
    AUTH_OIDC_ISSUER: ifServiceAccounts(
      '{{ .Values.auth.kubernetesIssuer }}',
      '{{ .Values.auth.oidcIssuer }}',
    ),
    // The API server's discovery endpoints need an authenticated caller and trust the cluster CA.
    AUTH_JWKS_CA_FILE: ifServiceAccounts(`${SERVICE_ACCOUNT_DIR}/ca.crt`),
    AUTH_JWKS_TOKEN_FILE: ifServiceAccounts(`${SERVICE_ACCOUNT_DIR}/token`),
    AUTH_SUBJECT_SCOPES: value('auth.subjectScopes'),
    AUTH_SUBJECT_SCOPES_ANY_NAMESPACE: valueText('auth.subjectScopesAnyNamespace'),
  };
}

/** The consumer ConfigMap's `ADMIN_AUTH_*` settings. */
export function adminAuthSettings(): Record<string, string> {
  return { ...common('ADMIN_AUTH', 'admin'), ADMIN_AUTH_OIDC_ISSUER: value('admin.oidcIssuer') };
}

/** Only ingest mounts a service-account token, and only to fetch the cluster's key set. */
export const ingestApiAccess = (): boolean =>
  scalar<boolean>('{{ if .Values.auth.serviceAccounts }}true{{ else }}false{{ end }}');

/**
 * `<VAR>_SECRET` for HS algorithms (and the default), `<VAR>_PUBLIC_KEY` for the others, from the
 * section's key Secret; `optional`, since a key set needs none (and the required-values check
 * asks for the Secret only without one).
 */
export function keyEnv(variable: 'AUTH' | 'ADMIN_AUTH', section: 'auth' | 'admin'): k8s.EnvVar {
  return {
    name: scalar(
      `{{ ternary "${variable}_SECRET" "${variable}_PUBLIC_KEY" (or (eq .Values.${section}.algorithm "") (hasPrefix "HS" .Values.${section}.algorithm)) | toJson }}`,
    ),
    valueFrom: {
      secretKeyRef: {
        name: scalar(`{{ ${secretName(section)} | toJson }}`),
        key: value(`secrets.${section}.key`),
        optional: scalar<boolean>(`{{ if ${usesKeySet(section)} }}true{{ else }}false{{ end }}`),
      },
    },
  };
}
