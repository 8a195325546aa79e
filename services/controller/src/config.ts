/**
 * Configuration of the controller, every variable with its default (README has the table). The
 * `BROKER_*` settings are read by the broker package; the API server comes from `KUBECONFIG`, else
 * the pod's service account, else `~/.kube/config` (client-node's `loadFromDefault`).
 */
import { hostname } from 'node:os';
import { bootstrapList, readAdminBrokerConfig } from '@event-observatory/broker';
import {
  bool,
  configProblem,
  custom,
  duration,
  type Env,
  int,
  list,
  num,
  readConfig,
  str,
  url,
} from '@event-observatory/service-kit/config';
import { normalServer } from './model/cluster.js';
import { parseTopicTemplate } from './model/naming.js';
import { DEFAULT_RESERVED_TOPICS } from './model/safety.js';

/** `pattern` or `namespace/pipeline:pattern`, comma-separated; the error names the entry. */
function parseAdoptable(raw: string): string[] {
  const entries = raw
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '');
  for (const entry of entries)
    if (!/^([a-z0-9-]+\/[a-z0-9.-]+:)?[a-zA-Z0-9._*-]+$/.test(entry))
      throw configProblem(
        `${JSON.stringify(entry)} is neither a topic pattern nor namespace/pipeline:pattern`,
      );
  return entries;
}

/**
 * `CONTROLLER_ALLOWED_BOOTSTRAP`: the Kafka clusters a Pipeline may name, `;` between clusters and
 * `,` between the servers of one (without `;`: one cluster); a server in two clusters is an error.
 */
function parseAllowedClusters(raw: string): string[][] {
  const entries = raw
    .split(';')
    .map((s) => s.trim())
    .filter((s) => s !== '');
  if (entries.length === 0)
    throw configProblem("expected host:port items, ',' between a cluster's servers and ';' between clusters");
  const clusters = entries.map((entry) => bootstrapList(entry));
  const clusterOf = new Map<string, number>();
  clusters.forEach((servers, i) => {
    for (const server of servers.map(normalServer)) {
      if ((clusterOf.get(server) ?? i) !== i)
        throw configProblem(`${server} is in two clusters: a server belongs to one Kafka cluster`);
      clusterOf.set(server, i);
    }
  });
  return clusters;
}

export function readControllerConfig(env: Env) {
  const own = readConfig(env, {
    serviceVersion: str('SERVICE_VERSION').default('0.0.0-unknown'),
    logLevel: str('LOG_LEVEL').default('info'),
    httpHost: str('HTTP_HOST').default('0.0.0.0'),
    httpPort: int('HTTP_PORT', { min: 0, max: 65535 }).default(8080),
    kafkaTimeoutMs: duration('CONTROLLER_KAFKA_TIMEOUT', { min: 100 }).default('10s'),
    apiTimeoutMs: duration('CONTROLLER_API_TIMEOUT', { min: 100 }).default('30s'),
    watchNamespaces: list('CONTROLLER_WATCH_NAMESPACE').default([]),
    topicNameTemplate: custom('CONTROLLER_TOPIC_NAME_TEMPLATE', (raw) => parseTopicTemplate(raw)).optional(),
    reservedTopics: list('CONTROLLER_RESERVED_TOPICS').default(DEFAULT_RESERVED_TOPICS),
    adoptableTopics: custom('CONTROLLER_ADOPTABLE_TOPICS', parseAdoptable).default([]),
    flowPeriodMs: duration('CONTROLLER_FLOW_PERIOD', { min: 100 }).default('30s'),
    flowMaxLag: int('CONTROLLER_FLOW_MAX_LAG', { min: 0 }).default(1000),
    flowMaxDeadLettersPerMinute: num('CONTROLLER_FLOW_MAX_DEAD_LETTERS_PER_MINUTE', { min: 0 }).default(0),
    flowWriteRatio: num('CONTROLLER_FLOW_WRITE_RATIO', { min: 0, max: 1 }).default(0.1),
    flowMaxWriteIntervalMs: duration('CONTROLLER_FLOW_MAX_WRITE_INTERVAL', { min: 100 }).default('10m'),
    storeUrl: url('CONTROLLER_STORE_URL', { protocols: ['postgres:', 'postgresql:'] })
      .secret()
      .optional(),
    deletionTimeoutMs: duration('CONTROLLER_DELETION_TIMEOUT', { min: 0 }).default('5m'),
    ignoredConfigs: list('CONTROLLER_IGNORED_CONFIGS').default([
      'leader.replication.throttled.replicas',
      'follower.replication.throttled.replicas',
    ]),
    resyncMs: duration('CONTROLLER_RESYNC_PERIOD', { min: 1000 }).default('5m'),
    watchTimeoutMs: duration('CONTROLLER_WATCH_TIMEOUT', { min: 1000 }).default('5m'),
    backoffMinMs: duration('CONTROLLER_BACKOFF_MIN', { min: 1 }).default('1s'),
    backoffMaxMs: duration('CONTROLLER_BACKOFF_MAX', { min: 1 }).default('5m'),
    leaseName: str('CONTROLLER_LEASE_NAME').default('observatory-controller'),
    controllerName: str('CONTROLLER_NAME').optional(),
    leaseNamespace: str('CONTROLLER_LEASE_NAMESPACE').optional(),
    leaseDurationMs: duration('CONTROLLER_LEASE_DURATION', { min: 1000 }).default('15s'),
    renewDeadlineMs: duration('CONTROLLER_RENEW_DEADLINE', { min: 500 }).default('10s'),
    retryPeriodMs: duration('CONTROLLER_RETRY_PERIOD', { min: 100 }).default('2s'),
    releaseLease: bool('CONTROLLER_LEASE_RELEASE_ON_SHUTDOWN').default(true),
    podName: str('POD_NAME').optional(),
    podNamespace: str('POD_NAMESPACE').optional(),
    allowedClusters: custom('CONTROLLER_ALLOWED_BOOTSTRAP', parseAllowedClusters).optional(),
  });
  const broker = readAdminBrokerConfig(env, 'observatory-controller');
  if (!(own.retryPeriodMs < own.renewDeadlineMs && own.renewDeadlineMs < own.leaseDurationMs)) {
    throw new Error(
      'CONTROLLER_RETRY_PERIOD < CONTROLLER_RENEW_DEADLINE < CONTROLLER_LEASE_DURATION must hold, so a leader steps down before another can take over',
    );
  }
  /** Clusters a Pipeline may name: by default only the controller's own. */
  const allowedClusters = own.allowedClusters ?? [broker.bootstrapServers];
  return {
    ...own,
    allowedClusters,
    /** Lease holder identity: the pod name, else host name and a random suffix. */
    identity: own.podName ?? `${hostname()}-${Math.random().toString(36).slice(2, 8)}`,
    leaseNamespace: own.leaseNamespace ?? own.podNamespace ?? 'default',
    /** The stamp of its Pipelines: `namespace/release`; by default its Lease's `namespace/name`, as unique. */
    controllerName:
      own.controllerName ?? `${own.leaseNamespace ?? own.podNamespace ?? 'default'}/${own.leaseName}`,
    /** The release's namespace: where topic names stay as declared by default. */
    ownNamespace: own.podNamespace ?? own.leaseNamespace ?? 'default',
    topicRules: { reserved: own.reservedTopics, adoptable: own.adoptableTopics },
    /** A watch silent for its timeout plus this much is presumed dead. */
    stallMs: own.watchTimeoutMs + 10_000,
    broker,
  };
}

export type ControllerConfig = ReturnType<typeof readControllerConfig>;
