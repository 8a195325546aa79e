/**
 * consumer.autoscaling.keda: off by default; on, a ScaledObject with KEDA's Kafka
 * scaler on the consumer group's lag, the Deployment without replicas (KEDA's HPA owns them), and
 * the template refusing more pods than partitions or a secured Kafka without credentials for KEDA.
 */
import { describe, expect, it } from 'vitest';
import { type K8sObject, render } from './helm.js';

const find = (objects: K8sObject[], kind: string) => objects.filter((o) => o.kind === kind);
const consumerDeployment = (objects: K8sObject[]) =>
  objects.find((o) => o.kind === 'Deployment' && o.metadata.name === 'obs-consumer');
const KEDA = { 'consumer.autoscaling.keda.enabled': true };

describe('consumer.autoscaling.keda', () => {
  it('off by default: no ScaledObject, the Deployment keeps consumer.replicas', () => {
    const objects = render({ 'consumer.replicas': 3 });
    expect(find(objects, 'ScaledObject')).toEqual([]);
    expect(consumerDeployment(objects)?.spec.replicas).toBe(3);
  });

  it("on: a ScaledObject on the group's lag of the event topic, the Deployment's replicas left to KEDA", () => {
    const objects = render({ ...KEDA, 'kafka.groupId': 'g1', 'pipeline.topic': 'orders.v1' });
    const [scaled] = find(objects, 'ScaledObject');
    expect(scaled?.apiVersion).toBe('keda.sh/v1alpha1');
    expect(scaled?.metadata.name).toBe('obs-consumer');
    expect(scaled?.spec).toMatchObject({
      scaleTargetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: 'obs-consumer' },
      minReplicaCount: 1,
      maxReplicaCount: 12,
      pollingInterval: 15,
      advanced: {
        horizontalPodAutoscalerConfig: { behavior: { scaleDown: { stabilizationWindowSeconds: 300 } } },
      },
    });
    expect(scaled?.spec.triggers).toEqual([
      {
        type: 'kafka',
        metadata: {
          bootstrapServers: 'kafka:9092',
          consumerGroup: 'g1',
          topic: 'orders.v1',
          lagThreshold: '1000',
          offsetResetPolicy: 'earliest',
          allowIdleConsumers: 'false',
        },
      },
    ]);
    expect(consumerDeployment(objects)?.spec).not.toHaveProperty('replicas');
  });

  it('refuses more consumer pods than partitions, and a minimum above the maximum', () => {
    expect(() => render({ ...KEDA, 'consumer.autoscaling.keda.maxReplicas': 13 })).toThrow(
      /consumer\.autoscaling\.keda\.maxReplicas \(13\) is above pipeline\.partitions \(12\)/,
    );
    const [scaled] = find(
      render({ ...KEDA, 'consumer.autoscaling.keda.maxReplicas': 24, 'pipeline.partitions': 24 }),
      'ScaledObject',
    );
    expect(scaled?.spec.maxReplicaCount).toBe(24);
    expect(() =>
      render({
        ...KEDA,
        'consumer.autoscaling.keda.minReplicas': 4,
        'consumer.autoscaling.keda.maxReplicas': 3,
      }),
    ).toThrow(/minReplicas is above maxReplicas/);
  });

  it('secured Kafka: requires a TriggerAuthentication by name and refers to it', () => {
    const secured = {
      ...KEDA,
      'kafka.sasl.mechanism': 'SCRAM-SHA-512',
      'kafka.sasl.username': 'observatory',
      'kafka.sasl.passwordSecret.name': 'kafka-user',
    };
    expect(() => render(secured)).toThrow(
      /consumer\.autoscaling\.keda\.authenticationRef: name a TriggerAuthentication/,
    );
    expect(() => render({ ...KEDA, 'kafka.tls.enabled': true })).toThrow(/authenticationRef/);
    const [scaled] = find(
      render({ ...secured, 'consumer.autoscaling.keda.authenticationRef': 'kafka-keda' }),
      'ScaledObject',
    );
    expect(scaled?.spec.triggers[0].authenticationRef).toEqual({ name: 'kafka-keda' });
  });
});
