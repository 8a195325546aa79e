/**
 * The evaluation profile: `kafka.bundled` and `database.bundled` run a single-node KRaft
 * Kafka and a PostgreSQL inside the release, and the Secrets the chart needs are generated when
 * their names are left empty (the bundled Kafka's SCRAM password among them: not kept by helm
 * uninstall, as the broker sets its user's password at every start). Values, the named templates that derive the connection settings and
 * Secret names, and the generated Secrets' template (Helm `lookup` keeps them across upgrades).
 */
import { usesKeySet } from './auth.js';
import { releaseNameExpr, scalar } from './helm.js';
import { imagePullPolicy, imageReference } from './images.js';
import { bool, list, map, oneOf, str, type Tree } from './values-schema.js';

export const KAFKA_PORT = 9092;
export const POSTGRES_PORT = 5432;

const bundledImage = (repository: string, tag: string) => ({
  registry: str('docker.io', `registry of the ${repository} image`),
  repository: str(repository, 'repository of the official image (make images builds a same-named stand-in)'),
  tag: str(tag, 'tag of the image'),
  pullPolicy: oneOf(['', 'Always', 'IfNotPresent', 'Never'], '', 'empty: image.pullPolicy'),
});

/** Peers besides the release's own clients that the bundled server's NetworkPolicy admits. */
const allowFrom = (server: string, example: string) =>
  list([], `NetworkPolicy peers besides the release's clients admitted to the ${server} (e.g. ${example})`, {
    type: 'object',
  });

const persistence = (size: string) => ({
  size: str(size, 'size of the PersistentVolumeClaim (kept by helm uninstall)'),
  storageClass: str('', 'storageClassName of the claim (empty: the cluster default)'),
});

/** `kafka.bundled.*` */
export const kafkaBundledValues: Tree = {
  enabled: bool(
    false,
    'run a single-node KRaft Kafka in the release, for evaluation and CI only (not production); kafka.bootstrapServers is then derived',
  ),
  image: bundledImage('apache/kafka', '4.4.0'),
  heapOpts: str('-Xms256m -Xmx512m', 'KAFKA_HEAP_OPTS of the broker'),
  resources: map(
    { requests: { cpu: '100m', memory: '768Mi' }, limits: { memory: '1Gi' } },
    'resources of the broker container',
  ),
  persistence: persistence('8Gi'),
  allowFrom: allowFrom('broker', "KEDA's operator, which reads the consumer's lag"),
};

/** `database.bundled.*` */
export const databaseBundledValues: Tree = {
  enabled: bool(
    false,
    'run a PostgreSQL in the release, for evaluation and CI only (not production); database.url and the store Secret are then derived and generated',
  ),
  image: bundledImage('postgres', '15-bookworm'),
  database: str('observatory', 'the database it creates (the owner is database.user, default observatory)'),
  resources: map(
    { requests: { cpu: '50m', memory: '128Mi' }, limits: { memory: '512Mi' } },
    'resources of the PostgreSQL container',
  ),
  persistence: persistence('8Gi'),
  allowFrom: allowFrom('PostgreSQL', "an admin's psql pod"),
};

/** Helm conditions of the profile. */
export const KAFKA_BUNDLED = '.Values.kafka.bundled.enabled';
export const DATABASE_BUNDLED = '.Values.database.bundled.enabled';
const exporterEnabled = '(toString .Values.monitoring.postgresExporter.enabled)';
/** postgres_exporter is deployed: `true`, or `auto` with the bundled PostgreSQL. */
export const POSTGRES_EXPORTER_ON = `(or (eq ${exporterEnabled} "true") (and (eq ${exporterEnabled} "auto") ${DATABASE_BUNDLED}))`;

/**
 * The release's components that connect to the bundled Kafka and PostgreSQL: each server's
 * NetworkPolicy admits them, and theirs let them out to it (`bundledEgress`). The migration and the
 * jobs use only PostgreSQL; search neither. The owner (migration), the writer (consumer, jobs), the
 * reader (search), pg_monitor (postgres_exporter).
 */
