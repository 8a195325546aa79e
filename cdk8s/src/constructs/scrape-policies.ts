/**
 * NetworkPolicies for monitoring. Policies add up, so one more policy admits Prometheus (the pods
 * `monitoring.scrapeFrom.podLabels` selects in the namespace `monitoring.scrapeFrom.namespace`) to
 * the `metrics` port of every scraped component and to nothing else: that port serves /metrics
 * alone, never an API, the UI or the admin API. It exists when NetworkPolicies and the
 * ServiceMonitors are both on, and then the namespace is required (no default admits every
 * namespace, where anyone may label a pod `prometheus`). postgres_exporter gets the policy every
 * component has: no other ingress, egress to DNS and `networkPolicies.egressTo` (PostgreSQL), and
 * to the bundled PostgreSQL's pods with it.
 */

import * as k8s from 'cdk8s-plus-34/lib/imports/k8s.js';
import { Construct } from 'constructs';
import { bundledEgress, POSTGRES_EXPORTER_ON } from '../bundled.js';
import { blocks, onlyIf, scalar, spreadAt, text } from '../helm.js';
import { metadata } from './common.js';
import { SCRAPED } from './monitoring.js';

const instance = { 'app.kubernetes.io/instance': text('{{ .Release.Name }}') };
const metricsPort = [{ protocol: 'TCP', port: k8s.IntOrString.fromString('metrics') }];

/** The message of a render without the namespace Prometheus runs in. */
export const SCRAPE_NAMESPACE_REQUIRED =
  'monitoring.scrapeFrom.namespace is required with monitoring.serviceMonitor.enabled and networkPolicies.enabled: the namespace Prometheus runs in, the only one admitted to the metrics ports';

export class ScrapePolicies extends Construct {
  constructor(scope: Construct) {
    super(scope, 'scrape-policies');
    const scrape = new k8s.KubeNetworkPolicy(this, 'prometheus-scrape-networkpolicy', {
      metadata: metadata('monitoring', 'prometheus-scrape'),
      spec: {
        podSelector: {
          matchLabels: instance,
          matchExpressions: [
            { key: 'app.kubernetes.io/name', operator: 'In', values: [...SCRAPED, 'postgres-exporter'] },
          ],
        },
        policyTypes: ['Ingress'],
        ingress: [
          {
            from: [
              {
                namespaceSelector: {
                  matchLabels: {
                    'kubernetes.io/metadata.name': scalar(
                      `{{ required ${JSON.stringify(SCRAPE_NAMESPACE_REQUIRED)} .Values.monitoring.scrapeFrom.namespace | toJson }}`,
                    ),
                  },
                },
                podSelector: {},
              },
            ],
            ports: metricsPort,
          },
        ],
      },
    });
    blocks(scrape, {
      '/spec/ingress/0/from/0/podSelector/matchLabels': '.Values.monitoring.scrapeFrom.podLabels',
    });
    onlyIf(scrape, 'and .Values.networkPolicies.enabled .Values.monitoring.serviceMonitor.enabled');

    const exporter = new k8s.KubeNetworkPolicy(this, 'postgres-exporter-networkpolicy', {
      metadata: metadata('postgres-exporter'),
      spec: {
        podSelector: { matchLabels: { 'app.kubernetes.io/name': 'postgres-exporter', ...instance } },
        policyTypes: ['Ingress', 'Egress'],
        ingress: [],
        egress: [
          {
            ports: [
              { protocol: 'UDP', port: k8s.IntOrString.fromNumber(53) },
              { protocol: 'TCP', port: k8s.IntOrString.fromNumber(53) },
            ],
          },
          { to: [] },
        ],
      },
    });
    blocks(exporter, { '/spec/egress/1/to': '.Values.networkPolicies.egressTo' });
    spreadAt(exporter, '/spec/egress', bundledEgress('postgres-exporter'));
    onlyIf(exporter, `and .Values.networkPolicies.enabled ${POSTGRES_EXPORTER_ON}`);
  }
}
