/**
 * A long-running HTTP component: its ServiceAccount, settings ConfigMap, Deployment (probes on
 * /health/live and /health/ready of port `http`, /metrics on port `metrics` alone, restricted
 * security context, topology spread, a config checksum so a changed setting rolls the pods),
 * Service and PodDisruptionBudget. A Service published outside (`serviceType` NodePort or
 * LoadBalancer) carries the `http` port alone: its other listeners (metrics) stay on a ClusterIP
 * Service `<component>-metrics` of their own, which the ServiceMonitor scrapes.
 */

import * as k8s from 'cdk8s-plus-34/lib/imports/k8s.js';
import { Construct } from 'constructs';
import { type Connections, credentialVolumes, type OwnFiles } from '../credentials.js';
import {
  blocks,
  onlyIf,
  releaseName,
  releaseNameExpr,
  scalar,
  spread,
  spreadAt,
  text,
  value,
} from '../helm.js';
import { STARTUP_PROBE_TIMING } from '../probes.js';
import { Autoscaler } from './autoscaling.js';
import {
  ADMIN_PORT,
  extraEnvItems,
  GRACE_MARGIN_SECONDS,
  HTTP_PORT,
  image,
  labels,
  METRICS_PORT,
  metadata,
  podBlocks,
  podDefaults,
  selector,
  serviceAccountMetadata,
  tmpMount,
} from './common.js';

export interface HttpServiceProps {
  /** Component name: object names, labels, the key of its values. */
  component: string;
  /** Settings put in its ConfigMap (values are token strings or literals). */
  settings: Record<string, string>;
  /** Environment from Secrets or the downward API. */
  secretEnv?: k8s.EnvVar[];
  /**
   * The service's own bound on its shutdown after SIGTERM (its installShutdown timeout): the grace
   * period is the preStop delay plus this plus a margin, so the kubelet never cuts a drain short.
   */
  shutdownBoundSeconds: number;
  /** `.Values.<component>.autoscaling` exists: an HPA may own the replicas. */
  autoscaled?: boolean;
  /** Template condition under which something else owns the replicas (KEDA's HPA of the consumer). */
  replicasOwnedWhen?: string;
  /** Template text of the readiness probe's path (default /health/ready). */
  readinessPath?: string;
  /** The container listens on this port (named `http`). */
  containerPort?: number;
  /** An admin listener (`ADMIN_PORT`, port `admin`) apart from the probes' (the consumer). */
  admin?: boolean;
  /** The Service's type comes from `.Values.<component>.serviceType` (else ClusterIP). */
  serviceTypeFromValues?: boolean;
  /** Mounts a token for the Kubernetes API (the controller only). */
  apiAccess?: boolean;
  /** Kafka and PostgreSQL (as which role): their credential files are mounted. */
  connections?: Connections;
  /** Files of the component's own (search's login), mounted after the credentials. */
  files?: OwnFiles;
  /** Pod annotations besides the config checksum (checksums of those files, so a change rolls the pods). */
  podAnnotations?: Record<string, string>;
}

/** Helm condition: `.Values.<component>.serviceType` publishes the Service outside the cluster. */
const publishedOutside = (component: string) => `(ne .Values.${component}.serviceType "ClusterIP")`;

/**
 * Relabelings (a Helm list) of the ServiceMonitor endpoint of a component whose Service may be
 * published outside: the series of its `<component>-metrics` Service keep the component's Service
 * name as `service` and `job` (what the Prometheus Operator sets from the Service's name, and what
 * the alerts' scope and the dashboard's release variable select on). None while it is ClusterIP.
 */
export function metricsServiceRelabelings(component: string): string {
  const rename = (label: string) =>
    `(dict "action" "replace" "sourceLabels" (list "__meta_kubernetes_service_name") "regex" ${releaseNameExpr(`${component}-metrics`)} "targetLabel" "${label}" "replacement" ${releaseNameExpr(component)})`;
  return `(ternary (list ${rename('service')} ${rename('job')}) (list) ${publishedOutside(component)})`;
}

export class HttpService extends Construct {
  readonly serviceAccount: k8s.KubeServiceAccount;