export const KAFKA_CLIENTS = ['ingest', 'consumer', 'controller'];
export const POSTGRES_CLIENTS = ['migration', 'consumer', 'jobs', 'search', 'postgres-exporter'];
/** Clients of the bundled PostgreSQL while a Helm condition holds: the controller with its read-only URL. */
export const POSTGRES_CLIENTS_WHEN: Record<string, string> = {
  controller: '(ne .Values.controller.storeUrlSecret.name "")',
};

/**
 * Helm list expression: the egress rules of `component`'s NetworkPolicy to the bundled servers it
 * is a client of, by pod (none without them). `networkPolicies.egressTo`'s default is an ipBlock,
 * which does not match pod addresses under every network plugin (Cilium's: pods are identities).
 */
export function bundledEgress(component: string): string {
  const database = POSTGRES_CLIENTS_WHEN[component] ?? String(POSTGRES_CLIENTS.includes(component));
  return `(include "observatory.bundledEgress" (dict "root" . "kafka" ${KAFKA_CLIENTS.includes(component)} "database" ${database}) | fromYamlArray)`;
}

/** The Kafka bootstrap servers: the bundled broker's Service, or `kafka.bootstrapServers`. */
export const kafkaBootstrap = (): string => scalar('{{ include "observatory.kafkaBootstrap" . | toJson }}');

/**
 * The migration hook's events. Pre-install hooks run before the release's objects exist, the
 * bundled PostgreSQL among them: with it the first migration is a post-install hook, which waits
 * for the database (`waitForDatabase`). Helm's `--wait` lets post-install hooks run only once the
 * pods are Ready; the consumer and search are Ready without the schema (their readiness is a
 * `SELECT 1`). The consumer logs in as the writer, which may not migrate: a write before the
 * schema exists fails as the store's condition (transient), and the consumer retries it.
 */
export const migrationHook = (): string =>
  scalar(`{{ ternary "post-install,pre-upgrade" "pre-install,pre-upgrade" ${DATABASE_BUNDLED} | toJson }}`);

/** The migration Job's init container that waits for the bundled PostgreSQL (none otherwise). */
export const waitForDatabase = (): string => '(include "observatory.waitForDatabase" . | fromYamlArray)';

/**
 * Template text of the login role `database.<role>.user` names; left empty, the bundled
 * PostgreSQL's `observatory_<role>` (the evaluation profile never runs a service as the owner),
 * and with an external database empty: that role takes the owner's credentials.
 */
export const roleUser = (role: 'writer' | 'reader'): string =>
  `(include "observatory.roleUser" (dict "Values" .Values "role" "${role}"))`;

/** The name of the Secret of `secrets.<which>` (given, or the generated one). */
export const secretName = (which: 'store' | 'auth' | 'admin' | 'application'): string =>
  `(include "observatory.secretName" (dict "root" . "which" "${which}"))`;

/** Where the generated Secrets' names come from: `<release>-<suffix>`. */
const GENERATED = { store: 'store', auth: 'tokens', admin: 'tokens', application: 'application' };

const owner = '(.Values.database.user | default "observatory")';

