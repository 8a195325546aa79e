/**
 * Secured connections of the chart's pods: the Kafka TLS and SASL material and the
 * PostgreSQL CA come from existing Secrets and are mounted as files (never put in environment
 * variables, so they do not show in `kubectl describe` or a crash dump); the settings point at
 * the files. PostgreSQL credentials per role: the owner migrates, the writer stores (consumer,
 * jobs), the reader searches; one Secret may hold them all. The bundled PostgreSQL always has
 * the writer and reader (bundled.ts: roleUser); an external database without writer and reader
 * users gives every component the owner's (a one-role install). With the bundled Kafka the
 * clients log in with SCRAM-SHA-512 as its user (kafka.sasl.* left empty: `observatory`, the
 * password generated in `<release>-kafka`; constructs/bundled-kafka.ts makes that user).
 *
 * The conditional parts are Helm named templates (`templates/_credentials.tpl`), written out by
 * write-chart.ts; constructs put them in place with `blocks` and `scalar`.
 */
import type { ApiObject } from 'cdk8s';
import type * as k8s from 'cdk8s-plus-34/lib/imports/k8s.js';
import { KAFKA_BUNDLED, roleUser, secretName } from './bundled.js';
import { blocks, scalar } from './helm.js';

export const KAFKA_DIR = '/etc/observatory/kafka';
export const POSTGRES_DIR = '/etc/observatory/postgres';
/** The SASL password's file, in every Kafka client and in the bundled broker (its SCRAM user's). */
export const SASL_PASSWORD_FILE = `${KAFKA_DIR}/sasl-password`;
/** The only mechanism the bundled broker takes. */
export const BUNDLED_SASL_MECHANISM = 'SCRAM-SHA-512';

export type DatabaseRole = 'owner' | 'writer' | 'reader';

/** What a pod connects to: Kafka, and PostgreSQL as which role. */
export interface Connections {
  kafka?: boolean;
  database?: DatabaseRole;
}

const args = (c: Connections) =>
  `(dict "Values" .Values "Release" .Release "kafka" ${c.kafka ? 'true' : 'false'} "database" ${c.database ? 'true' : 'false'})`;

/**
 * The clients' SASL login, `kafka.sasl.*` with the bundled broker's defaults (template text of a
 * string; `.` needs Values and Release): its mechanism, user and password Secret's name.
 */
export const kafkaSasl = (what: 'Mechanism' | 'Username' | 'Secret'): string =>
  `(include "observatory.kafkaSasl${what}" .)`;

/** A component's own files: Helm list expressions of volumes and of their mounts. */
export interface OwnFiles {
  volumes: string;
  mounts: string;
}

/**
 * Puts the pod's volumes and its first container's mounts (tmp and the credentials) at `pod`, then
 * the component's `own` files, then the operator's `extraVolumes` and `extraVolumeMounts` of
 * `.Values.<extras>` (a component without such values: none).
 */
export function credentialVolumes(
  object: ApiObject,
  pod: string,
  c: Connections,
  extras: string | undefined,
  own?: OwnFiles,
): void {
  const extra = (which: string) => (extras ? ` .Values.${extras}.${which}` : '');
  blocks(object, {
    [`${pod}/volumes`]: `(concat (include "observatory.volumes" ${args(c)} | fromYamlArray)${own ? ` ${own.volumes}` : ''}${extra('extraVolumes')})`,
    [`${pod}/containers/0/volumeMounts`]: `(concat (include "observatory.volumeMounts" ${args(c)} | fromYamlArray)${own ? ` ${own.mounts}` : ''}${extra('extraVolumeMounts')})`,
  });
}

/** The `BROKER_*` security settings of a Kafka client (files under KAFKA_DIR). */
export function kafkaSecuritySettings(): Record<string, string> {
  // Empty when not used (the services read an empty variable as unset); quoted, as ConfigMap data must be.
  const file = (cond: string, name: string) =>
    scalar(`{{ if ${cond} }}"${KAFKA_DIR}/${name}"{{ else }}""{{ end }}`);
  return {
    BROKER_SECURITY_PROTOCOL: scalar('{{ include "observatory.kafkaProtocol" . | toJson }}'),
    BROKER_SASL_MECHANISM: scalar(`{{ ${kafkaSasl('Mechanism')} | toJson }}`),
    BROKER_SASL_USERNAME: scalar(`{{ ${kafkaSasl('Username')} | toJson }}`),
    BROKER_SASL_PASSWORD_FILE: file(kafkaSasl('Mechanism'), 'sasl-password'),
    BROKER_SSL_CA_FILE: file('and .Values.kafka.tls.enabled .Values.kafka.tls.caSecret.name', 'ca.crt'),
    BROKER_SSL_CERT_FILE: file(
      'and .Values.kafka.tls.enabled .Values.kafka.tls.clientCertSecret.name',
      'tls.crt',
    ),
    BROKER_SSL_KEY_FILE: file(
      'and .Values.kafka.tls.enabled .Values.kafka.tls.clientCertSecret.name',
      'tls.key',
    ),
  };
}

