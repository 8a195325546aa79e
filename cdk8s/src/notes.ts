/**
 * `templates/NOTES.txt`, printed by `helm install`/`upgrade`/`status` for the install at hand: the
 * Services, the bundled Kafka's login and how to read its password, how to reach ingest and search, how to log in to search (or that anyone can, with
 * login off), how to get a producer token, a first event, the check (`helm test`), and where the
 * alerts and the dashboard are.
 */
import { usesKeySet } from './auth.js';
import { DATABASE_BUNDLED, KAFKA_BUNDLED } from './bundled.js';
import { ADMIN_PORT, HTTP_PORT, METRICS_PORT } from './constructs/common.js';
import { BUNDLED_SASL_MECHANISM, kafkaSasl } from './credentials.js';
import { releaseNameExpr } from './helm.js';
import { ADMIN_PASSWORD_KEY, SEARCH_AUTH_SECRET } from './search-auth.js';

export function notes(): string {
  const ns = '{{ .Release.Namespace }}';
  const rel = '{{ .Release.Name }}';
  // An object's name as the chart renders it (nameOverride and fullnameOverride included).
  const named = (component: string) => `{{ ${releaseNameExpr(component)} }}`;
  return `Event Observatory {{ .Chart.AppVersion }}: release ${rel} in namespace ${ns}.
{{- if or ${KAFKA_BUNDLED} ${DATABASE_BUNDLED} }}

EVALUATION PROFILE: the bundled{{ if ${KAFKA_BUNDLED} }} Kafka (${named('kafka')}){{ end }}{{ if and ${KAFKA_BUNDLED} ${DATABASE_BUNDLED} }} and{{ end }}{{ if ${DATABASE_BUNDLED} }} PostgreSQL (${named('postgresql')}){{ end }}
are single-node, unreplicated and unbacked-up: for evaluation and CI only, not production.
{{- end }}
{{- if ${KAFKA_BUNDLED} }}

The bundled Kafka takes ${BUNDLED_SASL_MECHANISM} logins only (SASL_PLAINTEXT, inside the cluster): user
{{ ${kafkaSasl('Username')} }}, its password (the release's ingest, consumer and controller read it as a file):
   kubectl -n ${ns} get secret {{ ${kafkaSasl('Secret')} }} -o jsonpath='{.data.{{ .Values.kafka.sasl.passwordSecret.key }}}' | base64 -d; echo
{{- end }}

Services (ClusterIP, port ${HTTP_PORT}): ${named('ingest')} (ingestion API, /docs), ${named('search')} (search UI,
login {{ .Values.search.auth.mode }}{{ if ne .Values.search.serviceType "ClusterIP" }}; {{ .Values.search.serviceType }}, its http port alone{{ end }}), ${named('consumer')} (admin API on port ${ADMIN_PORT}){{ if .Values.controller.enabled }}, ${named('controller')}{{ end }};
each serves /metrics alone on port ${METRICS_PORT}{{ if ne .Values.search.serviceType "ClusterIP" }} (search's: ${named('search-metrics')}){{ end }}.

1. Reach ingest and search:
{{- if .Values.ingest.ingress.enabled }}
   INGEST=http{{ if .Values.ingest.ingress.tlsSecret }}s{{ end }}://{{ .Values.ingest.ingress.host }}
{{- else }}
   kubectl -n ${ns} port-forward svc/${named('ingest')} 8080:${HTTP_PORT} &
   INGEST=http://localhost:8080
{{- end }}
   kubectl -n ${ns} port-forward svc/${named('search')} 8081:${HTTP_PORT} &
   open http://localhost:8081/
${searchLogin(ns)}

2. A producer token (claims sub, exp, scope events:write, audience {{ .Values.auth.audience }}):
{{- if not ${usesKeySet('auth')} }}
   TOKEN=$(kubectl -n ${ns} exec deploy/${named('ingest')} -- node services/ingest/dist/token-cli.js --subject my-producer --ttl 24h)
   (signed with the key of Secret {{ include "observatory.secretName" (dict "root" . "which" "auth") }}, key {{ .Values.secrets.auth.key }})
{{- else }}
   your issuer mints them: ingest verifies a key set ({{ .Values.auth.oidcIssuer | default .Values.auth.jwksUrl | default "this cluster's service accounts" }}).
{{- end }}

3. A first event:
   curl -sS "$INGEST/v1/events" -H "authorization: Bearer $TOKEN" -H 'content-type: application/json' \\
     -H 'ce-specversion: 1.0' -H "ce-id: first-$(date +%s)" -H 'ce-source: /my/first' \\
     -H 'ce-type: com.example.first' -H "ce-time: $(date -u +%Y-%m-%dT%H:%M:%SZ)" -d '{"hello":"world"}'
   then find it at http://localhost:8081/events?source=/my/first

4. Check the install: helm test ${rel} -n ${ns}

5. Alerts and dashboard:
{{- if .Values.monitoring.prometheusRule.enabled }}
   alerts: PrometheusRule ${named('alerts')} (kubectl -n ${ns} get prometheusrule ${named('alerts')})
{{- else }}
   alerts: off (monitoring.prometheusRule.enabled=true makes the PrometheusRule ${named('alerts')})
{{- end }}
{{- if .Values.monitoring.dashboard.enabled }}
   dashboard: ConfigMap ${named('dashboard')} (labels {{ .Values.monitoring.dashboard.labels | toJson }}, for Grafana's sidecar)
{{- else }}
   dashboard: off (monitoring.dashboard.enabled=true makes the ConfigMap ${named('dashboard')})
{{- end }}
`;
}

/** How to log in to search in the chosen mode; with login off, what that exposes. */
function searchLogin(ns: string): string {
  const auth = '.Values.search.auth';
  return `{{- if eq ${auth}.mode "local" }}
   Log in as admin with the generated password (kept across upgrades):
   kubectl -n ${ns} get secret {{ ${SEARCH_AUTH_SECRET} }} -o jsonpath='{.data.${ADMIN_PASSWORD_KEY}}' | base64 -d; echo
{{- if not .Values.search.publicUrl }}
   The session cookie is Secure: browsers keep it over https and on http://localhost (Safari over
   https only). To log in over plain HTTP elsewhere, set search.publicUrl=http://<that address>.
{{- end }}
{{- else if eq ${auth}.mode "oidc" }}
   Log in at {{ ${auth}.oidc.issuer }} (client {{ ${auth}.oidc.clientId }}), search at {{ .Values.search.publicUrl }}.
{{- else if eq ${auth}.mode "proxy" }}
   Log in through your authenticating proxy: its X-Auth-Request-* headers are believed only from
   {{ join ", " ${auth}.proxy.trustedCidrs }}; let nothing else reach the search pods from there.
{{- else }}
   WARNING: login is OFF (search.auth.mode=off). Anyone who reaches the search Service reads
   every team's events, exports them and tails them live. Set search.auth.mode to oidc, proxy
   or local to require a login.
{{- end }}
{{- if and ${auth}.bearer.serviceAccounts (ne ${auth}.mode "off") }}
   Scripts and the kubectl plugin send a service account's token as "authorization: Bearer <token>":
   kubectl -n <namespace> create token <service account> --audience {{ ${auth}.bearer.serviceAccountAudience }}
{{- end }}`;
}
