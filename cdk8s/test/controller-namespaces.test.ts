/**
 * The controller's namespace list (a Role per listed namespace, for it and its pre-delete hook),
 * its read-only store URL from a Secret, the default Pipeline's spec.flow, and the generated
 * Pipeline types kept in step with the CRD the controller serves.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { CHART_DIR, REPO_ROOT } from '../src/paths.js';
import { helm, type K8sObject, REQUIRED_VALUES, render } from './helm.js';

const find = (objects: K8sObject[], kind: string, name: string, namespace?: string) =>
  objects.find(
    (o) => o.kind === kind && o.metadata.name === name && (!namespace || o.metadata.namespace === namespace),
  );
const configMap = (objects: K8sObject[]) => find(objects, 'ConfigMap', 'obs-controller')?.data ?? {};
const container = (objects: K8sObject[]) =>
  find(objects, 'Deployment', 'obs-controller')?.spec.template.spec.containers[0];
const listed = {
  'controller.watchNamespaces[0]': 'team-a',
  'controller.watchNamespaces[1]': 'observatory',
  'controller.watchNamespaces[2]': 'team-b',
  'controller.watchNamespaces[3]': 'team-a',
};
const roleNames = (objects: K8sObject[]) =>
  objects
    .filter((o) => o.kind === 'Role' && o.metadata.namespace)
    .map((o) => `${o.metadata.namespace}/${o.metadata.name}`)
    .sort();

describe('controller.watchNamespaces', () => {
  it("watches the release's namespace and the listed ones, each listed one with its own Roles for the controller and the hook", () => {
    const objects = render(listed);
    expect(configMap(objects).CONTROLLER_WATCH_NAMESPACE).toBe('observatory,team-a,team-b');
    const hookEnv = find(objects, 'Job', 'obs-controller-pre-delete')?.spec.template.spec.containers[0].env;
    expect(hookEnv).toContainEqual({
      name: 'CONTROLLER_WATCH_NAMESPACE',
      value: 'observatory,team-a,team-b',
    });
    // Once per other namespace; the release's own keeps its Roles of controller.ts.
    expect(roleNames(objects)).toEqual([
      'team-a/observatory-obs-controller',
      'team-a/observatory-obs-controller-pre-delete',
      'team-b/observatory-obs-controller',
      'team-b/observatory-obs-controller-pre-delete',
    ]);
    const role = find(objects, 'Role', 'observatory-obs-controller', 'team-a');
    expect(role?.rules).toEqual(find(objects, 'Role', 'obs-controller')?.rules.slice(0, 4));
    expect(role?.rules.flatMap((r: { resources: string[] }) => r.resources)).not.toContain('leases');
    expect(find(objects, 'RoleBinding', 'observatory-obs-controller', 'team-b')).toMatchObject({
      roleRef: { kind: 'Role', name: 'observatory-obs-controller' },
      subjects: [{ kind: 'ServiceAccount', name: 'obs-controller', namespace: 'observatory' }],
    });
    const hookRole = find(objects, 'Role', 'observatory-obs-controller-pre-delete', 'team-b');
    expect(hookRole?.rules).toEqual([
      { apiGroups: ['observatory.dev'], resources: ['pipelines'], verbs: ['list', 'delete', 'patch'] },
    ]);
    expect(hookRole?.metadata.annotations).toMatchObject({ 'helm.sh/hook': 'pre-delete' });
    expect(objects.filter((o) => o.kind.startsWith('Cluster'))).toEqual([]);
  });

  it('gives way to watchAllNamespaces (ClusterRoles; the listed namespaces keep the Secret rule), and the hook Roles to preDeleteHook=false', () => {
    const all = render({ ...listed, 'controller.watchAllNamespaces': true });
    expect(configMap(all).CONTROLLER_WATCH_NAMESPACE).toBe('');
    // Secrets stay namespaced: a Secret-only Role in each listed namespace, none cluster-wide.
    expect(roleNames(all)).toEqual([
      'team-a/observatory-obs-controller',
      'team-b/observatory-obs-controller',
    ]);
    expect(find(all, 'Role', 'observatory-obs-controller', 'team-a')?.rules).toEqual([
      { apiGroups: [''], resources: ['secrets'], verbs: ['get'] },
    ]);
    const noHook = render({ ...listed, 'controller.preDeleteHook': false });
    expect(roleNames(noHook)).toEqual([
      'team-a/observatory-obs-controller',
      'team-b/observatory-obs-controller',
    ]);
  });

  it('refuses a name that is not a namespace, naming the value', () => {
    const res = helm([
      'template',
      'obs',
      CHART_DIR,
      ...Object.entries({ ...REQUIRED_VALUES, 'controller.watchNamespaces[0]': 'Team_A' }).flatMap(
        ([k, v]) => ['--set-string', `${k}=${v}`],
      ),
    ]);
    expect(res.status).not.toBe(0);
    expect(res.stderr).toMatch(/\/controller\/watchNamespaces\/0': 'Team_A' does not match pattern/);
  });
});

describe('controller.storeUrlSecret', () => {
  it('puts CONTROLLER_STORE_URL in the environment from the Secret only, never in the ConfigMap', () => {
    expect(container(render()).env.map((e: { name: string }) => e.name)).not.toContain(
      'CONTROLLER_STORE_URL',
    );
    const objects = render({ 'controller.storeUrlSecret.name': 'store-reader' });
    expect(container(objects).env).toContainEqual({
      name: 'CONTROLLER_STORE_URL',
      valueFrom: { secretKeyRef: { name: 'store-reader', key: 'CONTROLLER_STORE_URL' } },
    });
    expect(configMap(objects)).not.toHaveProperty('CONTROLLER_STORE_URL');
  });
});

describe('the default Pipeline', () => {
  it("has spec.flow: the consumer's group on the event topic, its dead-letter topic and the thresholds", () => {
    const objects = render({ 'kafka.groupId': 'g1', 'pipeline.flow.maxLag': 50 });
    expect(find(objects, 'Pipeline', 'obs-events')?.spec.flow).toEqual({
      consumerGroup: 'g1',
      topic: 'events.cloudevents.v1',
      deadLetterTopic: 'events.cloudevents.v1.dlq',
      maxLag: 50,
      maxDeadLettersPerMinute: 0,
    });
  });

  it('is typed from the CRD the controller serves (cdk8s/imports regenerated by npm run import)', () => {
    const crd = parse(readFileSync(join(REPO_ROOT, 'crds/pipeline.yaml'), 'utf8'));
    const spec = crd.spec.versions[0].schema.openAPIV3Schema.properties.spec.properties;
    const imported = readFileSync(join(REPO_ROOT, 'cdk8s/imports/pipelines-observatory.dev.ts'), 'utf8');
    const props = imported.match(/export interface PipelineSpec \{([\s\S]*?)\n\}/)?.[1] ?? '';
    for (const key of Object.keys(spec)) expect(props).toMatch(new RegExp(`readonly ${key}\\??:`));
    for (const key of Object.keys(spec.flow.properties))
      expect(imported).toMatch(new RegExp(`readonly ${key}\\??:`));
  });
});
