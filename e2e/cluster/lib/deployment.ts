/**
 * The Deployment the cluster suites run a platform image as: labelled `app: <name>`, one container
 * of that name serving HTTP on 8080, non-root with a read-only root filesystem, a readiness probe
 * on `/health/ready` (a liveness probe on `/health/live` when asked), small requests and a short
 * grace period. What differs between suites (image, replicas, env, probe timing) is a parameter.
 */
import { STARTUP_PROBE_TIMING } from '@event-observatory/cdk8s/probes';
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
  /** Readiness probe timing; a liveness probe (every 5 s, after a startup probe) only with `liveness`. */
  readiness: { periodSeconds: number; failureThreshold?: number };
  liveness?: boolean;
  cpuRequest?: string;
  serviceAccountName?: string;
}

/** `{ NAME: 'value' }` as a container's env list. */
export function envList(values: Record<string, string>): EnvVar[] {
  return Object.entries(values).map(([name, value]) => ({ name, value }));
}

const LIVE = { httpGet: { path: '/health/live', port: 'http' } };

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
              // The chart's startup probe: liveness begins once it passed, so a start slowed by the
              // busy node (a small CPU request) is not restarted.
              ...(opts.liveness
                ? {
                    startupProbe: { ...LIVE, ...STARTUP_PROBE_TIMING },
                    livenessProbe: { ...LIVE, periodSeconds: 5, timeoutSeconds: 3 },
                  }
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

export interface IngestOptions {
  /** Deployment, Service and `app` label. */
  name: string;
  image: string;
  bootstrapServers: string;
  topic: string;
  /** AUTH_SECRET, from the Secret `ingest-auth` made here. */
  authSecret: string;
  /** More environment (LOG_LEVEL, BROKER_PROBE_INTERVAL, ...). */
  env: Record<string, string>;
  readiness: ServiceDeploymentOptions['readiness'];
  liveness?: boolean;
  /** NodePort to reach it from this machine; ClusterIP by default. */
  serviceType?: 'NodePort';
}

/** The ingest image publishing into `topic` of `bootstrapServers`: its Secret, one replica, its Service (port 8080). */
export function ingestManifests(opts: IngestOptions): Manifest[] {
  return [
    {
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: 'ingest-auth' },
      stringData: { AUTH_SECRET: opts.authSecret },
    },
    serviceDeployment({
      name: opts.name,
      image: opts.image,
      replicas: 1,
      env: [
        ...envList({
          BROKER_BOOTSTRAP_SERVERS: opts.bootstrapServers,
          BROKER_TOPIC: opts.topic,
          ...opts.env,
        }),
        { name: 'AUTH_SECRET', valueFrom: { secretKeyRef: { name: 'ingest-auth', key: 'AUTH_SECRET' } } },
      ],
      readiness: opts.readiness,
      ...(opts.liveness ? { liveness: true } : {}),
    }),
    {
      apiVersion: 'v1',
      kind: 'Service',
      metadata: { name: opts.name },
      spec: {
        ...(opts.serviceType ? { type: opts.serviceType } : {}),
        selector: { app: opts.name },
        ports: [{ name: 'http', port: 8080, targetPort: 'http' }],
      },
    },
  ];
}