  constructor(scope: Construct, props: HttpServiceProps) {
    super(scope, props.component);
    const { component } = props;
    const port = props.containerPort ?? HTTP_PORT;
    // The listeners besides `http`: each its own port, so a NetworkPolicy can open one alone.
    const listeners = [
      { name: 'metrics', port: METRICS_PORT, variable: 'METRICS_PORT' },
      ...(props.admin ? [{ name: 'admin', port: ADMIN_PORT, variable: 'ADMIN_PORT' }] : []),
    ];
    const own = `.Values.${component}`;
    this.serviceAccount = new k8s.KubeServiceAccount(this, `${component}-serviceaccount`, {
      metadata: serviceAccountMetadata(component),
      automountServiceAccountToken: props.apiAccess ?? false,
    });
    new k8s.KubeConfigMap(this, `${component}-configmap`, {
      metadata: metadata(component),
      data: {
        LOG_LEVEL: value(`${component}.logLevel`),
        SERVICE_VERSION: text('{{ .Chart.AppVersion }}'),
        OTEL_TRACES_EXPORTER: text('{{ if .Values.tracing.otlpEndpoint }}otlp{{ else }}none{{ end }}'),
        OTEL_EXPORTER_OTLP_ENDPOINT: value('tracing.otlpEndpoint'),
        // Set with the endpoint: without it the SDK would speak its own default, http/protobuf.
        OTEL_EXPORTER_OTLP_PROTOCOL: value('tracing.otlpProtocol'),
        ...props.settings,
        ...Object.fromEntries(listeners.map((l) => [l.variable, String(l.port)])),
        // extraEnv as a map lands here; as a list, in the container's env (below).
        [spread(`(ternary ${own}.extraEnv (dict) (kindIs "map" ${own}.extraEnv))`)]: '',
      },
    });
    const defaults = podDefaults(component, props.apiAccess);
    const deployment = new k8s.KubeDeployment(this, `${component}-deployment`, {
      metadata: metadata(component),
      spec: {
        ...(props.autoscaled || props.replicasOwnedWhen
          ? {}
          : { replicas: value<number>(`${component}.replicas`) }),
        revisionHistoryLimit: 3,
        selector: { matchLabels: selector(component) },
        strategy: {
          type: 'RollingUpdate',
          // A new pod is Ready before an old one goes: capacity never drops during an upgrade.
          rollingUpdate: {
            maxUnavailable: k8s.IntOrString.fromNumber(0),
            maxSurge: k8s.IntOrString.fromNumber(1),
          },
        },
        template: {
          metadata: {
            labels: labels(component),
            annotations: {
              'checksum/config': scalar(
                `{{ include (print $.Template.BasePath "/${component}-configmap.yaml") . | sha256sum | toJson }}`,
              ),
              ...props.podAnnotations,
              [spread('.Values.podAnnotations')]: '',
            },
          },
          spec: {
            ...defaults,
            terminationGracePeriodSeconds: scalar<number>(
              `{{ add ${own}.preStopDelaySeconds ${props.shutdownBoundSeconds + GRACE_MARGIN_SECONDS} }}`,
            ),
            containers: [
              {
                name: component,
                ...image(component),
                ports: [
                  { name: 'http', containerPort: port },
                  ...listeners.map((l) => ({ name: l.name, containerPort: l.port })),
                ],
                envFrom: [{ configMapRef: { name: releaseName(component) } }],
                env: props.secretEnv ?? [],
                // The Service keeps the pod while the Endpoints controller and kube-proxy (or an
                // ingress controller) learn it is going; only then does SIGTERM close the listener.
                lifecycle: {
                  preStop: { sleep: { seconds: value<number>(`${component}.preStopDelaySeconds`) } },
                },
                readinessProbe: {
                  httpGet: {
                    path: props.readinessPath ?? '/health/ready',
                    port: k8s.IntOrString.fromString('http'),
                  },
                  periodSeconds: 5,
                  timeoutSeconds: 3,
                  failureThreshold: 2,
                },
                // Liveness and readiness start once the listener has answered (STARTUP_PROBE_TIMING).
                startupProbe: {
                  httpGet: { path: '/health/live', port: k8s.IntOrString.fromString('http') },
                  ...STARTUP_PROBE_TIMING,
                },
                livenessProbe: {
                  httpGet: { path: '/health/live', port: k8s.IntOrString.fromString('http') },
                  periodSeconds: 10,
                  timeoutSeconds: 3,
                  failureThreshold: 3,
                },
                volumeMounts: [tmpMount],
              },
            ],
          },
        },
      },
    });
    podBlocks(deployment, '/spec/template/spec', `${component}.resources`);
    credentialVolumes(deployment, '/spec/template/spec', props.connections ?? {}, component, props.files);
    extraEnvItems(deployment, '/spec/template/spec', component);
    blocks(deployment, {
      '/spec/template/spec/topologySpreadConstraints': `(${own}.topologySpreadConstraints | default (list (dict "maxSkew" 1 "topologyKey" "kubernetes.io/hostname" "whenUnsatisfiable" "ScheduleAnyway" "labelSelector" (dict "matchLabels" (dict "app.kubernetes.io/name" "${component}" "app.kubernetes.io/instance" .Release.Name)))))`,
    });
    if (props.autoscaled) {
      spreadAt(
        deployment,
        '/spec',
        `(ternary (dict) (dict "replicas" ${own}.replicas) ${own}.autoscaling.enabled)`,
      );
      new Autoscaler(this, component);
    }
    if (props.replicasOwnedWhen) {
      spreadAt(
        deployment,
        '/spec',
        `(ternary (dict) (dict "replicas" ${own}.replicas) ${props.replicasOwnedWhen})`,
      );
    }
    const listenerPorts = listeners.map((l) => ({
      name: l.name,
      port: l.port,
      targetPort: k8s.IntOrString.fromString(l.name),
    }));
    const http = { name: 'http', port: HTTP_PORT, targetPort: k8s.IntOrString.fromString('http') };
    const service = new k8s.KubeService(this, `${component}-service`, {
      metadata: metadata(component),
      spec: {
        ...(props.serviceTypeFromValues ? { type: value(`${component}.serviceType`) } : {}),
        selector: selector(component),
        ports: props.serviceTypeFromValues ? [http] : [http, ...listenerPorts],
      },
    });
    if (props.serviceTypeFromValues) {
      // Published outside, the Service opens `http` alone on every node or load balancer; metrics
      // (no login, no Host check) stay inside, on a ClusterIP Service of their own.
      const items = listeners.map(
        (l) => `(dict "name" "${l.name}" "port" ${l.port} "targetPort" "${l.name}")`,
      );
      spreadAt(
        service,
        '/spec/ports',
        `(ternary (list) (list ${items.join(' ')}) ${publishedOutside(component)})`,
      );
      const metrics = new k8s.KubeService(this, `${component}-metrics-service`, {
        metadata: metadata(component, `${component}-metrics`),
        spec: { selector: selector(component), ports: listenerPorts },
      });
      onlyIf(metrics, publishedOutside(component));
    }
    new k8s.KubePodDisruptionBudget(this, `${component}-pdb`, {
      metadata: metadata(component),
      spec: { maxUnavailable: k8s.IntOrString.fromNumber(1), selector: { matchLabels: selector(component) } },
    });
  }
}
