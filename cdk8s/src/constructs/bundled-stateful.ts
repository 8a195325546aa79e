/**
 * A single-replica StatefulSet of the evaluation profile (bundled.ts) with its PersistentVolumeClaim
 * (kept by `helm uninstall`: the StatefulSet's default claim retention), its Service, and a
 * NetworkPolicy that admits only the release's pods that are its clients (and the operator's
 * `<valuesKey>.allowFrom`), and lets it connect to DNS and itself only. Non-root (the image's user), read-only root
 * filesystem; writable folders are emptyDirs. Scheduling, pull secrets, priority class and security
 * contexts come from values as for every pod (podBlocks).
 */

import * as k8s from 'cdk8s-plus-34/lib/imports/k8s.js';
import { Construct } from 'constructs';
import { blocks, onlyIf, releaseName, scalar, spreadAt, text } from '../helm.js';
import { image, labels, metadata, podBlocks, selector } from './common.js';
import { DNS_EGRESS } from './network-policies.js';

export interface BundledStatefulProps {
  /** Component name (`kafka`, `postgresql`): object names and labels. */
  component: string;
  /** Its values (`kafka.bundled`). */
  valuesKey: string;
  /** Helm condition that renders it. */
  condition: string;
  /** The release's components (`app.kubernetes.io/name`) its NetworkPolicy admits. */
  clients: string[];
  /** Components admitted too while a Helm condition holds. */
  clientsWhen?: Record<string, string>;
  /** The image's user (and group). */
  uid: number;
  port: number;
  dataPath: string;
  /** Writable emptyDir folders besides the data. */
  scratch: string[];
  env: k8s.EnvVar[];
  readinessProbe: k8s.Probe;
  livenessProbe: k8s.Probe;
  /** A command run once the container has started (its Ready waits for it). */
  postStart?: string[];
  /** Extra volumes and mounts (init scripts). */
  volumes?: k8s.Volume[];
  volumeMounts?: k8s.VolumeMount[];
  terminationGracePeriodSeconds: number;
}

export class BundledStateful extends Construct {
  constructor(scope: Construct, props: BundledStatefulProps) {
    super(scope, `${props.component}-bundled`);
    const { component, valuesKey, uid, port } = props;
    const scratch = props.scratch.map((path, i) => ({ name: `scratch-${i}`, path }));
    const set = new k8s.KubeStatefulSet(this, `${component}-statefulset`, {
      metadata: metadata(component),
      spec: {
        replicas: 1,
        serviceName: releaseName(component),
        selector: { matchLabels: selector(component) },
        template: {
          metadata: { labels: labels(component) },
          spec: {
            automountServiceAccountToken: false,
            enableServiceLinks: false,
            terminationGracePeriodSeconds: props.terminationGracePeriodSeconds,
            volumes: [
              ...scratch.map(({ name }) => ({
                name,
                emptyDir: { sizeLimit: k8s.Quantity.fromString('64Mi') },
              })),
              ...(props.volumes ?? []),
            ],
            containers: [
              {
                name: component,
                ...image(valuesKey),
                ports: [{ name: component, containerPort: port }],
                env: props.env,
                readinessProbe: props.readinessProbe,
                livenessProbe: props.livenessProbe,
                ...(props.postStart
                  ? { lifecycle: { postStart: { exec: { command: props.postStart } } } }
                  : {}),
                volumeMounts: [
                  { name: 'data', mountPath: props.dataPath },
                  ...scratch.map(({ name, path }) => ({ name, mountPath: path })),
                  ...(props.volumeMounts ?? []),
                ],
              },
            ],
          },
        },
        volumeClaimTemplates: [
          {
            // The selector labels alone: Kubernetes refuses any change to volumeClaimTemplates, so
            // a label that follows the chart's version or commonLabels would fail `helm upgrade`.
            metadata: { name: 'data', labels: selector(component) },
            spec: {
              accessModes: ['ReadWriteOnce'],
              storageClassName: scalar(
                `{{ .Values.${valuesKey}.persistence.storageClass | default nil | toJson }}`,
              ),
              resources: {
                requests: {
                  storage: k8s.Quantity.fromString(
                    scalar(`{{ .Values.${valuesKey}.persistence.size | toJson }}`),
                  ),
                },
              },
            },
          },
        ],
      },
    });
    podBlocks(set, '/spec/template/spec', `${valuesKey}.resources`);
    // The image's own user, whatever podSecurityContext says (its files belong to it); the rest
    // (seccompProfile, ...) as every pod has it.
    blocks(set, {
      '/spec/template/spec/securityContext': `(merge (dict "runAsNonRoot" true "runAsUser" ${uid} "runAsGroup" ${uid} "fsGroup" ${uid}) .Values.podSecurityContext)`,
    });
    new k8s.KubeService(this, `${component}-service`, {
      metadata: metadata(component),
      spec: {
        selector: selector(component),
        ports: [{ name: component, port, targetPort: k8s.IntOrString.fromString(component) }],
      },
    });
    const ownPort = [{ protocol: 'TCP', port: k8s.IntOrString.fromNumber(port) }];
    const policy = new k8s.KubeNetworkPolicy(this, `${component}-networkpolicy`, {
      metadata: metadata(component),
      spec: {
        podSelector: { matchLabels: selector(component) },
        policyTypes: ['Ingress', 'Egress'],
        ingress: [
          {
            from: [
              {
                podSelector: {
                  matchLabels: { 'app.kubernetes.io/instance': text('{{ .Release.Name }}') },
                  matchExpressions: [
                    { key: 'app.kubernetes.io/name', operator: 'In', values: props.clients },
                  ],
                },
              },
            ],
            ports: ownPort,
          },
        ],
        // Nothing outside (no cloud metadata): DNS, and itself through its Service (a broker
        // reaches its advertised address).
        egress: [DNS_EGRESS, { to: [{ podSelector: { matchLabels: selector(component) } }], ports: ownPort }],
      },
    });
    for (const [client, condition] of Object.entries(props.clientsWhen ?? {}))
      spreadAt(
        policy,
        '/spec/ingress/0/from/0/podSelector/matchExpressions/0/values',
        `(ternary (list "${client}") (list) ${condition})`,
      );
    spreadAt(policy, '/spec/ingress/0/from', `.Values.${valuesKey}.allowFrom`);
    onlyIf(this, props.condition);
    onlyIf(policy, `and ${props.condition} .Values.networkPolicies.enabled`);
  }
}
