/**
 * `templates/_helpers.tpl`: named templates of the operator-facing values (names, pull secrets,
 * the alerts' scope), written out by write-chart.ts and used through helm.ts's `releaseName`,
 * common.ts and monitoring.ts.
 */
import { ALERT_SCOPE_TEMPLATE } from './constructs/monitoring.js';

export const HELPER_TEMPLATES = `{{/* The prefix of every object name: fullnameOverride, else <release>[-<nameOverride>], cut to (index . 1). */}}
{{- define "observatory.prefix" -}}
{{- $root := index . 0 }}
{{- $name := $root.Release.Name }}
{{- with $root.Values.nameOverride }}{{ $name = printf "%s-%s" $root.Release.Name . }}{{ end }}
{{- $name = $root.Values.fullnameOverride | default $name }}
{{- $name | trunc (int (index . 1)) | trimSuffix "-" }}
{{- end }}

{{/* imagePullSecrets: image.pullSecrets and global.imagePullSecrets (names or {name} items), once each. */}}
{{- define "observatory.pullSecrets" -}}
{{- $names := list }}
{{- range concat .Values.image.pullSecrets ((.Values.global).imagePullSecrets | default list) }}
{{- if kindIs "map" . }}{{ $names = append $names .name }}{{ else }}{{ $names = append $names . }}{{ end }}
{{- end }}
{{- range $names | uniq }}
- name: {{ . | toJson }}
{{- end }}
{{- end }}

${ALERT_SCOPE_TEMPLATE}`;
