/**
 * The namespaces the controller watches besides the release's own (`controller.watchNamespaces`):
 * in each, a Role with the controller's Pipeline and Secret rules and one for the pre-delete hook
 * (list, patch and delete Pipelines), each bound to its ServiceAccount in the release's namespace.
 * Least privilege: nothing cluster-wide, only the listed namespaces. The names carry the release's
 * namespace and name, so two releases watching one namespace never collide. With
 * `watchAllNamespaces` the ClusterRoles of controller.ts and controller-pre-delete.ts hold the
 * Pipeline rules, and each listed namespace keeps only the Secret rule: Secrets are never readable
 * cluster-wide.
 */
import * as k8s from 'cdk8s-plus-34/lib/imports/k8s.js';
import { Construct } from 'constructs';
import { forEach, onlyIf, releaseName, scalar, text } from '../helm.js';
import { labels } from './common.js';

/** CONTROLLER_NAME: the stamp of the release's Pipelines (annotation observatory.dev/controller). */
export const controllerName = () => text('{{ .Release.Namespace }}/{{ .Release.Name }}');

/** CONTROLLER_WATCH_NAMESPACE: the release's namespace and the listed ones; empty for all. */
export const watchedNamespaces = () =>
  scalar(
    '{{ ternary "" (prepend .Values.controller.watchNamespaces .Release.Namespace | uniq | join ",") .Values.controller.watchAllNamespaces | toJson }}',
  );

/** The Pipeline rules of the controller README's RBAC table (the Lease rule stays at home). */
export const PIPELINE_RULES: k8s.PolicyRule[] = [
  { apiGroups: ['observatory.dev'], resources: ['pipelines'], verbs: ['list', 'watch', 'patch'] },
  { apiGroups: ['observatory.dev'], resources: ['pipelines/status'], verbs: ['patch'] },
  { apiGroups: [''], resources: ['events'], verbs: ['create'] },
];
/**
 * The Secrets a Pipeline's spec.kafka names (used only when labelled for it): in the release's
 * namespace and each listed one, never cluster-wide, not even with watchAllNamespaces.
 */
export const SECRET_RULES: k8s.PolicyRule[] = [{ apiGroups: [''], resources: ['secrets'], verbs: ['get'] }];
// patch: the force-delete annotation that keeps the topics (without controller.deleteTopicsOnUninstall).
export const PRE_DELETE_RULES: k8s.PolicyRule[] = [
  { apiGroups: ['observatory.dev'], resources: ['pipelines'], verbs: ['list', 'delete', 'patch'] },
];

export class ControllerNamespaces extends Construct {
  constructor(scope: Construct) {
    super(scope, 'controller-namespaces-component');
    const preDeleteHook = {
      'helm.sh/hook': 'pre-delete',
      'helm.sh/hook-weight': '-10',
      'helm.sh/hook-delete-policy': 'before-hook-creation,hook-succeeded',
    };
    const grant = (id: string, component: string, rules: k8s.PolicyRule[], annotations = {}) => {
      const name = text(`{{ .Release.Namespace }}-{{ .Release.Name }}-${component}`);
      const meta = { name, namespace: text('{{ $namespace }}'), labels: labels(component), annotations };
      const role = new k8s.KubeRole(this, `${id}-role`, { metadata: meta, rules });
      const binding = new k8s.KubeRoleBinding(this, `${id}-rolebinding`, {
        metadata: meta,
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name },
        subjects: [
          {
            kind: 'ServiceAccount',
            name: releaseName(component),
            namespace: text('{{ .Release.Namespace }}'),
          },
        ],
      });
      return [role, binding];
    };
    const controller = grant('controller-watched', 'controller', [...PIPELINE_RULES, ...SECRET_RULES]);
    // With watchAllNamespaces the ClusterRole has the Pipeline rules; the listed namespaces keep
    // the Secret rule (same name: the two never render together).
    const credentials = grant('controller-credentials', 'controller', SECRET_RULES);
    const hook = grant(
      'controller-pre-delete-watched',
      'controller-pre-delete',
      PRE_DELETE_RULES,
      preDeleteHook,
    );
    const others = '(without (.Values.controller.watchNamespaces | uniq) .Release.Namespace)';
    for (const object of [...controller, ...credentials, ...hook]) forEach(object, '$namespace', others);
    const watchesList = 'and .Values.controller.enabled (not .Values.controller.watchAllNamespaces)';
    for (const object of controller) onlyIf(object, watchesList);
    for (const object of credentials)
      onlyIf(object, 'and .Values.controller.enabled .Values.controller.watchAllNamespaces');
    for (const object of hook) onlyIf(object, `${watchesList} .Values.controller.preDeleteHook`);
  }
}
