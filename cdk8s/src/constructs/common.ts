/**
 * What every component's objects share: names and labels per release, the image reference from
 * values, the restricted security contexts, and the scheduling values every pod takes.
 */

import type { ApiObject } from 'cdk8s';
import * as k8s from 'cdk8s-plus-34/lib/imports/k8s.js';
import { secretName } from '../bundled.js';
import { blocks, releaseName, scalar, spread, spreadAt, text, value } from '../helm.js';
import { imagePullPolicy, imageReference } from '../images.js';

export const HTTP_PORT = 8080;
/** Every service's metrics listener (`METRICS_PORT`), container and Service port `metrics`. */
export const METRICS_PORT = 9464;
/** The consumer's admin listener (`ADMIN_PORT`), container and Service port `admin`. */
export const ADMIN_PORT = 8081;
/** Seconds of the grace period beyond the preStop delay and a service's own shutdown bound. */
export const GRACE_MARGIN_SECONDS = 5;

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
    'app.kubernetes.io/version': text('{{ .Chart.AppVersion }}'),
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

/** A component's ServiceAccount metadata, with `.Values.<component>.serviceAccount.annotations`. */
export function serviceAccountMetadata(component: string) {
  const base = metadata(component);
  return {
    ...base,
    annotations: { ...base.annotations, [spread(`.Values.${component}.serviceAccount.annotations`)]: '' },
  };
}

/** `.Values.<component>.extraEnv` given as a list: its items follow the first container's env. */
export function extraEnvItems(object: ApiObject, pod: string, component: string): void {
  const extra = `.Values.${component}.extraEnv`;
  spreadAt(object, `${pod}/containers/0/env`, `(ternary ${extra} (list) (kindIs "slice" ${extra}))`);
}

/** The container's image and pull policy from `.Values.<valuesKey>.image` (images.ts: the registry chain). */
export function image(valuesKey: string) {
  return {
    image: scalar(`{{ ${imageReference(valuesKey)} | toJson }}`),
    imagePullPolicy: scalar(`{{ ${imagePullPolicy(valuesKey)} | toJson }}`),
  };
}

/** The pod-level settings every pod of the chart has (podBlocks adds the values-given ones). */
export function podDefaults(serviceAccount: string, apiAccess = false): k8s.PodSpec {
  return {
    serviceAccountName: releaseName(serviceAccount),
    automountServiceAccountToken: apiAccess,
    // The root filesystem is read-only; Node and its libraries may still want a scratch folder.
    volumes: [{ name: 'tmp', emptyDir: { sizeLimit: k8s.Quantity.fromString('64Mi') } }],
    containers: [],
  };
}

/**
 * The pod's values-given parts, at `pod` (the pod spec's JSON pointer): scheduling, pull secrets
 * (`global.imagePullSecrets` items may be names or `{name}`), the security contexts, and the first
 * container's resources from `.Values.<resources>`.
 */
export function podBlocks(object: ApiObject, pod: string, resources: string): void {
  blocks(object, {
    [`${pod}/nodeSelector`]: '.Values.nodeSelector',
    [`${pod}/tolerations`]: '.Values.tolerations',
    [`${pod}/affinity`]: '.Values.affinity',
    [`${pod}/imagePullSecrets`]: '(include "observatory.pullSecrets" . | fromYamlArray)',
    [`${pod}/securityContext`]: '.Values.podSecurityContext',
    [`${pod}/containers/0/securityContext`]: '.Values.containerSecurityContext',
    [`${pod}/containers/0/resources`]: `.Values.${resources}`,
  });
  spreadAt(
    object,
    pod,
    '(ternary (dict "priorityClassName" .Values.priorityClassName) (dict) (ne .Values.priorityClassName ""))',
  );
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
