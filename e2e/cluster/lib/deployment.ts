/**
 * The Deployment the cluster suites run a platform image as: labelled `app: <name>`, one container
 * of that name serving HTTP on 8080, non-root with a read-only root filesystem, a readiness probe
 * on `/health/ready` (a liveness probe on `/health/live` when asked), small requests and a short
 * grace period. What differs between suites (image, replicas, env, probe timing) is a parameter.
 */
import type { Manifest } from './kube.js';

export interface EnvVar {
  name: string;
  value?: string;
  valueFrom?: Record<string, unknown>;
}

export interface ServiceDeploymentOptions {
  /** Deployment, container and `app` label. */
  name: string;
  image: string;
  replicas: number;
  env: EnvVar[];
  /** Readiness probe timing; a liveness probe (every 5 s) only with `liveness`. */
  readiness: { periodSeconds: number; failureThreshold?: number };
  liveness?: boolean;
  cpuRequest?: string;
  serviceAccountName?: string;
}

/** `{ NAME: 'value' }` as a container's env list. */
export function envList(values: Record<string, string>): EnvVar[] {
  return Object.entries(values).map(([name, value]) => ({ name, value }));
}

export function serviceDeployment(opts: ServiceDeploymentOptions): Manifest {
  const labels = { app: opts.name };
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: opts.name, labels },
    spec: {
      replicas: opts.replicas,
      selector: { matchLabels: labels },
      template: {
        metadata: { labels },
        spec: {
          ...(opts.serviceAccountName ? { serviceAccountName: opts.serviceAccountName } : {}),
          securityContext: { runAsNonRoot: true },
          terminationGracePeriodSeconds: 5,
          containers: [
            {
              name: opts.name,
              image: opts.image,
              imagePullPolicy: 'IfNotPresent',
              ports: [{ name: 'http', containerPort: 8080 }],
              env: opts.env,
              readinessProbe: { httpGet: { path: '/health/ready', port: 'http' }, ...opts.readiness },
              ...(opts.liveness
                ? { livenessProbe: { httpGet: { path: '/health/live', port: 'http' }, periodSeconds: 5 } }
                : {}),
              resources: {
                requests: { cpu: opts.cpuRequest ?? '50m', memory: '64Mi' },
                limits: { memory: '256Mi' },
              },
              securityContext: { allowPrivilegeEscalation: false, readOnlyRootFilesystem: true },
            },
          ],
        },
      },
    },
  };
}
