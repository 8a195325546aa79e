/**
 * The operator-facing values (Bitnami's conventions), each rendered by `helm template`
 * from a values file: global registry and pull secrets, name overrides within 63 characters, extra
 * env (lists with valueFrom), volumes, service account annotations, scheduling, security contexts
 * with the uid left unset, HPAs, the maintenance jobs' settings, preStop and grace periods, the
 * ingest readiness choice, search's allowed host names and the version label.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { parseAllDocuments, stringify } from 'yaml';
import { CHART_DIR } from '../src/paths.js';
import { helm, type K8sObject, REQUIRED_VALUES, render, setArgs } from './helm.js';

const scratch = mkdtempSync(join(tmpdir(), 'values-test-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

/** The chart with only the required values, rendered once for every test that reads the defaults. */
let rendered: K8sObject[] | undefined;
const defaults = () => {
  rendered ??= render({});
  return rendered;
};

let files = 0;
/** `helm template` with the required values and `values` as a values file (lists, nulls, maps). */
function renderFile(values: Record<string, unknown>, release = 'obs'): K8sObject[] {
  const res = renderRaw(values, release);
  if (res.status !== 0) throw new Error(`helm template failed: ${res.stderr}`);
  return parseAllDocuments(res.stdout)
    .map((d) => d.toJS() as K8sObject | null)
    .filter((o): o is K8sObject => o !== null);
}
function renderRaw(values: Record<string, unknown>, release = 'obs') {
  const file = join(scratch, `values-${files++}.yaml`);
  writeFileSync(file, stringify(values));
  return helm(['template', release, CHART_DIR, '--namespace', 'ns', ...setArgs(REQUIRED_VALUES), '-f', file]);
}

/** `[kind/name, pod spec]` of every workload. */
function pods(objects: K8sObject[]): [string, K8sObject['spec']][] {
  return objects.flatMap((o): [string, K8sObject['spec']][] => {
    const id = `${o.kind}/${o.metadata.name}`;
    if (o.kind === 'Deployment' || o.kind === 'Job') return [[id, o.spec.template.spec]];
    if (o.kind === 'CronJob') return [[id, o.spec.jobTemplate.spec.template.spec]];
    return [];
  });
}
const find = (objects: K8sObject[], kind: string, name: string) => {
  const found = objects.find((o) => o.kind === kind && o.metadata.name === name);
  if (!found) throw new Error(`no ${kind} ${name}`);
  return found;
};

