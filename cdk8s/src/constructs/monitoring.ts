/**
 * The optional monitoring objects: a ServiceMonitor per scraped component (postgres_exporter's
 * too), the PrometheusRule made from the rule files of monitoring/alerts (the single source of the
 * alerts) with every expression scoped to the release and absolute runbook URLs, and the Grafana
 * dashboard of monitoring/dashboards as a ConfigMap the Grafana sidecar picks up (its label from
 * `monitoring.dashboard.labels`).
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import * as k8s from 'cdk8s-plus-34/lib/imports/k8s.js';
import { Construct } from 'constructs';
import { parse } from 'yaml';
import {
  PrometheusRule,
  type PrometheusRuleSpecGroups,
  type PrometheusRuleSpecGroupsRules,
  PrometheusRuleSpecGroupsRulesExpr,
} from '../../imports/prometheusrules-monitoring.coreos.com.js';
import {
  ServiceMonitor,
  type ServiceMonitorSpecEndpoints,
} from '../../imports/servicemonitors-monitoring.coreos.com.js';
import { POSTGRES_EXPORTER_ON } from '../bundled.js';
import { blocks, onlyIf, releaseNameExpr, scalar, spread, text, value } from '../helm.js';
import { REPO_ROOT } from '../paths.js';
import { metadata, selector } from './common.js';
import { metricsServiceRelabelings } from './http-service.js';

const MONITORING = join(REPO_ROOT, 'monitoring');

export const SCRAPED = ['ingest', 'consumer', 'search', 'controller'] as const;

/** A rule group as monitoring/alerts/*.yaml writes it (promtool's format). */
interface RuleGroup extends Omit<PrometheusRuleSpecGroups, 'rules'> {
  rules: (Omit<PrometheusRuleSpecGroupsRules, 'expr'> & { expr: string })[];
}

/** The rule groups of monitoring/alerts/*.yaml, in file order. */
export function alertGroups(): RuleGroup[] {
  const dir = join(MONITORING, 'alerts');
  return readdirSync(dir)
    .filter((f) => f.endsWith('.yaml'))
    .sort()
    .flatMap((f) => (parse(readFileSync(join(dir, f), 'utf8')) as { groups: RuleGroup[] }).groups);
}

/** The scope every selector of monitoring/alerts carries: the services as `make dev` labels them. */
export const LOCAL_SCOPE = 'service=~"ingest|consumer|search|controller|postgres-exporter"';
const SCOPED = ['ingest', 'consumer', 'search', 'controller', 'postgres-exporter'];

/**
 * `observatory.alertScope` (in _helpers.tpl): the release's own series, its namespace and its
 * Services by the names the chart renders (so nameOverride and fullnameOverride included; the
 * Prometheus Operator sets `service` and `job` to a target's Service name).
 */
export const ALERT_SCOPE_TEMPLATE = `{{/* The alerts' PromQL scope: the release's namespace and its scraped Services' names (include with the root). */}}
{{- define "observatory.alertScope" -}}
{{- printf "namespace=%q, service=~%q" .Release.Namespace (printf "${SCOPED.map(() => '%s').join('|')}" ${SCOPED.map((c) => releaseNameExpr(c)).join(' ')}) }}
{{- end }}
`;
/** Helm: the release's scope, unless prometheusRule.selector says. */
const RELEASE_SCOPE =
  '(.Values.monitoring.prometheusRule.selector | default (include "observatory.alertScope" $))';

/** A monitoring object's metadata: its own labels and namespace values (`monitoring.<kind>`). */
const monitoringMetadata = (kind: string, component: string, name = component) => {
  const base = metadata(component, name);
  return {
    ...base,
    namespace: scalar(`{{ .Values.monitoring.${kind}.namespace | default .Release.Namespace | toJson }}`),
    labels: { ...base.labels, [spread(`.Values.monitoring.${kind}.labels`)]: '' },
  };
};

/**
 * Helm: `search_url`, the search at `path` under search.publicUrl, as a map to merge into an
 * alert's annotations; empty (no annotation) while search.publicUrl is unset.
 */
const searchUrl = (path: string) =>
  `(ternary (dict "search_url" (print (trimSuffix "/" .Values.search.publicUrl) "${path}")) (dict) (not (empty .Values.search.publicUrl)))`;

