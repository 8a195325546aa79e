/**
 * The optional monitoring objects: a ServiceMonitor per service, the PrometheusRule made from the
 * rule files of monitoring/alerts (the single source of the alerts), and the Grafana dashboard of
 * monitoring/dashboards as a ConfigMap the Grafana sidecar picks up (label grafana_dashboard).
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
import { ServiceMonitor } from '../../imports/servicemonitors-monitoring.coreos.com.js';
import { onlyIf, spread, value } from '../helm.js';
import { REPO_ROOT } from '../paths.js';
import { labels, metadata, selector } from './common.js';

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

const monitoringMetadata = (component: string, name = component) => {
  const base = metadata(component, name);
  return { ...base, labels: { ...base.labels, [spread('.Values.monitoring.labels')]: '' } };
};

export class Monitoring extends Construct {
  constructor(scope: Construct) {
    super(scope, 'monitoring-component');
    for (const component of SCRAPED) {
      const monitor = new ServiceMonitor(this, `${component}-servicemonitor`, {
        metadata: monitoringMetadata(component),
        spec: {
          selector: { matchLabels: selector(component) },
          endpoints: [{ port: 'http', path: '/metrics', interval: value('monitoring.interval') }],
        },
      });
      const condition = '.Values.monitoring.serviceMonitor';
      onlyIf(monitor, component === 'controller' ? `and ${condition} .Values.controller.enabled` : condition);
    }
    const groups = alertGroups().map((group) => ({
      ...group,
      rules: group.rules.map((r) => ({ ...r, expr: PrometheusRuleSpecGroupsRulesExpr.fromString(r.expr) })),
    }));
    const rule = new PrometheusRule(this, 'prometheusrule', {
      metadata: monitoringMetadata('monitoring', 'alerts'),
      spec: { groups },
    });
    onlyIf(rule, '.Values.monitoring.prometheusRule');
    const dashboards = join(MONITORING, 'dashboards');
    const dashboard = new k8s.KubeConfigMap(this, 'dashboard-configmap', {
      metadata: {
        ...monitoringMetadata('monitoring', 'dashboard'),
        labels: {
          ...labels('monitoring'),
          grafana_dashboard: '1',
          [spread('.Values.monitoring.labels')]: '',
        },
      },
      data: Object.fromEntries(
        readdirSync(dashboards)
          .filter((f) => f.endsWith('.json'))
          .sort()
          .map((f) => [f, readFileSync(join(dashboards, f), 'utf8')]),
      ),
    });
    onlyIf(dashboard, '.Values.monitoring.dashboard');
  }
}
