/**
 * Who may read search (`search.auth.*`): the login mode and its settings, the Secret of the
 * session key and the local admin's password (generated and kept across upgrades unless the
 * operator names one), the files they are mounted as, bearer tokens of the identity provider and
 * of this cluster's service accounts, and the checks that refuse a mode without what it needs.
 */
import type * as k8s from 'cdk8s-plus-34/lib/imports/k8s.js';
import { scalar, value, valueText } from './helm.js';
import { bool, list, oneOf, str, type Tree } from './values-schema.js';

const AUTH = '.Values.search.auth';
const MODE = `${AUTH}.mode`;
/** Where the login's files are mounted in the search container. */
export const SEARCH_AUTH_DIR = '/etc/observatory/search-auth';
const SERVICE_ACCOUNT_DIR = '/var/run/secrets/kubernetes.io/serviceaccount';
/** Keys of the search auth Secret (generated, or the operator's `search.auth.existingSecret`). */
export const SESSION_KEY = 'session-secret';
export const ADMIN_PASSWORD_KEY = 'admin-password';

/** The search auth Secret's name: the operator's, else the generated `<release>-login`. */
export const SEARCH_AUTH_SECRET = `(${AUTH}.existingSecret | default (printf "%s-login" .Release.Name))`;
/** Bearer tokens of this cluster's service accounts are verified (never with login off). */
const SERVICE_ACCOUNTS = `(and ${AUTH}.bearer.serviceAccounts (ne ${MODE} "off"))`;

export const searchAuthValues: Tree = {
  mode: oneOf(
    ['oidc', 'proxy', 'local', 'off'],
    'local',
    "SEARCH_AUTH_MODE: oidc (log in at search.auth.oidc.issuer), proxy (an authenticating proxy such as oauth2-proxy names the user), local (one user admin, its password generated in a Secret; NOTES tells how to read it), off (no login: anyone reaching the Service reads every team's events)",
  ),
  existingSecret: str(
    '',
    `Secret with the keys ${SESSION_KEY} (seals session cookies, 32 bytes or more) and ${ADMIN_PASSWORD_KEY} (local mode); empty: <release>-login, generated and kept across upgrades`,
  ),
  oidc: {
    issuer: str(
      '',
      'SEARCH_OIDC_ISSUER: the OpenID provider (discovery at <issuer>/.well-known/openid-configuration); required in oidc mode',
    ),
    clientId: str('', 'SEARCH_OIDC_CLIENT_ID: the client registered for search; required in oidc mode'),
    clientSecret: {
      existingSecret: str(
        '',
        'Secret holding the client secret, mounted as SEARCH_OIDC_CLIENT_SECRET_FILE; required in oidc mode',
      ),
      key: str('client-secret', 'key of the client secret in that Secret'),
    },
    groupsClaim: str('groups', "SEARCH_OIDC_GROUPS_CLAIM: the claim holding the user's groups"),
  },
  proxy: {
    trustedCidrs: list(
      [],
      'SEARCH_TRUSTED_PROXIES: addresses (CIDRs) of the authenticating proxy, the only peers whose X-Auth-Request-* headers are believed; required in proxy mode. Keep them as narrow as the proxy pods',
      { type: 'string', pattern: '^[0-9A-Fa-f:.]+(/[0-9]{1,3})?$' },
    ),
  },
  bearer: {
    audience: str(
      '',
      'SEARCH_BEARER_AUDIENCE: the audience bearer tokens of search.auth.oidc.issuer must carry (empty: search.auth.oidc.clientId)',
    ),
    serviceAccounts: bool(
      false,
      "accept this cluster's service-account tokens as bearer tokens (kubectl create token <sa> --audience <search.auth.bearer.serviceAccountAudience>); the pod then mounts a token to fetch the API server's key set",
    ),
    serviceAccountAudience: str(
      'observatory-search',
      'SEARCH_SERVICE_ACCOUNT_AUDIENCE: the audience service-account tokens must carry',
    ),
    kubernetesIssuer: str(
      'https://kubernetes.default.svc.cluster.local',
      "the cluster's --service-account-issuer (with search.auth.bearer.serviceAccounts)",
    ),
  },
};

/**
 * Refuses (at `helm install`) a mode without what it needs; written before the mode's value, as a
 * `ternary` evaluates both branches and cannot hold a `fail`.
 */
const MODE_CHECKS = [
  `{{ if and (eq ${MODE} "oidc") (not (and ${AUTH}.oidc.issuer ${AUTH}.oidc.clientId ${AUTH}.oidc.clientSecret.existingSecret .Values.search.publicUrl)) }}{{ fail "search.auth.mode=oidc needs search.auth.oidc.issuer, search.auth.oidc.clientId, search.auth.oidc.clientSecret.existingSecret and search.publicUrl" }}{{ end }}`,
  `{{ if and (eq ${MODE} "proxy") (not ${AUTH}.proxy.trustedCidrs) }}{{ fail "search.auth.mode=proxy needs search.auth.proxy.trustedCidrs: the addresses of the authenticating proxy" }}{{ end }}`,
].join('');

/** A ConfigMap value: `path` when `condition` holds, else empty (read as unset). */
const when = (condition: string, path: string) => scalar(`{{ ternary ${path} "" ${condition} | toJson }}`);

