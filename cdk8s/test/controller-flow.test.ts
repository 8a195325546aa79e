/**
 * The controller's values: flow settings, topic-name rule, ignored configs and the
 * deletion bound reach its environment; all namespaces bring a ClusterRole (named after the
 * release's namespace and name); the pre-delete hook deletes Pipelines with least privilege.
 */
import { describe, expect, it } from 'vitest';
import { type K8sObject, render } from './helm.js';

const find = (objects: K8sObject[], kind: string, name: string) =>
  objects.find((o) => o.kind === kind && o.metadata.name === name);
const env = (objects: K8sObject[]) => find(objects, 'ConfigMap', 'obs-controller')?.data ?? {};
const PIPELINE_RULES = [
  { apiGroups: ['observatory.dev'], resources: ['pipelines'], verbs: ['list', 'watch', 'patch'] },
  { apiGroups: ['observatory.dev'], resources: ['pipelines/status'], verbs: ['patch'] },
  { apiGroups: [''], resources: ['events'], verbs: ['create'] },
];
const SECRET_RULE = { apiGroups: [''], resources: ['secrets'], verbs: ['get'] };

describe('controller values: namespaces, flow health, deletion', () => {
  it('defaults: the release namespace only (no cluster-wide object), flow and deletion settings in the environment', () => {
    const objects = render();
    expect(env(objects)).toMatchObject({
      CONTROLLER_WATCH_NAMESPACE: 'observatory',
      // The stamp of the release's Pipelines: it reconciles those and unstamped ones only.
      CONTROLLER_NAME: 'observatory/obs',
      // Unset: {name} in the release's namespace, {namespace}.{name} in others.
      CONTROLLER_TOPIC_NAME_TEMPLATE: '',
      // The default Pipeline alone may take over its own topics (a reinstall), no other.
      CONTROLLER_ADOPTABLE_TOPICS: 'observatory/obs-events:*',
      CONTROLLER_RESERVED_TOPICS: '__*,_*,connect-*',
      CONTROLLER_IGNORED_CONFIGS:
        'leader.replication.throttled.replicas,follower.replication.throttled.replicas',
      CONTROLLER_DELETION_TIMEOUT: '3m',
      CONTROLLER_FLOW_PERIOD: '30s',
      CONTROLLER_FLOW_MAX_LAG: '1000',
      CONTROLLER_FLOW_MAX_DEAD_LETTERS_PER_MINUTE: '0',
    });
    expect(objects.filter((o) => o.kind.startsWith('Cluster'))).toEqual([]);
    // The Secrets of the release's namespace, and its own Lease by name (the chart makes it).
    expect(find(objects, 'Role', 'obs-controller')?.rules).toEqual([
      ...PIPELINE_RULES,
      SECRET_RULE,
      {
        apiGroups: ['coordination.k8s.io'],
        resources: ['leases'],
        resourceNames: ['obs-controller'],
        verbs: ['get', 'update'],
      },
    ]);
    expect(find(objects, 'Lease', 'obs-controller')).toBeDefined();
  });

  it("adoption: the operator's list, with the default Pipeline's own entry only while it may adopt", () => {
    const listed = render({
      'controller.adoptableTopics[0]': 'legacy.*',
      'controller.adoptableTopics[1]': 'team-a/audit:audit.v1',
    });
    expect(env(listed).CONTROLLER_ADOPTABLE_TOPICS).toBe(
      'legacy.*,team-a/audit:audit.v1,observatory/obs-events:*',
    );
    expect(env(render({ 'pipeline.adoptExistingTopics': false })).CONTROLLER_ADOPTABLE_TOPICS).toBe('');
  });

  it('watchAllNamespaces: every namespace, through a ClusterRole with the Pipeline rules only (never Secrets), named per release', () => {
    const objects = render({ 'controller.watchAllNamespaces': true }, { namespace: 'team' });
    expect(env(objects)).toMatchObject({ CONTROLLER_WATCH_NAMESPACE: '' });
    expect(find(objects, 'ClusterRole', 'team-obs-controller')?.rules).toEqual(PIPELINE_RULES);
    expect(find(objects, 'Role', 'obs-controller')?.rules).toContainEqual(SECRET_RULE);
    const clusterWide = objects.filter((o) => o.kind === 'ClusterRole').flatMap((o) => o.rules);
    expect(clusterWide.flatMap((r: { resources: string[] }) => r.resources)).not.toContain('secrets');
    expect(find(objects, 'ClusterRoleBinding', 'team-obs-controller')).toMatchObject({
      roleRef: { kind: 'ClusterRole', name: 'team-obs-controller' },
      subjects: [{ kind: 'ServiceAccount', name: 'obs-controller', namespace: 'team' }],
    });
    expect(find(objects, 'ClusterRole', 'team-obs-controller-pre-delete')?.rules).toEqual([
      { apiGroups: ['observatory.dev'], resources: ['pipelines'], verbs: ['list', 'delete', 'patch'] },
    ]);
  });

  it("the pre-delete hook: a Job of the controller image that may only list, patch and delete Pipelines, of the release's name; topics only when opted in; off with preDeleteHook=false", () => {
    const objects = render();
    const job = find(objects, 'Job', 'obs-controller-pre-delete');
    expect(job?.metadata.annotations).toMatchObject({ 'helm.sh/hook': 'pre-delete' });
    const pod = job?.spec.template.spec;
    expect(pod.serviceAccountName).toBe('obs-controller-pre-delete');
    expect(pod.containers[0].command).toEqual(['node', 'services/controller/dist/pre-delete.js']);
    expect(pod.containers[0].env).toEqual([
      { name: 'CONTROLLER_NAME', value: 'observatory/obs' },
      { name: 'CONTROLLER_WATCH_NAMESPACE', value: 'observatory' },
      { name: 'CONTROLLER_PRE_DELETE_TOPICS', value: 'false' },
      { name: 'CONTROLLER_PRE_DELETE_WAIT', value: '3m' },
    ]);
    const optedIn = render({ 'controller.deleteTopicsOnUninstall': true });
    expect(
      find(optedIn, 'Job', 'obs-controller-pre-delete')?.spec.template.spec.containers[0].env,
    ).toContainEqual({
      name: 'CONTROLLER_PRE_DELETE_TOPICS',
      value: 'true',
    });
    expect(job?.spec.template.metadata.labels['app.kubernetes.io/name']).toBe('controller-pre-delete');
    expect(find(objects, 'Role', 'obs-controller-pre-delete')?.rules).toEqual([
      { apiGroups: ['observatory.dev'], resources: ['pipelines'], verbs: ['list', 'delete', 'patch'] },
    ]);
    const off = render({ 'controller.preDeleteHook': false });
    expect(off.filter((o) => o.metadata.name.includes('pre-delete'))).toEqual([]);
  });
});