/** `templates/_bundled.tpl`: the named templates the constructs include. */
export const BUNDLED_TEMPLATES = `{{/* The bootstrap servers the release's clients use: the bundled broker's Service by its rendered name (nameOverride, fullnameOverride). */}}
{{- define "observatory.kafkaBootstrap" -}}
{{- if ${KAFKA_BUNDLED} }}{{ printf "%s.%s.svc:${KAFKA_PORT}" ${releaseNameExpr('kafka')} .Release.Namespace }}
{{- else }}{{ .Values.kafka.bootstrapServers }}{{ end }}
{{- end }}

{{/* database.url, or the bundled PostgreSQL's (its owner in the URL; its Service by its rendered name). */}}
{{- define "observatory.bundledDatabaseUrl" -}}
{{- if ${DATABASE_BUNDLED} }}{{ printf "postgres://%s@%s.%s.svc:${POSTGRES_PORT}/%s" ${owner} ${releaseNameExpr('postgresql')} .Release.Namespace .Values.database.bundled.database }}
{{- else }}{{ .Values.database.url }}{{ end }}
{{- end }}

{{/* Egress to the bundled servers' pods (args: root, kafka, database: whether the component is their client). */}}
{{- define "observatory.bundledEgress" -}}
{{- if and .kafka .root${KAFKA_BUNDLED} }}
- to: [{ podSelector: { matchLabels: { app.kubernetes.io/name: kafka, app.kubernetes.io/instance: {{ .root.Release.Name | toJson }} } } }]
  ports: [{ protocol: TCP, port: ${KAFKA_PORT} }]
{{- end }}
{{- if and .database .root${DATABASE_BUNDLED} }}
- to: [{ podSelector: { matchLabels: { app.kubernetes.io/name: postgresql, app.kubernetes.io/instance: {{ .root.Release.Name | toJson }} } } }]
  ports: [{ protocol: TCP, port: ${POSTGRES_PORT} }]
{{- end }}
{{- end }}

{{/* The user of database.<role> (args: Values, role): its own, else observatory_<role> with the bundled PostgreSQL. */}}
{{- define "observatory.roleUser" -}}
{{- (index .Values.database .role).user | default (ternary (printf "observatory_%s" .role) "" ${DATABASE_BUNDLED}) }}
{{- end }}

{{/*
The migration's wait for the bundled PostgreSQL (pg_isready of its image; bounded by the Job's
deadline), then the writer and reader roles made when missing, as the owner: a server made by an
older release has none yet at pre-upgrade, and the migration's grants need them. The server sets
their passwords at its next start (roles.sh).
*/}}
{{- define "observatory.waitForDatabase" -}}
{{- if ${DATABASE_BUNDLED} }}
- name: wait-for-database
  image: {{ ${imageReference('database.bundled')} | toJson }}
  imagePullPolicy: {{ ${imagePullPolicy('database.bundled')} | toJson }}
  # A user name given: the pod's uid has no entry in that image, and pg_isready would not try.
  command:
    - sh
    - -c
    - |
      until pg_isready --quiet --timeout 2 --username probe; do sleep 2; done
      for name in "$WRITER_USER" "$READER_USER"; do
        psql -X -v ON_ERROR_STOP=1 --quiet --set=name="$name" <<'SQL' || exit 1
      SELECT format('CREATE ROLE %I LOGIN', :'name') WHERE NOT EXISTS (SELECT FROM pg_roles WHERE rolname = :'name') \\gexec
      SQL
      done
  env:
    - { name: PGHOST, value: {{ ${releaseNameExpr('postgresql')} | toJson }} }
    - { name: PGPORT, value: "${POSTGRES_PORT}" }
    - { name: PGUSER, value: {{ ${owner} | toJson }} }
    - { name: PGDATABASE, value: {{ .Values.database.bundled.database | toJson }} }
    - name: PGPASSWORD
      valueFrom: { secretKeyRef: { name: {{ ${secretName('store')} | toJson }}, key: {{ .Values.secrets.store.key | toJson }} } }
    - { name: WRITER_USER, value: {{ ${roleUser('writer')} | toJson }} }
    - { name: READER_USER, value: {{ ${roleUser('reader')} | toJson }} }
  resources: { requests: { cpu: 10m, memory: 16Mi }, limits: { memory: 64Mi } }
  securityContext: { allowPrivilegeEscalation: false, readOnlyRootFilesystem: true, runAsNonRoot: true, capabilities: { drop: [ALL] } }
{{- end }}
{{- end }}

{{/* The Secret of secrets.<which> (args: root, which): the given name, else the generated one. */}}
{{- define "observatory.secretName" -}}
{{- $suffix := get (dict ${Object.entries(GENERATED)
  .map(([k, v]) => `"${k}" "${v}"`)
  .join(' ')}) .which }}
{{- (index .root.Values.secrets .which).name | default (printf "%s-%s" .root.Release.Name $suffix) }}
{{- end }}

{{/*
A generated Secret (args: root, name, keys, keep): each key keeps the value the Secret in the
cluster has (lookup), else a random one; never regenerated by an upgrade. "keep" survives
helm uninstall (the bundled database's passwords, which its kept volume was made with).
*/}}
{{- define "observatory.generatedSecret" -}}
{{- $existing := (lookup "v1" "Secret" .root.Release.Namespace .name).data | default dict }}
apiVersion: v1
kind: Secret
metadata:
  name: {{ .name | toJson }}
  labels:
    app.kubernetes.io/name: secrets
    app.kubernetes.io/instance: {{ .root.Release.Name | toJson }}
    app.kubernetes.io/part-of: event-observatory
    app.kubernetes.io/managed-by: {{ .root.Release.Service | toJson }}
    app.kubernetes.io/version: {{ .root.Chart.AppVersion | toJson }}
    helm.sh/chart: {{ printf "%s-%s" .root.Chart.Name .root.Chart.Version | toJson }}
    {{- with .root.Values.commonLabels }}
    {{- toYaml . | nindent 4 }}
    {{- end }}
  {{- if .keep }}
  annotations:
    helm.sh/resource-policy: keep
  {{- end }}
type: Opaque
data:
{{- range .keys }}
  {{ . | toJson }}: {{ index $existing . | default (randAlphaNum 48 | b64enc) | toJson }}
{{- end }}
{{- end }}
`;