/**
 * The owner's DATABASE_USER: `database.user`, else (empty) the URL's user counts; the bundled
 * PostgreSQL's owner is `database.user` or `observatory`, written in its derived URL.
 */
const OWNER_USER = '.Values.database.user';

/**
 * DATABASE_URL (with the TLS parameters of `database.tls`) and DATABASE_USER of `role`; the
 * reader (search) reads from `database.readUrl` when one is given (a streaming replica), and then
 * writes its saved searches and ended sessions to the primary, DATABASE_PRIMARY_URL.
 */
export function databaseSettings(role: DatabaseRole): Record<string, string> {
  const url = role === 'reader' ? 'observatory.readDatabaseUrl' : 'observatory.databaseUrl';
  return {
    DATABASE_URL: scalar(`{{ include "${url}" . | toJson }}`),
    ...(role === 'reader' && {
      DATABASE_PRIMARY_URL: scalar(
        '{{ ternary (include "observatory.databaseUrl" .) "" (ne .Values.database.readUrl "") | toJson }}',
      ),
    }),
    DATABASE_USER: scalar(
      role === 'owner'
        ? `{{ ${OWNER_USER} | toJson }}`
        : `{{ ${roleUser(role)} | default ${OWNER_USER} | toJson }}`,
    ),
  };
}

/** DATABASE_PASSWORD of `role`: its own Secret key, or the owner's when the role has no user. */
export function databasePassword(role: DatabaseRole): k8s.EnvVar {
  if (role === 'owner')
    return {
      name: 'DATABASE_PASSWORD',
      valueFrom: {
        secretKeyRef: {
          name: scalar(`{{ ${secretName('store')} | toJson }}`),
          key: scalar('{{ .Values.secrets.store.key | toJson }}'),
        },
      },
    };
  const own = `.Values.database.${role}`;
  const hasUser = `(ne ${roleUser(role)} "")`;
  return {
    name: 'DATABASE_PASSWORD',
    valueFrom: {
      secretKeyRef: {
        name: scalar(
          `{{ ternary (${own}.passwordSecret.name | default ${secretName('store')}) ${secretName('store')} ${hasUser} | toJson }}`,
        ),
        key: scalar(`{{ ternary ${own}.passwordSecret.key .Values.secrets.store.key ${hasUser} | toJson }}`),
      },
    },
  };
}

