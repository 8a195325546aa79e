/**
 * Secured connections of the chart's pods: the Kafka TLS and SASL material and the
 * PostgreSQL CA come from existing Secrets and are mounted as files (never put in environment
 * variables, so they do not show in `kubectl describe` or a crash dump); the settings point at
 * the files. PostgreSQL credentials per role: the owner migrates, the writer stores (consumer,
 * jobs), the reader searches; one Secret may hold them all. The bundled PostgreSQL always has
 * the writer and reader (bundled.ts: roleUser); an external database without writer and reader
 * users gives every component the owner's (a one-role install).
 *
 * The conditional parts are Helm named templates (`templates/_credentials.tpl`), written out by
 * write-chart.ts; constructs put them in place with `blocks` and `scalar`.
 */
import type { ApiObject } from 'cdk8s';
import type * as k8s from 'cdk8s-plus-34/lib/imports/k8s.js';
import { roleUser, secretName } from './bundled.js';
import { blocks, scalar } from './helm.js';

export const KAFKA_DIR = '/etc/observatory/kafka';
export const POSTGRES_DIR = '/etc/observatory/postgres';

export type DatabaseRole = 'owner' | 'writer' | 'reader';

/** What a pod connects to: Kafka, and PostgreSQL as which role. */
export interface Connections {
  kafka?: boolean;
  database?: DatabaseRole;
}

const args = (c: Connections) =>
  `(dict "Values" .Values "kafka" ${c.kafka ? 'true' : 'false'} "database" ${c.database ? 'true' : 'false'})`;

/** A component's own files: Helm list expressions of volumes and of their mounts. */
export interface OwnFiles {
  volumes: string;
  mounts: string;
}

/**
 * Puts the pod's volumes and its first container's mounts (tmp and the credentials) at `pod`, then
 * the component's `own` files, then the operator's `extraVolumes` and `extraVolumeMounts` of
 * `.Values.<extras>`.
 */
export function credentialVolumes(
  object: ApiObject,
  pod: string,
  c: Connections,
  extras: string,
  own?: OwnFiles,
): void {
  blocks(object, {
    [`${pod}/volumes`]: `(concat (include "observatory.volumes" ${args(c)} | fromYamlArray)${own ? ` ${own.volumes}` : ''} .Values.${extras}.extraVolumes)`,
    [`${pod}/containers/0/volumeMounts`]: `(concat (include "observatory.volumeMounts" ${args(c)} | fromYamlArray)${own ? ` ${own.mounts}` : ''} .Values.${extras}.extraVolumeMounts)`,
  });
}

/** The `BROKER_*` security settings of a Kafka client (files under KAFKA_DIR). */
export function kafkaSecuritySettings(): Record<string, string> {
  // Empty when not used (the services read an empty variable as unset); quoted, as ConfigMap data must be.
  const file = (cond: string, name: string) =>
    scalar(`{{ if ${cond} }}"${KAFKA_DIR}/${name}"{{ else }}""{{ end }}`);
  return {
    BROKER_SECURITY_PROTOCOL: scalar('{{ include "observatory.kafkaProtocol" . | toJson }}'),
    BROKER_SASL_MECHANISM: scalar('{{ .Values.kafka.sasl.mechanism | toJson }}'),
    BROKER_SASL_USERNAME: scalar('{{ .Values.kafka.sasl.username | toJson }}'),
    BROKER_SASL_PASSWORD_FILE: file('.Values.kafka.sasl.mechanism', 'sasl-password'),
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
 * reader (search) reads from `database.readUrl` when one is given (a streaming replica).
 */
export function databaseSettings(role: DatabaseRole): Record<string, string> {
  const url = role === 'reader' ? 'observatory.readDatabaseUrl' : 'observatory.databaseUrl';
  return {
    DATABASE_URL: scalar(`{{ include "${url}" . | toJson }}`),
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
export const CREDENTIALS_TEMPLATES = `{{/* The Kafka security protocol from kafka.tls.enabled and kafka.sasl.mechanism. */}}
{{- define "observatory.kafkaProtocol" -}}
{{- if .Values.kafka.sasl.mechanism }}
{{- $_ := required "kafka.sasl.username is required with kafka.sasl.mechanism" .Values.kafka.sasl.username }}
{{- $_ := required "kafka.sasl.passwordSecret.name is required with kafka.sasl.mechanism" .Values.kafka.sasl.passwordSecret.name }}{{ ternary "SASL_SSL" "SASL_PLAINTEXT" .Values.kafka.tls.enabled }}
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
{{- if and .kafka (or .Values.kafka.sasl.mechanism (and $k.tls.enabled (or $k.tls.caSecret.name $k.tls.clientCertSecret.name))) }}true{{ end }}
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
{{- if $k.sasl.mechanism }}
      - secret:
          name: {{ $k.sasl.passwordSecret.name | toJson }}
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
