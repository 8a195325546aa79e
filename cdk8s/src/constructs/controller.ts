/**
 * The Pipeline controller (services/controller): 2 replicas, one leads through a Lease. It watches
 * the release's namespace only, so its RBAC is a Role (no cluster-wide object: two releases never
 * collide), with exactly the rules of the controller README's RBAC table.
 */

import * as k8s from 'cdk8s-plus-34/lib/imports/k8s.js';
import { Construct } from 'constructs';
import { kafkaBootstrap } from '../bundled.js';
import { kafkaSecuritySettings } from '../credentials.js';
import { onlyIf, releaseName, scalar, text } from '../helm.js';
import { metadata } from './common.js';
import { HttpService } from './http-service.js';

const PIPELINES = 'observatory.dev'; // the Pipeline CRD's API group

const fieldEnv = (name: string, fieldPath: string): k8s.EnvVar => ({
  name,
  valueFrom: { fieldRef: { fieldPath } },
});

export class Controller extends Construct {
  constructor(scope: Construct) {
    super(scope, 'controller-component');
    const service = new HttpService(this, {
      component: 'controller',
      settings: {
        BROKER_BOOTSTRAP_SERVERS: kafkaBootstrap(),
        ...kafkaSecuritySettings(),
        // Only the release's own Kafka unless the operator lists more.
        CONTROLLER_ALLOWED_BOOTSTRAP: scalar(
          '{{ .Values.controller.allowedBootstrapServers | default (include "observatory.kafkaBootstrap" .) | toJson }}',
        ),
        CONTROLLER_LEASE_NAME: releaseName('controller'),
        CONTROLLER_LEASE_NAMESPACE: text('{{ .Release.Namespace }}'),
        CONTROLLER_WATCH_NAMESPACE: text('{{ .Release.Namespace }}'),
      },
      secretEnv: [fieldEnv('POD_NAME', 'metadata.name'), fieldEnv('POD_NAMESPACE', 'metadata.namespace')],
      shutdownBoundSeconds: 15, // main.ts: installShutdown's timeout
      apiAccess: true,
      connections: { kafka: true },
    });
    const subject = {
      kind: 'ServiceAccount',
      name: releaseName('controller'),
      namespace: text('{{ .Release.Namespace }}'),
    };
    const role = new k8s.KubeRole(this, 'controller-role', {
      metadata: metadata('controller'),
      rules: [
        { apiGroups: [PIPELINES], resources: ['pipelines'], verbs: ['list', 'watch', 'patch'] },
        { apiGroups: [PIPELINES], resources: ['pipelines/status'], verbs: ['patch'] },
        { apiGroups: [''], resources: ['events'], verbs: ['create'] },
        // The Secrets a Pipeline's spec.kafka names, in the one namespace it watches.
        { apiGroups: [''], resources: ['secrets'], verbs: ['get'] },
        { apiGroups: ['coordination.k8s.io'], resources: ['leases'], verbs: ['get', 'create', 'update'] },
      ],
    });
    const binding = new k8s.KubeRoleBinding(this, 'controller-rolebinding', {
      metadata: metadata('controller'),
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: releaseName('controller') },
      subjects: [subject],
    });
    // The chart owns the (empty) Lease the replicas elect through, so an uninstall removes it; the
    // controller only gets and updates it (it creates one only when missing).
    const lease = new k8s.KubeLease(this, 'controller-lease', { metadata: metadata('controller'), spec: {} });
    for (const scope of [role, binding, service, lease]) onlyIf(scope, '.Values.controller.enabled');
  }
}