/** `templates/_credentials.tpl`: the named templates the functions above include. */
export const CREDENTIALS_TEMPLATES = `{{/*
kafka.sasl.* as the clients log in (args: Values, Release): with the bundled Kafka, what is left
empty is its SCRAM-SHA-512 user, observatory, and the generated Secret <release>-kafka.
*/}}
{{- define "observatory.kafkaSaslMechanism" -}}
{{- .Values.kafka.sasl.mechanism | default (ternary "${BUNDLED_SASL_MECHANISM}" "" ${KAFKA_BUNDLED}) }}
{{- end }}
{{- define "observatory.kafkaSaslUsername" -}}
{{- .Values.kafka.sasl.username | default (ternary "observatory" "" ${KAFKA_BUNDLED}) }}
{{- end }}
{{- define "observatory.kafkaSaslSecret" -}}
{{- .Values.kafka.sasl.passwordSecret.name | default (ternary (printf "%s-kafka" .Release.Name) "" ${KAFKA_BUNDLED}) }}
{{- end }}

{{/* The Kafka security protocol from kafka.tls.enabled and the SASL mechanism. */}}
{{- define "observatory.kafkaProtocol" -}}
{{- if and ${KAFKA_BUNDLED} (ne ${kafkaSasl('Mechanism')} "${BUNDLED_SASL_MECHANISM}") }}{{ fail "kafka.sasl.mechanism: the bundled Kafka takes ${BUNDLED_SASL_MECHANISM} logins only (leave it empty)" }}{{ end }}
{{- if and ${KAFKA_BUNDLED} .Values.kafka.tls.enabled }}{{ fail "kafka.tls.enabled: the bundled Kafka serves no TLS (its SCRAM logins travel inside the cluster); set it false" }}{{ end }}
{{- if ${kafkaSasl('Mechanism')} }}
{{- $_ := required "kafka.sasl.username is required with kafka.sasl.mechanism" ${kafkaSasl('Username')} }}
{{- $_ := required "kafka.sasl.passwordSecret.name is required with kafka.sasl.mechanism" ${kafkaSasl('Secret')} }}{{ ternary "SASL_SSL" "SASL_PLAINTEXT" .Values.kafka.tls.enabled }}
{{- else }}{{ ternary "SSL" "PLAINTEXT" .Values.kafka.tls.enabled }}{{ end -}}
{{- end }}

{{/* database.url with sslmode and sslrootcert of database.tls appended. */}}
{{- define "observatory.databaseUrl" -}}
{{- include "observatory.withDatabaseTls" (dict "Values" .Values "url" (include "observatory.bundledDatabaseUrl" .)) }}
{{- end }}

{{/* What search reads: database.readUrl (a streaming replica), else database.url; TLS as above. */}}
{{- define "observatory.readDatabaseUrl" -}}
{{- include "observatory.withDatabaseTls" (dict "Values" .Values "url" (.Values.database.readUrl | default (include "observatory.bundledDatabaseUrl" .))) }}
{{- end }}

{{/* .url with the TLS parameters of database.tls (args: Values, url). */}}
{{- define "observatory.withDatabaseTls" -}}
{{- $params := list }}
{{- with .Values.database.tls.mode }}{{ $params = append $params (printf "sslmode=%s" .) }}{{ end }}
{{- if .Values.database.tls.caSecret.name }}{{ $params = append $params "sslrootcert=${POSTGRES_DIR}/ca.crt" }}{{ end }}
{{- $url := .url }}
{{- if $params }}{{ $url = printf "%s%s%s" $url (ternary "&" "?" (contains "?" $url)) (join "&" $params) }}{{ end }}
{{- $url }}
{{- end }}

{{/* Whether the pod mounts Kafka credentials / the PostgreSQL CA (args: Values, kafka, database). */}}
{{- define "observatory.kafkaFiles" -}}
{{- $k := .Values.kafka }}
{{- if and .kafka (or ${kafkaSasl('Mechanism')} (and $k.tls.enabled (or $k.tls.caSecret.name $k.tls.clientCertSecret.name))) }}true{{ end }}
{{- end }}
{{- define "observatory.postgresFiles" -}}
{{- if and .database .Values.database.tls.caSecret.name }}true{{ end }}
{{- end }}

{{/* The pod's volumes: /tmp, and the credentials it needs. */}}
{{- define "observatory.volumes" -}}
{{- $k := .Values.kafka }}
- name: tmp
  emptyDir:
    sizeLimit: 64Mi
{{- if include "observatory.kafkaFiles" . }}
- name: kafka-credentials
  projected:
    defaultMode: 288
    sources:
{{- if and $k.tls.enabled $k.tls.caSecret.name }}
      - secret:
          name: {{ $k.tls.caSecret.name | toJson }}
          items: [{ key: {{ $k.tls.caSecret.key | toJson }}, path: ca.crt }]
{{- end }}
{{- if and $k.tls.enabled $k.tls.clientCertSecret.name }}
      - secret:
          name: {{ $k.tls.clientCertSecret.name | toJson }}
          items:
            - { key: {{ $k.tls.clientCertSecret.certificateKey | toJson }}, path: tls.crt }
            - { key: {{ $k.tls.clientCertSecret.keyKey | toJson }}, path: tls.key }
{{- end }}
{{- if ${kafkaSasl('Mechanism')} }}
      - secret:
          name: {{ ${kafkaSasl('Secret')} | toJson }}
          items: [{ key: {{ $k.sasl.passwordSecret.key | toJson }}, path: sasl-password }]
{{- end }}
{{- end }}
{{- if include "observatory.postgresFiles" . }}
- name: postgres-ca
  secret:
    secretName: {{ .Values.database.tls.caSecret.name | toJson }}
    defaultMode: 288
    items: [{ key: {{ .Values.database.tls.caSecret.key | toJson }}, path: ca.crt }]
{{- end }}
{{- end }}

{{/* The first container's mounts, matching observatory.volumes. */}}
{{- define "observatory.volumeMounts" -}}
- name: tmp
  mountPath: /tmp
{{- if include "observatory.kafkaFiles" . }}
- name: kafka-credentials
  mountPath: ${KAFKA_DIR}
  readOnly: true
{{- end }}
{{- if include "observatory.postgresFiles" . }}
- name: postgres-ca
  mountPath: ${POSTGRES_DIR}
  readOnly: true
{{- end }}
{{- end }}
`;
