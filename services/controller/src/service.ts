/**
 * Builds the controller from configuration and explicit dependencies: the API client, the Kafka
 * handler, the reconciler, the leader elector and the HTTP app. `main.ts` adds the listener and
 * signal handling; the cluster suite calls this directly to run controllers in-process.
 */
import { down, type Logger, up } from '@event-observatory/service-kit';
import { createReadPool, newestIngestedAt, scopedPool, WHOLE_SCOPE } from '@event-observatory/store';
import type { KubeConfig } from '@kubernetes/client-node';
import type { Registry } from 'prom-client';
import { buildApp } from './app.js';
import type { ControllerConfig } from './config.js';
import { Controller } from './controller.js';
import { FlowObserver } from './flow-observer.js';
import { KafkaHandler } from './kafka-handler.js';
import { KubeApi } from './kube/api.js';
import { LeaderElector } from './kube/leader.js';
import { createControllerMetrics } from './metrics.js';
import { releaseNamespaceFirst } from './model/naming.js';
import { Reconciler } from './reconciler.js';

export interface ControllerServiceOptions {
  config: ControllerConfig;
  kubeConfig: KubeConfig;
  registry: Registry;
  logger: Logger;
}

export type ControllerService = ReturnType<typeof createControllerService>;

export function createControllerService(opts: ControllerServiceOptions) {
  const { config, logger, registry } = opts;
  const metrics = createControllerMetrics(registry);
  const api = new KubeApi(opts.kubeConfig, config.identity, config.apiTimeoutMs);
  const kafka = new KafkaHandler({
    clientId: config.broker.clientId,
    requestTimeoutMs: config.kafkaTimeoutMs,
    security: config.broker.security,
    logger,
  });
  const backoff = { initialMs: config.backoffMinMs, maxMs: config.backoffMaxMs, randomFactor: 0.1 };
  // Read-only, one connection: one query a flow period. Every event counts for freshness: the
  // reader role sees none without a scope (row visibility, packages/store README).
  const store = config.storeUrl
    ? scopedPool(createReadPool({ url: config.storeUrl, max: 1 }), WHOLE_SCOPE)
    : undefined;
  const observer = new FlowObserver({
    api,
    kafka,
    defaultServers: config.broker.bootstrapServers,
    allowedClusters: config.allowedClusters,
    home: releaseNamespaceFirst(config.topicNameTemplate, config.ownNamespace),
    topicRules: config.topicRules,
    thresholds: { maxLag: config.flowMaxLag, maxDeadLettersPerMinute: config.flowMaxDeadLettersPerMinute },
    rule: { ratio: config.flowWriteRatio, maxIntervalMs: config.flowMaxWriteIntervalMs },
    ...(store ? { newestStored: async () => (await newestIngestedAt(store))?.toISOString() } : {}),
    log: logger,
  });
  const controller = new Controller({
    api,
    reconciler: new Reconciler({
      api,
      kafka,
      defaultServers: config.broker.bootstrapServers,
      allowedClusters: config.allowedClusters,
      controllerName: config.controllerName,
      topicNameTemplate: config.topicNameTemplate,
      ownNamespace: config.ownNamespace,
      topicRules: config.topicRules,
      ignoredConfigs: config.ignoredConfigs,
      deletionTimeoutMs: config.deletionTimeoutMs,
      flow: observer,
      onStatusWrite: metrics.statusWritten,
      log: logger,
    }),
    metrics,
    namespaces: config.watchNamespaces,
    flow: { observer, periodMs: config.flowPeriodMs },
    defaultServers: config.broker.bootstrapServers,
    resyncMs: config.resyncMs,
    watchTimeoutMs: config.watchTimeoutMs,
    stallMs: config.stallMs,
    backoff,
    log: logger,
  });
  const state = { leader: false, apiAnswered: false };
  const elector = new LeaderElector({
    api,
    namespace: config.leaseNamespace,
    name: config.leaseName,
    identity: config.identity,
    leaseDurationMs: config.leaseDurationMs,
    renewDeadlineMs: config.renewDeadlineMs,
    retryPeriodMs: config.retryPeriodMs,
    releaseOnShutdown: config.releaseLease,
    log: logger,
    onRole: (leader) => {
      state.leader = leader;
      metrics.leader(leader);
    },
    onAttempt: (answered) => {
      state.apiAnswered = answered;
    },
  });
  const app = buildApp({
    logger,
    checks: {
      kubernetes: () => (state.apiAnswered ? up('UP') : down('unreachable')),
      role: () => up(state.leader ? 'leader' : 'standby'),
    },
  });
  const stopping = new AbortController();
  let running: Promise<void> | undefined;

  return {
    app,
    identity: config.identity,
    /** Whether this replica leads now. */
    isLeader: () => state.leader,
    /** Starts campaigning; the leader runs the controller. */
    start() {
      running ??= elector.run(stopping.signal, (signal) => controller.run(signal));
    },
    /** Stops reconciling and releases the lease (if held). */
    async stop() {
      stopping.abort();
      await running;
    },
    /** Everything: the controller, then the Kafka clients and the store pool. */
    async close() {
      stopping.abort();
      await running;
      await kafka.close();
      await store?.end();
    },
    /** Closes the Kafka clients and the store pool (after `stop`). */
    async closeKafka() {
      await kafka.close();
      await store?.end();
    },
  };
}
