/**
 * The controller's pre-delete hook: on `helm uninstall`, before anything of the release is
 * removed, a Job deletes the release's Pipelines of deletionPolicy Delete (stamped with its
 * CONTROLLER_NAME; another release's in the same namespaces are left alone) and waits (at most
 * `controller.deletionTimeout`) while the still running controller finalizes them, so none is left
 * holding a finalizer no controller will remove. Their topics go only with
 * `controller.deleteTopicsOnUninstall`; otherwise each is annotated force-delete first and its
 * topics stay. It runs the controller image's `pre-delete.js` under a ServiceAccount of its own
 * that may only list, patch and delete Pipelines (a Role, or a ClusterRole when the controller
 * watches every namespace); the hook's objects are deleted when it succeeds.
 */
import * as k8s from 'cdk8s-plus-34/lib/imports/k8s.js';
import { Construct } from 'constructs';
import { onlyIf, releaseName, text, value, valueText } from '../helm.js';
import { image, labels, metadata, podBlocks, podDefaults, tmpMount } from './common.js';
import { controllerName, PRE_DELETE_RULES, watchedNamespaces } from './controller-namespaces.js';

const hook = (weight: string) => ({
  'helm.sh/hook': 'pre-delete',
  'helm.sh/hook-weight': weight,
  'helm.sh/hook-delete-policy': 'before-hook-creation,hook-succeeded',
});

export class ControllerPreDelete extends Construct {
  constructor(scope: Construct) {
    super(scope, 'controller-pre-delete-component');
    const name = 'controller-pre-delete';
    const account = new k8s.KubeServiceAccount(this, `${name}-serviceaccount`, {
      metadata: metadata(name, name, hook('-10')),
      automountServiceAccountToken: true,
    });
    const rules = PRE_DELETE_RULES;
    const subject = {
      kind: 'ServiceAccount',
      name: releaseName(name),
      namespace: text('{{ .Release.Namespace }}'),
    };
    const role = new k8s.KubeRole(this, `${name}-role`, {
      metadata: metadata(name, name, hook('-10')),
      rules,
    });
    const binding = new k8s.KubeRoleBinding(this, `${name}-rolebinding`, {
      metadata: metadata(name, name, hook('-10')),
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: releaseName(name) },
      subjects: [subject],
    });
    const clusterName = text('{{ .Release.Namespace }}-{{ .Release.Name }}-controller-pre-delete');
    const clusterRole = new k8s.KubeClusterRole(this, `${name}-clusterrole`, {
      metadata: { ...metadata(name, name, hook('-10')), name: clusterName },
      rules,
    });
    const clusterBinding = new k8s.KubeClusterRoleBinding(this, `${name}-clusterrolebinding`, {
      metadata: { ...metadata(name, name, hook('-10')), name: clusterName },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: clusterName },
      subjects: [subject],
    });
    const { serviceAccountName: _, ...pod } = podDefaults('controller', true);
    const job = new k8s.KubeJob(this, `${name}-job`, {
      metadata: metadata(name, name, hook('0')),
      spec: {
        backoffLimit: 1,
        template: {
          metadata: { labels: labels(name) }, // not the controller's: its Service must not select it
          spec: {
            ...pod,
            serviceAccountName: releaseName(name),
            restartPolicy: 'Never',
            containers: [
              {
                name: 'pre-delete',
                ...image('controller'),
                command: ['node', 'services/controller/dist/pre-delete.js'],
                env: [
                  // Only the Pipelines stamped with the release's name: never another release's.
                  { name: 'CONTROLLER_NAME', value: controllerName() },
                  { name: 'CONTROLLER_WATCH_NAMESPACE', value: watchedNamespaces() },
                  {
                    name: 'CONTROLLER_PRE_DELETE_TOPICS',
                    value: valueText('controller.deleteTopicsOnUninstall'),
                  },
                  {
                    name: 'CONTROLLER_PRE_DELETE_WAIT',
                    // As long as the controller holds a Pipeline whose deletion fails.
                    value: value('controller.deletionTimeout'),
                  },
                ],
                volumeMounts: [tmpMount],
              },
            ],
          },
        },
      },
    });
    podBlocks(job, '/spec/template/spec', 'controller.resources');
    const enabled = 'and .Values.controller.enabled .Values.controller.preDeleteHook';
    for (const s of [account, role, binding, job]) onlyIf(s, enabled);
    for (const s of [clusterRole, clusterBinding])
      onlyIf(s, `and (${enabled}) .Values.controller.watchAllNamespaces`);
  }
}
