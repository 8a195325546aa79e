/**
 * A ServiceMonitor turned into the Prometheus scrape job the Prometheus Operator generates for it
 * (role `endpoints`, the operator's target labels, then the endpoint's own relabelings), so a
 * Prometheus running beside the cluster scrapes the pods exactly as the operator's would: the
 * Operator itself is not available here (see monitoring/README.md, "On the cluster"). Discovery
 * is `kubernetes-sd.ts` over `http_sd_configs`: Debian's Prometheus has no Kubernetes SD.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { repoRoot } from '@event-observatory/devstack';

/** The fields of a ServiceMonitor endpoint this translation understands (monitoring/scrape). */
export interface ServiceMonitorEndpoint {
  port: string;
  path: string;
  scheme: string;
  interval: string;
  scrapeTimeout: string;
  honorLabels: boolean;
  honorTimestamps: boolean;
  relabelings: RelabelConfig[];
  metricRelabelings: RelabelConfig[];
}

interface RelabelConfig {
  action?: string;
  sourceLabels?: string[];
  separator?: string;
  regex?: string;
  replacement?: string;
  targetLabel?: string;
}

/** The platform's ServiceMonitor endpoint, the single source the chart uses too. */
export function platformEndpoint(): ServiceMonitorEndpoint {
  const file = join(repoRoot(), 'monitoring', 'scrape', 'servicemonitor-endpoint.json');
  return JSON.parse(readFileSync(file, 'utf8')) as ServiceMonitorEndpoint;
}

/** `app.kubernetes.io/name` -> `app_kubernetes_io_name`, as Prometheus names meta labels. */
const metaName = (label: string) => label.replace(/[^a-zA-Z0-9_]/g, '_');

/** The operator's camelCase relabel fields in Prometheus' snake_case. */
function relabel(r: RelabelConfig): Record<string, unknown> {
  return Object.fromEntries(
    Object.entries({
      action: r.action?.toLowerCase(),
      source_labels: r.sourceLabels,
      separator: r.separator,
      regex: r.regex,
      replacement: r.replacement,
      target_label: r.targetLabel,
    }).filter(([, v]) => v !== undefined),
  );
}

/**
 * The scrape job of ServiceMonitor `name` in `namespace` selecting Services by `matchLabels`,
 * discovering through the Kubernetes SD endpoint at `sdUrl`; `interval` overrides the endpoint's
 * (tests scrape faster).
 */
export function serviceMonitorScrapeConfig(opts: {
  name: string;
  namespace: string;
  matchLabels: Record<string, string>;
  endpoint: ServiceMonitorEndpoint;
  sdUrl: string;
  interval?: string;
}): Record<string, unknown> {
  const { endpoint: ep } = opts;
  const interval = opts.interval ?? ep.interval;
  return {
    job_name: `serviceMonitor/${opts.namespace}/${opts.name}/0`,
    honor_labels: ep.honorLabels,
    honor_timestamps: ep.honorTimestamps,
    scrape_interval: interval,
    scrape_timeout: opts.interval ? interval : ep.scrapeTimeout,
    metrics_path: ep.path,
    scheme: ep.scheme,
    http_sd_configs: [{ url: opts.sdUrl, refresh_interval: interval }],
    relabel_configs: [
      { source_labels: ['job'], target_label: '__tmp_prometheus_job_name' },
      ...Object.entries(opts.matchLabels).map(([label, value]) => ({
        action: 'keep',
        source_labels: [
          `__meta_kubernetes_service_label_${metaName(label)}`,
          `__meta_kubernetes_service_labelpresent_${metaName(label)}`,
        ],
        regex: `(${value});true`,
      })),
      { action: 'keep', source_labels: ['__meta_kubernetes_endpoint_port_name'], regex: ep.port },
      {
        source_labels: [
          '__meta_kubernetes_endpoint_address_target_kind',
          '__meta_kubernetes_endpoint_address_target_name',
        ],
        separator: ';',
        regex: 'Pod;(.*)',
        replacement: '$1',
        target_label: 'pod',
      },
      { source_labels: ['__meta_kubernetes_namespace'], target_label: 'namespace' },
      { source_labels: ['__meta_kubernetes_service_name'], target_label: 'service' },
      { source_labels: ['__meta_kubernetes_pod_name'], target_label: 'pod' },
      { source_labels: ['__meta_kubernetes_pod_container_name'], target_label: 'container' },
      { action: 'drop', source_labels: ['__meta_kubernetes_pod_phase'], regex: '(Failed|Succeeded)' },
      { source_labels: ['__meta_kubernetes_service_name'], target_label: 'job', replacement: '$1' },
      { target_label: 'endpoint', replacement: ep.port },
      ...ep.relabelings.map(relabel),
    ],
    metric_relabel_configs: ep.metricRelabelings.map(relabel),
  };
}
