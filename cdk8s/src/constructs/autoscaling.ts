/**
 * A HorizontalPodAutoscaler (autoscaling/v2, on CPU) for a stateless component, rendered when
 * `.Values.<component>.autoscaling.enabled`; its Deployment then has no replicas field, so an
 * upgrade never resets what the HPA chose. A minReplicas above maxReplicas is refused at render,
 * naming both values, as the KEDA path does (else the API server refuses the HPA mid-install, after
 * the migration hook and the objects before it).
 */
import * as k8s from 'cdk8s-plus-34/lib/imports/k8s.js';
import { Construct } from 'constructs';
import { onlyIf, releaseName, scalar, value } from '../helm.js';
import { metadata } from './common.js';

export class Autoscaler extends Construct {
  constructor(scope: Construct, component: string) {
    super(scope, `${component}-autoscaler`);
    const own = `${component}.autoscaling`;
    const hpa = new k8s.KubeHorizontalPodAutoscalerV2(this, `${component}-hpa`, {
      metadata: metadata(component),
      spec: {
        scaleTargetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: releaseName(component) },
        minReplicas: value<number>(`${own}.minReplicas`),
        maxReplicas: scalar<number>(
          `{{ if gt (int .Values.${own}.minReplicas) (int .Values.${own}.maxReplicas) }}{{ fail (printf "${own}.minReplicas (%v) is above ${own}.maxReplicas (%v)" .Values.${own}.minReplicas .Values.${own}.maxReplicas) }}{{ end }}{{ .Values.${own}.maxReplicas | toJson }}`,
        ),
        metrics: [
          {
            type: 'Resource',
            resource: {
              name: 'cpu',
              target: {
                type: 'Utilization',
                averageUtilization: value<number>(`${own}.targetCPUUtilizationPercentage`),
              },
            },
          },
        ],
        behavior: {
          scaleDown: { stabilizationWindowSeconds: value<number>(`${own}.scaleDownStabilizationSeconds`) },
        },
      },
    });
    onlyIf(hpa, `.Values.${own}.enabled`);
  }
}
