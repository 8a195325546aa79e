/**
 * What every component's objects share: names and labels per release, the image reference from
 * values, the restricted security contexts, and the scheduling values every pod takes.
 */

import type { ApiObject } from 'cdk8s';
import * as k8s from 'cdk8s-plus-34/lib/imports/k8s.js';
import { secretName } from '../bundled.js';
import { blocks, releaseName, scalar, spread, text, value } from '../helm.js';

export const HTTP_PORT = 8080;
const UID = 1000; // the `node` user of the images (Dockerfile: USER 1000:1000)

/** The labels that select a component's pods in one release. */
export function selector(component: string): Record<string, string> {
  return {
    'app.kubernetes.io/name': component,
    'app.kubernetes.io/instance': text('{{ .Release.Name }}'),
  };
}

export function labels(component: string): Record<string, string> {
  return {
    ...selector(component),
    'app.kubernetes.io/part-of': 'event-observatory',
    'app.kubernetes.io/managed-by': text('{{ .Release.Service }}'),
    'helm.sh/chart': text('{{ .Chart.Name }}-{{ .Chart.Version }}'),
    [spread('.Values.commonLabels')]: '',
  };
}

export function metadata(component: string, name = component, extraAnnotations: Record<string, string> = {}) {
  return {
    name: releaseName(name),
    labels: labels(component),
    annotations: { ...extraAnnotations, [spread('.Values.commonAnnotations')]: '' },
  };
}

/** `<registry>/<repository>:<tag>`, each part from the component's values or the global ones. */
export function image(valuesKey: string) {
  const own = `.Values.${valuesKey}.image`;
  return {
    image: text(
      `{{ ${own}.registry | default .Values.image.registry }}/{{ ${own}.repository }}:{{ ${own}.tag | default .Values.image.tag | default .Chart.AppVersion }}`,
    ),
    imagePullPolicy: scalar(`{{ ${own}.pullPolicy | default .Values.image.pullPolicy | toJson }}`),
  };
}

export const containerSecurityContext: k8s.SecurityContext = {
  allowPrivilegeEscalation: false,
  readOnlyRootFilesystem: true,
  runAsNonRoot: true,
  capabilities: { drop: ['ALL'] },
};

/** The pod-level settings every pod of the chart has: non-root, seccomp, scheduling values, /tmp. */
export function podDefaults(serviceAccount: string, apiAccess = false): k8s.PodSpec {
  return {
    serviceAccountName: releaseName(serviceAccount),
    automountServiceAccountToken: apiAccess,
    securityContext: {
      runAsNonRoot: true,
      runAsUser: UID,
      runAsGroup: UID,
      fsGroup: UID,
      seccompProfile: { type: 'RuntimeDefault' },
    },
    // The root filesystem is read-only; Node and its libraries may still want a scratch folder.
    volumes: [{ name: 'tmp', emptyDir: { sizeLimit: k8s.Quantity.fromString('64Mi') } }],
    containers: [],
  };
}

/**
 * The pod's values-given parts, at `pod` (the pod spec's JSON pointer): scheduling, pull secrets,
 * and the first container's resources from `.Values.<resources>`.
 */
export function podBlocks(object: ApiObject, pod: string, resources: string): void {
  blocks(object, {
    [`${pod}/nodeSelector`]: '.Values.nodeSelector',
    [`${pod}/tolerations`]: '.Values.tolerations',
    [`${pod}/imagePullSecrets`]: '.Values.image.pullSecrets',
    [`${pod}/containers/0/resources`]: `.Values.${resources}`,
  });
}

export const tmpMount: k8s.VolumeMount = { name: 'tmp', mountPath: '/tmp' };

/** Environment from the Secret key named in values (`secrets.<which>`). */
export function secretEnv(name: string, which: 'store' | 'application'): k8s.EnvVar {
  return {
    name,
    valueFrom: {
      secretKeyRef: {
        name: scalar(`{{ ${secretName(which)} | toJson }}`),
        key: value(`secrets.${which}.key`),
      },
    },
  };
}
