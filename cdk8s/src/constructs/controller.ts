/**
 * The Pipeline controller: 2 replicas, one leads through a Lease. Its RBAC is least privilege, from
 * what it calls: Pipelines (read, update, patch; status and finalizers), Events, and Leases in its
 * own namespace only.
 */

import * as k8s from 'cdk8s-plus-34/lib/imports/k8s.js';
import { Construct } from 'constructs';
import { onlyIf, releaseName, required, text } from '../helm.js';
import { metadata } from './common.js';
import { HttpService } from './http-service.js';

const PIPELINES = 'observatory.dev'; // the Pipeline CRD's API group

export class Controller extends Construct {
  constructor(scope: Construct) {
    super(scope, 'controller-component');
    const service = new HttpService(this, {
      component: 'controller',
      settings: {
        BROKER_BOOTSTRAP_SERVERS: required(
          'kafka.bootstrapServers',
          'kafka.bootstrapServers: the Kafka bootstrap servers are required',
        ),
        LEASE_NAME: releaseName('controller'),
        LEASE_NAMESPACE: text('{{ .Release.Namespace }}'),
        WATCH_NAMESPACE: text('{{ .Release.Namespace }}'),
      },
      terminationGracePeriodSeconds: 30,
      apiAccess: true,
    });
    const subject = {
      kind: 'ServiceAccount',
      name: releaseName('controller'),
      namespace: text('{{ .Release.Namespace }}'),
    };
    const role = new k8s.KubeRole(this, 'controller-role', {
      metadata: metadata('controller'),
      rules: [
        {
          apiGroups: [PIPELINES],
          resources: ['pipelines'],
          verbs: ['get', 'list', 'watch', 'update', 'patch'],
        },
        {
          apiGroups: [PIPELINES],
          resources: ['pipelines/status', 'pipelines/finalizers'],
          verbs: ['update', 'patch'],
        },
        { apiGroups: ['', 'events.k8s.io'], resources: ['events'], verbs: ['create', 'patch'] },
        { apiGroups: ['coordination.k8s.io'], resources: ['leases'], verbs: ['get', 'create', 'update'] },
      ],
    });
    const binding = new k8s.KubeRoleBinding(this, 'controller-rolebinding', {
      metadata: metadata('controller'),
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: releaseName('controller') },
      subjects: [subject],
    });
    for (const scope of [role, binding, service]) onlyIf(scope, '.Values.controller.enabled');
  }
}