/** The search ConfigMap's login settings. */
export function searchAuthSettings(): Record<string, string> {
  return {
    SEARCH_AUTH_MODE: scalar(`${MODE_CHECKS}{{ ${MODE} | toJson }}`),
    SEARCH_PUBLIC_URL: value('search.publicUrl'),
    SEARCH_OIDC_ISSUER: value('search.auth.oidc.issuer'),
    SEARCH_OIDC_CLIENT_ID: value('search.auth.oidc.clientId'),
    SEARCH_OIDC_CLIENT_SECRET_FILE: when(`(eq ${MODE} "oidc")`, `"${SEARCH_AUTH_DIR}/oidc-client-secret"`),
    SEARCH_OIDC_GROUPS_CLAIM: value('search.auth.oidc.groupsClaim'),
    SEARCH_LOCAL_ADMIN_PASSWORD_FILE: when(
      `(eq ${MODE} "local")`,
      `"${SEARCH_AUTH_DIR}/${ADMIN_PASSWORD_KEY}"`,
    ),
    SEARCH_TRUSTED_PROXIES: scalar(`{{ join "," ${AUTH}.proxy.trustedCidrs | toJson }}`),
    SEARCH_BEARER_AUDIENCE: value('search.auth.bearer.audience'),
    SEARCH_SERVICE_ACCOUNT_OIDC_ISSUER: when(SERVICE_ACCOUNTS, `${AUTH}.bearer.kubernetesIssuer`),
    SEARCH_SERVICE_ACCOUNT_AUDIENCE: when(SERVICE_ACCOUNTS, `${AUTH}.bearer.serviceAccountAudience`),
    // The API server's discovery endpoints need an authenticated caller and trust the cluster CA.
    SEARCH_SERVICE_ACCOUNT_JWKS_CA_FILE: when(SERVICE_ACCOUNTS, `"${SERVICE_ACCOUNT_DIR}/ca.crt"`),
    SEARCH_SERVICE_ACCOUNT_JWKS_TOKEN_FILE: when(SERVICE_ACCOUNTS, `"${SERVICE_ACCOUNT_DIR}/token"`),
    SEARCH_TAIL_MAX_PER_VIEWER: valueText('search.tailMaxPerViewer'),
    SEARCH_TAIL_MAX_PER_POD: valueText('search.tailMaxPerPod'),
  };
}

/** SEARCH_SESSION_SECRET from the search auth Secret; none needed with login off. */
export function sessionSecretEnv(): k8s.EnvVar {
  return {
    name: 'SEARCH_SESSION_SECRET',
    valueFrom: {
      secretKeyRef: {
        name: scalar(`{{ ${SEARCH_AUTH_SECRET} | toJson }}`),
        key: SESSION_KEY,
        optional: scalar<boolean>(`{{ eq ${MODE} "off" }}`),
      },
    },
  };
}

/** Only with service-account bearer tokens does search mount a token: to fetch the cluster's key set. */
export const searchApiAccess = (): boolean =>
  scalar<boolean>(`{{ if ${SERVICE_ACCOUNTS} }}true{{ else }}false{{ end }}`);

/** Helm list expressions of the login's volume and its mount (empty unless oidc or local mode). */
export const SEARCH_AUTH_VOLUMES = '(include "observatory.searchAuthVolumes" . | fromYamlArray)';
export const SEARCH_AUTH_MOUNTS = '(include "observatory.searchAuthMounts" . | fromYamlArray)';

/** `templates/_search-auth.tpl`: the login's files and the generated Secret. */
export const SEARCH_AUTH_TEMPLATES = `{{/* The local admin's password or the OIDC client secret, as files (oidc and local modes). */}}
{{- define "observatory.searchAuthVolumes" -}}
{{- $a := ${AUTH} }}
{{- if has $a.mode (list "oidc" "local") }}
- name: search-auth
  projected:
    {{- /* 0444: readable by whatever uid and gid the pod runs as, fsGroup unset included (as OpenShift's restricted-v2 leaves it); nothing else runs in the container. */}}
    defaultMode: 292
    sources:
{{- if eq $a.mode "local" }}
      - secret:
          name: {{ ${SEARCH_AUTH_SECRET} | toJson }}
          items: [{ key: ${ADMIN_PASSWORD_KEY}, path: ${ADMIN_PASSWORD_KEY} }]
{{- else }}
      - secret:
          name: {{ $a.oidc.clientSecret.existingSecret | toJson }}
          items: [{ key: {{ $a.oidc.clientSecret.key | toJson }}, path: oidc-client-secret }]
{{- end }}
{{- end }}
{{- end }}
{{- define "observatory.searchAuthMounts" -}}
{{- if has ${MODE} (list "oidc" "local") }}
- name: search-auth
  mountPath: ${SEARCH_AUTH_DIR}
  readOnly: true
{{- end }}
{{- end }}

{{/* The search auth Secret, unless login is off or the operator names one: both keys, kept across upgrades and mode changes. */}}
{{- define "observatory.searchAuthSecret" -}}
{{- if and (ne ${MODE} "off") (not ${AUTH}.existingSecret) }}
---
{{- include "observatory.generatedSecret" (dict "root" . "name" (printf "%s-login" .Release.Name) "keys" (list "${SESSION_KEY}" "${ADMIN_PASSWORD_KEY}") "keep" false) }}
{{- end }}
{{- end }}
`;