describe('global values (the chart as a subchart)', () => {
  it('global.imageRegistry comes before every other registry', () => {
    const objects = renderFile({
      global: { imageRegistry: 'mirror.example:5000' },
      ingest: { image: { registry: 'own.example' } },
    });
    for (const [id, pod] of pods(objects))
      expect(pod.containers[0].image, id).toMatch(/^mirror\.example:5000\//);
    const plain = renderFile({ ingest: { image: { registry: 'own.example' } } });
    expect(find(plain, 'Deployment', 'obs-ingest').spec.template.spec.containers[0].image).toMatch(
      /^own\.example\/observatory\/ingest:/,
    );
  });

  it("global.imageRegistry reaches the bundled servers and the migration's wait for the database too", () => {
    const objects = renderFile({
      global: { imageRegistry: 'mirror.example:5000' },
      kafka: { bundled: { enabled: true } },
      database: { bundled: { enabled: true } },
    });
    const images = objects.flatMap((o) => {
      const pod =
        o.kind === 'Pod'
          ? o.spec
          : o.kind === 'CronJob'
            ? o.spec.jobTemplate.spec.template.spec
            : o.spec?.template?.spec;
      const containers: { name: string; image: string }[] = [
        ...(pod?.initContainers ?? []),
        ...(pod?.containers ?? []),
      ];
      return containers.map((c) => [`${o.kind}/${o.metadata.name}/${c.name}`, c.image]);
    });
    expect(images).toContainEqual([
      'Job/obs-migrate/wait-for-database',
      'mirror.example:5000/postgres:15-bookworm',
    ]);
    expect(images).toContainEqual(['StatefulSet/obs-kafka/kafka', 'mirror.example:5000/apache/kafka:4.4.0']);
    for (const [id, ref] of images) expect(ref, id).toMatch(/^mirror\.example:5000\//);
  });

  it('global.imagePullSecrets (names or {name}) join image.pullSecrets on every pod, once each', () => {
    const objects = renderFile({
      global: { imagePullSecrets: ['parent-pull', { name: 'shared-pull' }], storageClass: 'fast' },
      image: { pullSecrets: [{ name: 'shared-pull' }, { name: 'own-pull' }] },
    });
    for (const [id, pod] of pods(objects)) {
      expect(pod.imagePullSecrets, id).toEqual([
        { name: 'shared-pull' },
        { name: 'own-pull' },
        { name: 'parent-pull' },
      ]);
    }
  });

  it('accepts keys of a parent chart under global, and still refuses a misspelt top-level value', () => {
    expect(renderRaw({ global: { postgresql: { auth: {} } } }).status).toBe(0);
    const typo = renderRaw({ globals: {} });
    expect(typo.status).not.toBe(0);
    expect(typo.stderr).toContain("'globals'");
  });
});

describe('names', () => {
  const longest = (objects: K8sObject[]) => Math.max(...objects.map((o) => o.metadata.name.length));

  it('fullnameOverride names every object; a long one is cut so each name fits 63 (a CronJob 52)', () => {
    const objects = renderFile({
      fullnameOverride: 'x'.repeat(80),
      monitoring: { serviceMonitor: { enabled: true }, scrapeFrom: { namespace: 'monitoring' } },
    });
    expect(longest(objects)).toBeLessThanOrEqual(63);
    for (const cronJob of objects.filter((o) => o.kind === 'CronJob'))
      expect(cronJob.metadata.name.length).toBeLessThanOrEqual(52);
    expect(find(objects, 'Service', `${'x'.repeat(56)}-ingest`)).toBeDefined();
    expect(find(objects, 'CronJob', `${'x'.repeat(30)}-partition-maintenance`)).toBeDefined();
    // The references follow the names: the ServiceAccount, the ConfigMap, the Role's subject.
    const search = find(objects, 'Deployment', `${'x'.repeat(56)}-search`).spec.template.spec;
    expect(search.serviceAccountName).toBe(`${'x'.repeat(56)}-search`);
    expect(search.containers[0].envFrom[0].configMapRef.name).toBe(`${'x'.repeat(56)}-search`);
    const kinds = new Set(objects.map((o) => `${o.kind}/${o.metadata.name}`));
    expect(kinds.size).toBe(objects.length);
  });

  it('nameOverride goes between the release and the component; a trailing dash never ends a prefix', () => {
    const objects = renderFile({ nameOverride: 'events' });
    expect(find(objects, 'Deployment', 'obs-events-consumer')).toBeDefined();
    const cut = renderFile({ fullnameOverride: `${'y'.repeat(55)}-z` });
    expect(find(cut, 'Deployment', `${'y'.repeat(55)}-ingest`)).toBeDefined();
  });

  it('every object carries app.kubernetes.io/version (the appVersion)', () => {
    for (const o of defaults())
      expect(o.metadata.labels?.['app.kubernetes.io/version'], o.kind).toBe('0.1.0');
  });
});

describe('per-component additions', () => {
  const extraEnv = [
    { name: 'FROM_SECRET', valueFrom: { secretKeyRef: { name: 'extra', key: 'value' } } },
    { name: 'PLAIN', value: 'plain' },
  ];

  it('extraEnv as a list follows the container env (valueFrom kept); as a map it lands in the ConfigMap', () => {
    const objects = renderFile({
      ingest: { extraEnv },
      jobs: { extraEnv },
      search: { extraEnv: { NAMED: 'x' } },
    });
    const env = find(objects, 'Deployment', 'obs-ingest').spec.template.spec.containers[0].env;
    expect(env.slice(-2)).toEqual(extraEnv);
    const cron = find(objects, 'CronJob', 'obs-rollup-refresh').spec.jobTemplate.spec.template.spec;
    expect(cron.containers[0].env.slice(-2)).toEqual(extraEnv);
    // The migration hook runs the jobs image: it takes the jobs' extras too.
    expect(find(objects, 'Job', 'obs-migrate').spec.template.spec.containers[0].env.slice(-2)).toEqual(
      extraEnv,
    );
    expect(find(objects, 'ConfigMap', 'obs-search').data?.NAMED).toBe('x');
    expect(find(objects, 'ConfigMap', 'obs-ingest').data).not.toHaveProperty('0');
    expect(renderRaw({ ingest: { extraEnv: 'A=1' } }).stderr).toMatch(/extraEnv/);
  });

  it('extraVolumes and extraVolumeMounts follow the chart own ones', () => {
    const volume = { name: 'ca-bundle', configMap: { name: 'corporate-ca' } };
    const mount = { name: 'ca-bundle', mountPath: '/etc/ssl/corporate', readOnly: true };
    const objects = renderFile({
      consumer: { extraVolumes: [volume], extraVolumeMounts: [mount] },
      jobs: { extraVolumes: [volume], extraVolumeMounts: [mount] },
    });
    for (const [kind, name] of [
      ['Deployment', 'obs-consumer'],
      ['Job', 'obs-migrate'],
    ] as const) {
      const pod = find(objects, kind, name).spec.template.spec;
      expect(pod.volumes.map((v: { name: string }) => v.name)).toEqual(['tmp', 'ca-bundle']);
      expect(pod.containers[0].volumeMounts.at(-1)).toEqual(mount);
    }
    // Search's own: its login volume (local mode by default) and its visibility rules; none of the others' extras.
    expect(
      find(objects, 'Deployment', 'obs-search').spec.template.spec.volumes.map(
        (v: { name: string }) => v.name,
      ),
    ).toEqual(['tmp', 'search-auth', 'visibility']);
  });

  it('serviceAccount.annotations annotate that component ServiceAccount only', () => {
    const irsa = { 'eks.amazonaws.com/role-arn': 'arn:aws:iam::1:role/consumer' };
    const objects = renderFile({
      consumer: { serviceAccount: { annotations: irsa } },
      commonAnnotations: { team: 'a' },
    });
    expect(find(objects, 'ServiceAccount', 'obs-consumer').metadata.annotations).toEqual({
      ...irsa,
      team: 'a',
    });
    expect(find(objects, 'ServiceAccount', 'obs-search').metadata.annotations).toEqual({ team: 'a' });
  });

  it('affinity and priorityClassName reach every pod; topologySpreadConstraints replace the default', () => {
    const affinity = {
      nodeAffinity: {
        requiredDuringSchedulingIgnoredDuringExecution: {
          nodeSelectorTerms: [{ matchExpressions: [{ key: 'pool', operator: 'In', values: ['events'] }] }],
        },
      },
    };
    const spread = [
      { maxSkew: 1, topologyKey: 'topology.kubernetes.io/zone', whenUnsatisfiable: 'DoNotSchedule' },
    ];
    const objects = renderFile({
      affinity,
      priorityClassName: 'observatory-high',
      search: { topologySpreadConstraints: spread },
    });
    for (const [id, pod] of pods(objects)) {
      expect(pod.affinity, id).toEqual(affinity);
      expect(pod.priorityClassName, id).toBe('observatory-high');
    }
    expect(find(objects, 'Deployment', 'obs-search').spec.template.spec.topologySpreadConstraints).toEqual(
      spread,
    );
    const ingest = find(objects, 'Deployment', 'obs-ingest').spec.template.spec.topologySpreadConstraints;
    expect(ingest[0].labelSelector.matchLabels).toEqual({
      'app.kubernetes.io/name': 'ingest',
      'app.kubernetes.io/instance': 'obs',
    });
    for (const [id, pod] of pods(defaults())) expect(pod, id).not.toHaveProperty('priorityClassName');
  });
});

describe('security contexts', () => {
  it('leaves the uid to the platform (OpenShift restricted-v2) when set to null, still non-root', () => {
    const objects = renderFile({
      podSecurityContext: { runAsUser: null, runAsGroup: null, fsGroup: null },
      containerSecurityContext: { seLinuxOptions: { level: 's0:c1,c2' } },
    });
    for (const [id, pod] of pods(objects)) {
      expect(pod.securityContext, id).toEqual({
        runAsNonRoot: true,
        seccompProfile: { type: 'RuntimeDefault' },
      });
      expect(pod.containers[0].securityContext.runAsNonRoot, id).toBe(true);
      expect(pod.containers[0].securityContext.seLinuxOptions, id).toEqual({ level: 's0:c1,c2' });
    }
  });

  it('sets uid, gid and fsGroup 1000 (the images USER) by default', () => {
    for (const [id, pod] of pods(defaults()))
      expect(pod.securityContext, id).toMatchObject({ runAsUser: 1000, runAsGroup: 1000, fsGroup: 1000 });
  });
});

describe('autoscaling', () => {
  it('an HPA per stateless component when enabled; its Deployment then has no replicas', () => {
    const on = renderFile({
      ingest: {
        autoscaling: { enabled: true, minReplicas: 3, maxReplicas: 9, targetCPUUtilizationPercentage: 60 },
      },
    });
    const hpa = find(on, 'HorizontalPodAutoscaler', 'obs-ingest');
    expect(hpa.apiVersion).toBe('autoscaling/v2');
    expect(hpa.spec).toEqual({
      scaleTargetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: 'obs-ingest' },
      minReplicas: 3,
      maxReplicas: 9,
      metrics: [
        {
          type: 'Resource',
          resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: 60 } },
        },
      ],
      behavior: { scaleDown: { stabilizationWindowSeconds: 300 } },
    });
    expect(find(on, 'Deployment', 'obs-ingest').spec).not.toHaveProperty('replicas');
    expect(find(on, 'Deployment', 'obs-search').spec.replicas).toBe(2);
    const off = defaults();
    expect(off.filter((o) => o.kind === 'HorizontalPodAutoscaler')).toEqual([]);
    expect(find(off, 'Deployment', 'obs-ingest').spec.replicas).toBe(2);
    expect(
      find(
        renderFile({ search: { autoscaling: { enabled: true } } }),
        'HorizontalPodAutoscaler',
        'obs-search',
      ),
    ).toBeDefined();
  });
});

