/**
 * `consumer.autoscaling.keda`: a KEDA ScaledObject that scales the consumer Deployment on its
 * group's lag (KEDA's Kafka scaler), rendered only when enabled (needs KEDA's CRDs). KEDA makes
 * and owns an HPA from it, so the Deployment then has no replicas field (http-service.ts). The
 * partitions are the consumers' ceiling: more pods than partitions would idle, so the template
 * refuses a maxReplicas above pipeline.partitions.
 */
import { ApiObject } from 'cdk8s';
import type { Construct } from 'constructs';
import { kafkaBootstrap } from '../bundled.js';
import { kafkaSasl } from '../credentials.js';
import { onlyIf, releaseName, scalar, spreadAt, value, valueText } from '../helm.js';
import { metadata } from './common.js';

const KEDA = '.Values.consumer.autoscaling.keda';
export const CONSUMER_KEDA_ENABLED = `${KEDA}.enabled`;

/**
 * Values the template refuses, written before maxReplicaCount (a template's `ternary` evaluates
 * both branches, so a `fail` cannot sit inside one). With TLS or SASL (the bundled Kafka's login too) the scaler's credentials
 * come from a TriggerAuthentication the operator names: the chart does not copy Kafka secrets
 * into KEDA's reach by itself.
 */
const REFUSALS = [
  `{{ if gt (int ${KEDA}.maxReplicas) (int .Values.pipeline.partitions) }}{{ fail (printf "consumer.autoscaling.keda.maxReplicas (%v) is above pipeline.partitions (%v): a consumer pod beyond the partitions would idle" ${KEDA}.maxReplicas .Values.pipeline.partitions) }}{{ end }}`,
  `{{ if gt (int ${KEDA}.minReplicas) (int ${KEDA}.maxReplicas) }}{{ fail "consumer.autoscaling.keda.minReplicas is above maxReplicas" }}{{ end }}`,
  `{{ if and (or .Values.kafka.tls.enabled ${kafkaSasl('Mechanism')}) (not ${KEDA}.authenticationRef) }}{{ fail "consumer.autoscaling.keda.authenticationRef: name a TriggerAuthentication with the Kafka credentials (kafka.tls or kafka.sasl is on, or the bundled Kafka's SCRAM login)" }}{{ end }}`,
].join('');

export function consumerScaledObject(scope: Construct): void {
  const scaled = new ApiObject(scope, 'consumer-scaledobject', {
    apiVersion: 'keda.sh/v1alpha1',
    kind: 'ScaledObject',
    metadata: metadata('consumer'),
    spec: {
      scaleTargetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: releaseName('consumer') },
      minReplicaCount: value<number>('consumer.autoscaling.keda.minReplicas'),
      maxReplicaCount: scalar<number>(`${REFUSALS}{{ ${KEDA}.maxReplicas | toJson }}`),
      pollingInterval: value<number>('consumer.autoscaling.keda.pollingIntervalSeconds'),
      advanced: {
        horizontalPodAutoscalerConfig: {
          behavior: {
            scaleDown: {
              stabilizationWindowSeconds: value<number>(
                'consumer.autoscaling.keda.scaleDownStabilizationSeconds',
              ),
            },
          },
        },
      },
      triggers: [
        {
          type: 'kafka',
          metadata: {
            bootstrapServers: kafkaBootstrap(),
            consumerGroup: value('kafka.groupId'),
            topic: value('pipeline.topic'),
            lagThreshold: valueText('consumer.autoscaling.keda.lagThreshold'),
            // A group with no committed offset yet (a new install): its lag counts from the start.
            offsetResetPolicy: 'earliest',
            // Never more replicas than partitions with lag-free partitions idling.
            allowIdleConsumers: 'false',
          },
        },
      ],
    },
  });
  spreadAt(
    scaled,
    '/spec/triggers/0',
    `(ternary (dict "authenticationRef" (dict "name" ${KEDA}.authenticationRef)) (dict) (ne ${KEDA}.authenticationRef ""))`,
  );
  onlyIf(scaled, CONSUMER_KEDA_ENABLED);
}