/** The alerts with the release's scope, runbook URL and `for:` overrides put in by Helm. */
function releaseGroups(): PrometheusRuleSpecGroups[] {
  return alertGroups().map((group) => ({
    ...group,
    rules: group.rules.map(({ expr, annotations: given, ...rule }) => {
      const { search_path: searchPath, ...annotations } = given ?? {};
      if (!expr.includes(LOCAL_SCOPE)) throw new Error(`${rule.alert}: its expression lacks ${LOCAL_SCOPE}`);
      // A Go raw string holds the PromQL as it is; Helm swaps the local scope for the release's.
      const scoped = `{{ replace ${JSON.stringify(LOCAL_SCOPE)} ${RELEASE_SCOPE} \`${expr.trimEnd()}\` | toJson }}`;
      const anchor = String(annotations?.runbook_url).split('#')[1];
      return {
        ...rule,
        expr: PrometheusRuleSpecGroupsRulesExpr.fromString(scalar(scoped)),
        ...(rule.for
          ? {
              for: scalar(
                `{{ index .Values.monitoring.prometheusRule "for" "${rule.alert}" | default "${rule.for}" | toJson }}`,
              ),
            }
          : {}),
        annotations: {
          ...annotations,
          runbook_url: scalar(`{{ printf "%s#${anchor}" .Values.monitoring.runbookBaseUrl | toJson }}`),
          ...(searchPath ? { [spread(searchUrl(searchPath))]: '' } : {}),
        },
      };
    }),
  }));
}

export class Monitoring extends Construct {
  constructor(scope: Construct) {
    super(scope, 'monitoring-component');
    // The endpoint every service is scraped with (monitoring/scrape); values set the rest.
    const endpoint = JSON.parse(
      readFileSync(join(MONITORING, 'scrape', 'servicemonitor-endpoint.json'), 'utf8'),
    ) as ServiceMonitorSpecEndpoints;
    for (const component of [...SCRAPED, 'postgres-exporter']) {
      const monitor = new ServiceMonitor(this, `${component}-servicemonitor`, {
        metadata: monitoringMetadata('serviceMonitor', component),
        spec: {
          selector: { matchLabels: selector(component) },
          namespaceSelector: { matchNames: [text('{{ .Release.Namespace }}')] },
          endpoints: [
            {
              ...endpoint,
              interval: value('monitoring.serviceMonitor.interval'),
              scrapeTimeout: value('monitoring.serviceMonitor.scrapeTimeout'),
            },
          ],
        },
      });
      const relabelings = '.Values.monitoring.serviceMonitor.relabelings';
      blocks(monitor, {
        // search.serviceType may publish its Service outside: its metrics are then on a Service of
        // their own, whose series keep search's Service name (http-service.ts). (`concat` of empty
        // lists is nil, which toYaml would write as null.)
        '/spec/endpoints/0/relabelings':
          component === 'search'
            ? `(concat ${metricsServiceRelabelings(component)} ${relabelings} | default (list))`
            : relabelings,
      });
      const condition = '.Values.monitoring.serviceMonitor.enabled';
      const only: Record<string, string> = {
        controller: `and ${condition} .Values.controller.enabled`,
        'postgres-exporter': `and ${condition} ${POSTGRES_EXPORTER_ON}`,
      };
      onlyIf(monitor, only[component] ?? condition);
    }
    const rule = new PrometheusRule(this, 'prometheusrule', {
      metadata: monitoringMetadata('prometheusRule', 'monitoring', 'alerts'),
      spec: { groups: releaseGroups() },
    });
    onlyIf(rule, '.Values.monitoring.prometheusRule.enabled');
    const dashboards = join(MONITORING, 'dashboards');
    const dashboard = new k8s.KubeConfigMap(this, 'dashboard-configmap', {
      metadata: monitoringMetadata('dashboard', 'monitoring', 'dashboard'),
      data: Object.fromEntries(
        readdirSync(dashboards)
          .filter((f) => f.endsWith('.json'))
          .sort()
          .map((f) => [f, readFileSync(join(dashboards, f), 'utf8')]),
      ),
    });
    onlyIf(dashboard, '.Values.monitoring.dashboard.enabled');
  }
}