describe('maintenance jobs', () => {
  it('passes MAINTENANCE_ENABLED, the retention, the detach lock timeout and the log level', () => {
    const objects = renderFile({
      jobs: {
        enabled: false,
        logLevel: 'debug',
        partitionMaintenance: { retainMonths: 13, detachLockTimeout: '2s' },
      },
    });
    expect(find(objects, 'ConfigMap', 'obs-jobs').data).toMatchObject({
      MAINTENANCE_ENABLED: 'false',
      MAINTENANCE_RETAIN_MONTHS: '13',
      MAINTENANCE_DETACH_LOCK_TIMEOUT: '2s',
      LOG_LEVEL: 'debug',
    });
    // 0 (the default) leaves the retention empty, which the jobs read as unset: never detach.
    expect(find(defaults(), 'ConfigMap', 'obs-jobs').data).toMatchObject({
      MAINTENANCE_ENABLED: 'true',
      MAINTENANCE_RETAIN_MONTHS: '',
      MAINTENANCE_DETACH_LOCK_TIMEOUT: '5s',
    });
    expect(renderRaw({ jobs: { partitionMaintenance: { detachLockTimeout: 'soon' } } }).stderr).toMatch(
      /detachLockTimeout/,
    );
  });
});

describe('rollouts and probes', () => {
  it('every Deployment sleeps in preStop and its grace period covers the delay plus its shutdown bound', () => {
    // The bounds of each service's installShutdown (main.ts): ingest 30 s, consumer 70 s, 15 s else.
    const bounds: Record<string, number> = { ingest: 30, consumer: 70, search: 15, controller: 15 };
    for (const delay of [10, 25]) {
      const objects = renderFile({
        ingest: { preStopDelaySeconds: delay },
        consumer: { preStopDelaySeconds: delay },
        search: { preStopDelaySeconds: delay },
        controller: { preStopDelaySeconds: delay },
      });
      for (const [component, bound] of Object.entries(bounds)) {
        const pod = find(objects, 'Deployment', `obs-${component}`).spec.template.spec;
        expect(pod.containers[0].lifecycle.preStop, component).toEqual({ sleep: { seconds: delay } });
        expect(pod.terminationGracePeriodSeconds, component).toBeGreaterThan(delay + bound);
      }
    }
  });

  it("ingest's readiness follows its listener by default, the broker with brokerGatesReadiness", () => {
    const path = (objects: K8sObject[]) =>
      find(objects, 'Deployment', 'obs-ingest').spec.template.spec.containers[0].readinessProbe.httpGet.path;
    expect(path(defaults())).toBe('/health/live');
    expect(path(render({ 'ingest.brokerGatesReadiness': true }))).toBe('/health/ready');
    expect(
      find(defaults(), 'Deployment', 'obs-consumer').spec.template.spec.containers[0].readinessProbe.httpGet
        .path,
    ).toBe('/health/ready');
  });
});

describe("search's allowed host names", () => {
  it('every name of the Service, its ClusterIP from the service links, the pod IP and loopback', () => {
    const objects = renderFile({ clusterDomain: 'corp.internal' }, 'two');
    expect(find(objects, 'ConfigMap', 'two-search').data?.ALLOWED_HOSTS).toBe(
      'two-search,two-search.ns,two-search.ns.svc,two-search.ns.svc.corp.internal,localhost,127.0.0.1,::1',
    );
    const env = find(objects, 'Deployment', 'two-search').spec.template.spec.containers[0].env;
    expect(env.find((e: { name: string }) => e.name === 'SERVICE_IP').value).toBe(
      '$(TWO_SEARCH_SERVICE_HOST)',
    );
    const named = renderFile({ fullnameOverride: 'events' });
    expect(find(named, 'ConfigMap', 'events-search').data?.ALLOWED_HOSTS).toContain(
      'events-search.ns.svc.cluster.local',
    );
    expect(
      find(named, 'Deployment', 'events-search').spec.template.spec.containers[0].env.find(
        (e: { name: string }) => e.name === 'SERVICE_IP',
      ).value,
    ).toBe('$(EVENTS_SEARCH_SERVICE_HOST)');
  });
});
