/**
 * Builds the consumer service from configuration: pools, migrations, the broker's clients (group
 * admin, dead-letter producer), retained range, processor, stream, probe, lifecycle, DLQ admin and
 * the admin app.
 * `main.ts` adds the listener, telemetry and signal handling; tests call this directly.
 */

import {
  brokerFailureReason,
  createConsumerClients,
  DeadLetterProducer,
  GroupAdmin,
} from '@event-observatory/broker';
import { createVerifier, down, type Logger, up } from '@event-observatory/service-kit';
import type { AuthConfig } from '@event-observatory/service-kit/auth';
import {
  ADVISORY_LOCKS,
  createWritePool,
  databaseAnswers,
  describeStoreFailure,
  migrate,
  readCheckpoints,
  registerMaintenanceMeters,
  upsertCheckpoints,
  withSessionLock,
} from '@event-observatory/store';
import type { Registry } from 'prom-client';
import { buildApp } from './app.js';
import type { ConsumerConfig } from './config.js';
import { DlqAdmin } from './dlq/admin.js';
import { DeadLetterAge } from './dlq/age.js';
import { createConsumerMetrics } from './metrics.js';
import { Lifecycle } from './operations/lifecycle.js';
import { Probe } from './operations/probe.js';
import { ConsumerStream } from './stream/stream.js';
import { RestartPolicy, type RestartPolicyOptions } from './stream/supervision.js';
import { BatchProcessor } from './write/processor.js';
import { RetainedRange } from './write/retained-range.js';
import { EventWriter } from './write/writer.js';

export interface ServiceOptions {
  config: ConsumerConfig;
  databaseUrl: string;
  auth: AuthConfig;
  registry: Registry;
  logger: Logger;
  /** The admin API's audit lines; default `logger` (`main.ts` gives one at info whatever LOG_LEVEL says). */
  audit?: Logger;
  /** Stream supervision; default the spec's policy (1 s..30 s, 0.2, 50 restarts in 10 minutes). */
  restartPolicy?: RestartPolicyOptions;
}

export type ConsumerService = Awaited<ReturnType<typeof createConsumerService>>;

