/**
 * The Pipeline controller (services/controller): 2 replicas, one leads through a Lease. By default
 * it watches the release's namespace only, so its RBAC is a Role (no cluster-wide object: two
 * releases never collide), with exactly the rules of the controller README's RBAC table; with
 * `controller.watchAllNamespaces` the Pipeline rules come as a ClusterRole named after the
 * release's namespace and name (the Secret and Lease rules stay namespaced Roles); `controller.watchNamespaces` adds a Role
 * in each listed namespace (controller-namespaces.ts). The read-only store URL (for
 * status.flow.lastStoredAt) comes only from a Secret. The pre-delete hook is its own construct.
 */

import { ApiObject } from 'cdk8s';
import * as k8s from 'cdk8s-plus-34/lib/imports/k8s.js';
import { Construct } from 'constructs';
import { KAFKA_BUNDLED, kafkaBootstrap } from '../bundled.js';
import { kafkaSecuritySettings } from '../credentials.js';
import { onlyIf, releaseName, releaseNameExpr, scalar, spreadAt, text, value, valueText } from '../helm.js';
import { metadata } from './common.js';
import {
  ControllerNamespaces,
  controllerName,
  PIPELINE_RULES,
  SECRET_RULES,
  watchedNamespaces,
} from './controller-namespaces.js';
import { HttpService } from './http-service.js';

/** CONTROLLER_STORE_URL from `controller.storeUrlSecret` (the URL holds a password: never a value). */
const STORE_URL_ENV = `(ternary (list (dict "name" "CONTROLLER_STORE_URL" "valueFrom" (dict "secretKeyRef" (dict "name" .Values.controller.storeUrlSecret.name "key" .Values.controller.storeUrlSecret.key)))) (list) (ne .Values.controller.storeUrlSecret.name ""))`;

/**
 * CONTROLLER_ADOPTABLE_TOPICS: the operator's list, and the default Pipeline's own topics for it
 * alone when it may take them over (pipeline.adoptExistingTopics, or the bundled Kafka whose volume
 * outlives an uninstall).
 */
const ADOPTABLE_TOPICS = scalar(
  `{{ concat .Values.controller.adoptableTopics (ternary (list (printf "%s/%s:*" .Release.Namespace ${releaseNameExpr('events')})) (list) (or .Values.pipeline.adoptExistingTopics ${KAFKA_BUNDLED})) | join "," | toJson }}`,
);

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
        CONTROLLER_NAME: controllerName(),
        CONTROLLER_LEASE_NAME: releaseName('controller'),
        CONTROLLER_LEASE_NAMESPACE: text('{{ .Release.Namespace }}'),
        CONTROLLER_WATCH_NAMESPACE: watchedNamespaces(),
        CONTROLLER_TOPIC_NAME_TEMPLATE: value('controller.topicNameTemplate'),
        CONTROLLER_ADOPTABLE_TOPICS: ADOPTABLE_TOPICS,
        CONTROLLER_RESERVED_TOPICS: scalar('{{ .Values.controller.reservedTopics | join "," | toJson }}'),
        CONTROLLER_IGNORED_CONFIGS: value('controller.ignoredConfigs'),
        CONTROLLER_DELETION_TIMEOUT: value('controller.deletionTimeout'),
        CONTROLLER_FLOW_PERIOD: value('controller.flow.period'),
        CONTROLLER_FLOW_MAX_LAG: valueText('controller.flow.maxLag'),
        CONTROLLER_FLOW_MAX_DEAD_LETTERS_PER_MINUTE: valueText('controller.flow.maxDeadLettersPerMinute'),
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
    const pipelineRules = PIPELINE_RULES;
    const deployment = service.node
      .findAll()
      .find((c): c is ApiObject => c instanceof ApiObject && c.kind === 'Deployment');
    if (deployment) spreadAt(deployment, '/spec/template/spec/containers/0/env', STORE_URL_ENV);
    // Its own Lease only: the chart makes it, so no `create` (which resourceNames cannot restrict).
    const leaseRule = {
      apiGroups: ['coordination.k8s.io'],
      resources: ['leases'],
      resourceNames: [releaseName('controller')],
      verbs: ['get', 'update'],
    };
    // In the release's namespace always (the Lease is there); the ClusterRole below adds the same
    // Pipeline rules in every other namespace when it watches them all.
    const role = new k8s.KubeRole(this, 'controller-role', {
      metadata: metadata('controller'),
      rules: [...pipelineRules, ...SECRET_RULES, leaseRule],
    });
    const binding = new k8s.KubeRoleBinding(this, 'controller-rolebinding', {
      metadata: metadata('controller'),
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: releaseName('controller') },
      subjects: [subject],
    });
    // Cluster-scoped names carry the release's namespace too: two releases never collide.
    const clusterName = text('{{ .Release.Namespace }}-{{ .Release.Name }}-controller');
    const clusterRole = new k8s.KubeClusterRole(this, 'controller-clusterrole', {
      metadata: { ...metadata('controller'), name: clusterName },
      rules: pipelineRules,
    });
    const clusterBinding = new k8s.KubeClusterRoleBinding(this, 'controller-clusterrolebinding', {
      metadata: { ...metadata('controller'), name: clusterName },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: clusterName },
      subjects: [subject],
    });
    // The chart owns the (empty) Lease the replicas elect through, so an uninstall removes it; the
    // controller only gets and updates it (it creates one only when missing).
    const lease = new k8s.KubeLease(this, 'controller-lease', { metadata: metadata('controller'), spec: {} });
    for (const scope of [role, binding, service, lease]) onlyIf(scope, '.Values.controller.enabled');
    for (const scope of [clusterRole, clusterBinding])
      onlyIf(scope, 'and .Values.controller.enabled .Values.controller.watchAllNamespaces');
    new ControllerNamespaces(this);
  }
}