/** `templates/generated-secrets.yaml`: the Secrets whose names are left empty. */
export const generatedSecretsTemplate = (): string => `{{- $s := .Values.secrets }}
{{- if and ${DATABASE_BUNDLED} (not $s.store.name) }}
{{- $keys := list $s.store.key }}
{{- range $role := list "writer" "reader" }}
{{- $own := index $.Values.database $role }}
{{- if and (include "observatory.roleUser" (dict "Values" $.Values "role" $role)) (not $own.passwordSecret.name) }}{{ $keys = append $keys $own.passwordSecret.key }}{{ end }}
{{- end }}
{{- $exporter := .Values.monitoring.postgresExporter }}
{{- if and ${POSTGRES_EXPORTER_ON} (not $exporter.passwordSecret.name) }}{{ $keys = append $keys $exporter.passwordSecret.key }}{{ end }}
{{- include "observatory.generatedSecret" (dict "root" . "name" (printf "%s-store" .Release.Name) "keys" (uniq $keys) "keep" true) }}
{{- end }}
{{- $tokens := list }}
{{- if not (or $s.auth.name ${usesKeySet('auth')}) }}{{ $tokens = append $tokens $s.auth.key }}{{ end }}
{{- if not (or $s.admin.name ${usesKeySet('admin')}) }}{{ $tokens = append $tokens $s.admin.key }}{{ end }}
{{- if $tokens }}
---
{{- include "observatory.generatedSecret" (dict "root" . "name" (printf "%s-tokens" .Release.Name) "keys" (uniq $tokens) "keep" false) }}
{{- end }}
{{- if and ${KAFKA_BUNDLED} (not .Values.kafka.sasl.passwordSecret.name) }}
---
{{- include "observatory.generatedSecret" (dict "root" . "name" (include "observatory.kafkaSaslSecret" .) "keys" (list .Values.kafka.sasl.passwordSecret.key) "keep" false) }}
{{- end }}
{{- if not $s.application.name }}
---
{{- include "observatory.generatedSecret" (dict "root" . "name" (printf "%s-application" .Release.Name) "keys" (list $s.application.key) "keep" false) }}
{{- end }}
{{- include "observatory.searchAuthSecret" . }}
`;