export async function createConsumerService(opts: ServiceOptions) {
  const { config, logger, registry } = opts;
  const { topic, dlqTopic, groupId: group } = config.broker;
  // First: an admin key set that cannot be fetched refuses the start. The admin API's decisions are
  // not counted (only the ingest API's are); the key set meters are.
  const verifier = opts.auth.enabled
    ? createVerifier(opts.auth, { registry, countDecisions: false, logger })
    : null;
  await verifier?.start();
  if (config.migrateOnBoot) {
    const result = await migrate({
      url: opts.databaseUrl,
      ...(config.migrationsDir !== undefined && { dir: config.migrationsDir }),
      log: (msg, fields) => logger.info(fields ?? {}, msg),
    });
    logger.info({ applied: result.applied.length, already: result.alreadyApplied.length }, 'migrations done');
  }
  const pool = createWritePool({ url: opts.databaseUrl, registry, ...config.writePool });
  registerMaintenanceMeters(registry, pool); // the CronJobs' meters, from events.maintenance_run (services/jobs)
  const metrics = createConsumerMetrics(registry);
  const clients = createConsumerClients(config.broker, {
    requestTimeoutMs: config.lagRequestTimeoutMs,
    logger,
  });
  const deadLetters = new DeadLetterProducer(clients, { topic, dlqTopic });
  const admin = new GroupAdmin(clients);
  const brokerReason = (err: unknown) => brokerFailureReason(err, config.broker.security);
  await Promise.all([deadLetters.connect(), admin.connect()]).catch((err) => {
    logger.warn({ err: brokerReason(err) }, 'broker not reachable at boot; will retry');
  });
  const retainedRange = new RetainedRange({ pool, intervalMs: config.retainedRangeRefreshMs, log: logger });
  const processor = new BatchProcessor({
    sink: new EventWriter(pool, group),
    deadLetters,
    metrics,
    group,
    writeAttempts: config.writeAttempts,
    retryDelayMs: config.retryDelayMs,
    log: logger,
    retainedFrom: () => retainedRange.startMs,
  });
  const stream = new ConsumerStream({
    clients,
    topic,
    groupId: group,
    batchSize: config.batchSize,
    batchWindowMs: config.batchWindowMs,
    drainTimeoutMs: config.drainTimeoutMs,
    processor,
    log: logger,
    policy: new RestartPolicy(opts.restartPolicy),
    holdAfterWriteMs: config.testHoldAfterWriteMs,
    writeConcurrency: config.writeConcurrency,
  });
  const probe = new Probe({
    admin,
    pool,
    metrics,
    registry,
    groupId: group,
    topic,
    dlqTopic,
    intervalMs: config.lagRefreshMs,
    requestTimeoutMs: config.lagRequestTimeoutMs,
    // A stream stopped for good keeps reporting 1: the spec makes lag the only sign of it, so
    // the lag alert (ConsumerLagGrowing) is what pages, not a gauge that would read like a pause.
    consuming: () => stream.consuming || stream.state === 'failed',
  });
  const lifecycle = new Lifecycle({
    stream,
    probe,
    metrics,
    pool,
    admin,
    groupId: group,
    topic,
  });
  const dlq = new DlqAdmin({
    clients,
    admin,
    deadLetters,
    metrics,
    dlqTopic,
    groupId: group,
    maxRecords: config.replayMaxRecords,
    lock: (work) => withSessionLock(pool, ADVISORY_LOCKS.dlqReplay, work),
    positions: {
      read: (replayGroup) => readCheckpoints(pool, replayGroup, dlqTopic),
      write: (replayGroup, offsets) =>
        upsertCheckpoints(
          pool,
          replayGroup,
          [...offsets].map(([partition, next]) => ({ topic: dlqTopic, partition, nextOffset: String(next) })),
        ),
    },
  });
  const dlqAge = new DeadLetterAge({
    read: () => dlq.oldestPending(),
    gauge: metrics.dlqOldestAge,
    intervalMs: config.dlqAgeIntervalMs,
  });
  const { app, adminApp } = buildApp({
    lifecycle,
    dlq,
    verifier,
    replayMaxRecords: config.replayMaxRecords,
    logger,
    audit: opts.audit ?? logger,
    checks: {
      broker: async () => {
        try {
          await admin.ping();
        } catch (err) {
          return down(`unreachable: ${brokerReason(err)}`);
        }
        // Reachable, but not acknowledging a batch's dead letters (the topic refused, or an
        // authorisation): the batch and its partitions wait however long that lasts.
        const refused = processor.deadLetterOutage;
        return refused === undefined ? up('UP') : down('dead letters refused', refused);
      },
      database: async () => {
        try {
          if (!(await databaseAnswers(pool))) return down('unreachable: no answer to a trivial statement');
          // Reachable, but refusing the writes (read-only after a failover, disk full): say so.
          const refused = processor.storeOutage;
          if (refused) return down('writes refused', describeStoreFailure(refused));
          return up('UP');
        } catch (err) {
          return down(`unreachable: ${(err as Error).message}`);
        }
      },
      ...verifier?.checks,
    },
  });

  return {
    app,
    adminApp,
    stream,
    probe,
    dlqAge,
    retainedRange,
    lifecycle,
    metrics,
    pool,
    async start() {
      probe.start();
      dlqAge.start();
      // The bound before the first batch (unless the reading fails): only a detach since the last
      // reading lets an event past retention into the default partition.
      await retainedRange.start();
      if (config.autoStart) await stream.start();
      probe.reportRunning();
    },
    /** What shutdown closes after the listener, in the spec's order (`shutdown.ts` bounds each). */
    closers: {
      consumer: async () => {
        probe.stop();
        dlqAge.stop();
        retainedRange.stop();
        await stream.stop();
      },
      deadLetterProducer: () => deadLetters.disconnect(),
      adminClient: () => admin.disconnect(),
      pools: () => pool.end(),
    },
    /** Closes everything in order (tests; the process uses `consumerShutdown`). */
    async close() {
      const { consumer, deadLetterProducer, adminClient, pools } = this.closers;
      for (const close of [consumer, deadLetterProducer, adminClient, pools]) await close();
    },
  };
}
