/**
 * The HPAs' scale-down window ("Autoscaling on the cluster": e2e/cluster/autoscaling.test.ts
 * scales ingest out and back in with a short one) and their replica bounds; the rest of the HPA is
 * in values.test.ts.
 */
import { describe, expect, it } from 'vitest';
import { type K8sObject, REQUIRED_VALUES, render, renderError, setArgs } from './helm.js';

const hpa = (objects: K8sObject[], name: string) =>
  objects.find((o) => o.kind === 'HorizontalPodAutoscaler' && o.metadata.name === name);

describe("the HPAs' scale-down window", () => {
  it("is Kubernetes' default, 300 s, unless the operator sets it (ingest's and search's apart)", () => {
    const objects = render({
      'ingest.autoscaling.enabled': true,
      'search.autoscaling.enabled': true,
      'search.autoscaling.scaleDownStabilizationSeconds': 10,
    });
    expect(hpa(objects, 'obs-ingest')?.spec.behavior).toEqual({
      scaleDown: { stabilizationWindowSeconds: 300 },
    });
    expect(hpa(objects, 'obs-search')?.spec.behavior).toEqual({
      scaleDown: { stabilizationWindowSeconds: 10 },
    });
  });

  it('refuses a negative window, naming the value', () => {
    const error = renderError(
      setArgs({ ...REQUIRED_VALUES, 'ingest.autoscaling.scaleDownStabilizationSeconds': -1 }),
    );
    expect(error).toMatch(/scaleDownStabilizationSeconds/);
  });
});

describe("the HPAs' replica bounds", () => {
  it('refuses a minReplicas above maxReplicas, naming both values', () => {
    for (const component of ['ingest', 'search']) {
      const error = renderError(
        setArgs({
          ...REQUIRED_VALUES,
          [`${component}.autoscaling.enabled`]: true,
          [`${component}.autoscaling.minReplicas`]: 5,
          [`${component}.autoscaling.maxReplicas`]: 3,
        }),
      );
      expect(error, component).toContain(
        `${component}.autoscaling.minReplicas (5) is above ${component}.autoscaling.maxReplicas (3)`,
      );
    }
    // Equal bounds fix the count; bounds of an HPA that is off are not read.
    const fixed = render({
      'ingest.autoscaling.enabled': true,
      'ingest.autoscaling.minReplicas': 4,
      'ingest.autoscaling.maxReplicas': 4,
    });
    expect(hpa(fixed, 'obs-ingest')?.spec).toMatchObject({ minReplicas: 4, maxReplicas: 4 });
    expect(() =>
      render({ 'ingest.autoscaling.minReplicas': 5, 'ingest.autoscaling.maxReplicas': 3 }),
    ).not.toThrow();
  });
});
