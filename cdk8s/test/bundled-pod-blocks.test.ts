/**
 * The evaluation profile's StatefulSets (kafka.bundled, database.bundled) take the pod-level values
 * every pod takes (podBlocks: scheduling, priority class, security contexts) and keep the user
 * their image runs as, whatever podSecurityContext says; their claim templates, which Kubernetes
 * never lets change, carry only labels no upgrade changes.
 */
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { CHART_DIR } from '../src/paths.js';
import { helm, type K8sObject, setArgs } from './helm.js';

function statefulSets(args: string[], chart = CHART_DIR): Map<string, K8sObject> {
  const res = helm(['template', 'obs', chart, '--namespace', 'ev', ...args]);
  if (res.status !== 0) throw new Error(`helm template failed: ${res.stderr}`);
  const objects = parseAllDocuments(res.stdout)
    .map((d) => d.toJS() as K8sObject | null)
    .filter((o): o is K8sObject => o?.kind === 'StatefulSet');
  return new Map(objects.map((o) => [o.metadata.name, o]));
}

describe('bundled StatefulSets', () => {
  const bundled = setArgs({ 'kafka.bundled.enabled': true, 'database.bundled.enabled': true });

  it('take affinity, tolerations, the priority class and the values-given security contexts', () => {
    const affinity = {
      nodeAffinity: {
        requiredDuringSchedulingIgnoredDuringExecution: {
          nodeSelectorTerms: [{ matchExpressions: [{ key: 'disk', operator: 'In', values: ['ssd'] }] }],
        },
      },
    };
    const sets = statefulSets([
      ...bundled,
      ...setArgs({ priorityClassName: 'evaluation', 'containerSecurityContext.runAsNonRoot': true }),
      '--set-json',
      `affinity=${JSON.stringify(affinity)}`,
      '--set-json',
      'tolerations=[{"key":"dedicated","operator":"Exists"}]',
      '--set-json',
      'podSecurityContext.seccompProfile={"type":"Localhost","localhostProfile":"observatory.json"}',
    ]);
    expect([...sets.keys()].sort()).toEqual(['obs-kafka', 'obs-postgresql']);
    for (const [name, uid] of [
      ['obs-kafka', 1000],
      ['obs-postgresql', 999],
    ] as const) {
      const pod = sets.get(name)?.spec.template.spec;
      expect(pod.affinity, name).toEqual(affinity);
      expect(pod.tolerations, name).toEqual([{ key: 'dedicated', operator: 'Exists' }]);
      expect(pod.priorityClassName, name).toBe('evaluation');
      expect(pod.securityContext, name).toEqual({
        runAsNonRoot: true,
        runAsUser: uid,
        runAsGroup: uid,
        fsGroup: uid,
        seccompProfile: { type: 'Localhost', localhostProfile: 'observatory.json' },
      });
      expect(pod.containers[0].securityContext.capabilities, name).toEqual({ drop: ['ALL'] });
    }
  });

  it("keep the image's user when podSecurityContext leaves the ids to the platform", () => {
    const sets = statefulSets([
      ...bundled,
      ...['runAsUser', 'runAsGroup', 'fsGroup'].flatMap((k) => ['--set', `podSecurityContext.${k}=null`]),
    ]);
    const pod = sets.get('obs-postgresql')?.spec.template.spec;
    expect(pod.securityContext).toMatchObject({
      runAsNonRoot: true,
      runAsUser: 999,
      runAsGroup: 999,
      fsGroup: 999,
    });
    expect(pod.priorityClassName).toBeUndefined();
  });

  it('label their claim templates with the selector alone, unchanged by a new chart version or commonLabels', () => {
    // Kubernetes refuses any change to volumeClaimTemplates: one would fail `helm upgrade`.
    const next = mkdtempSync(join(tmpdir(), 'next-chart-'));
    try {
      cpSync(CHART_DIR, next, { recursive: true });
      const chartYaml = join(next, 'Chart.yaml');
      writeFileSync(
        chartYaml,
        readFileSync(chartYaml, 'utf8').replace(/^(version|appVersion): .*$/gm, '$1: 9.9.9'),
      );
      const now = statefulSets(bundled);
      const upgraded = statefulSets([...bundled, ...setArgs({ 'commonLabels.team': 'events' })], next);
      for (const [name, component] of [
        ['obs-kafka', 'kafka'],
        ['obs-postgresql', 'postgresql'],
      ] as const) {
        const claims = now.get(name)?.spec.volumeClaimTemplates;
        expect(claims[0].metadata.labels, name).toEqual({
          'app.kubernetes.io/name': component,
          'app.kubernetes.io/instance': 'obs',
        });
        expect(upgraded.get(name)?.spec.volumeClaimTemplates, name).toEqual(claims);
        // The pod template, which an upgrade may change, carries the rest.
        expect(upgraded.get(name)?.spec.template.metadata.labels, name).toMatchObject({
          'helm.sh/chart': 'observatory-9.9.9',
          'app.kubernetes.io/version': '9.9.9',
          team: 'events',
        });
      }
    } finally {
      rmSync(next, { recursive: true, force: true });
    }
  });
});
