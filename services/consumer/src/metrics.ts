/**
 * The consumer's meters (the README's Metrics table), registered on the service registry.
 * Gauges that a probe feeds (`consume_group_lag`, `consume_running`, `consume_checkpoint_divergence`,
 * `dlq_depth`, `partition_default_rows`) are set by `operations/probe.ts`; `dlq_oldest_age_seconds`
 * by `dlq/age.ts`.
 */
import {
  cappedLabel,
  createDistribution,
  createTimer,
  ladders,
} from '@event-observatory/service-kit/metrics';
import { Counter, Gauge, type Registry } from 'prom-client';
import { POISON_REASONS, type PoisonReason } from './write/decode.js';

export type BatchOutcome = 'success' | 'failure' | 'duplicate' | 'skipped';
export type LifecycleCommand = 'start' | 'stop' | 'pause' | 'resume' | 'restart' | 'clear-checkpoints';
export type CommandOutcome = 'success' | 'failure' | 'skipped';

export function createConsumerMetrics(registry: Registry) {
  const typeTag = cappedLabel(50);
  const persisted = new Counter({
    name: 'consume_records_persisted_total',
    help: 'Rows inserted into the event store, by CloudEvents type (50 type values at most)',
    labelNames: ['type'],
    registers: [registry],
  });
  const poison = new Counter({
    name: 'consume_records_poison_total',
    help: 'Records dead-lettered, by closed-set reason',
    labelNames: ['reason'],
    registers: [registry],
  });
  for (const reason of POISON_REASONS) poison.inc({ reason }, 0);
  const lifecycle = new Counter({
    name: 'consume_lifecycle_commands_total',
    help: 'Lifecycle commands received on the admin listener',
    labelNames: ['command', 'outcome'],
    registers: [registry],
  });
  const replayOps = new Counter({
    name: 'dlq_replay_operations_total',
    help: 'Dead-letter replay requests (a dry-run plan counts as skipped)',
    labelNames: ['outcome'],
    registers: [registry],
  });
  const replayRecords = new Counter({
    name: 'dlq_replay_records_total',
    help: 'Dead letters planned (skipped) or re-published (success/failure) by replay',
    labelNames: ['outcome'],
    registers: [registry],
  });
  const gauge = (name: string, help: string, labelNames: string[] = []) =>
    new Gauge({ name, help, labelNames, registers: [registry] });
  const metrics = {
    batchSize: createDistribution(registry, {
      name: 'consume_batch_size',
      help: 'Records per grouped batch',
      buckets: ladders.batchSize,
    }),
    batchLatency: createTimer<'outcome'>(registry, {
      name: 'consume_batch_latency_seconds',
      help: 'Time to decode, write and dead-letter one grouped batch',
      labelNames: ['outcome'],
      buckets: ladders.consumeBatchLatency,
    }),
    decodeDuration: createTimer(registry, {
      name: 'consume_decode_duration_seconds',
      help: 'Time to decode one record',
      buckets: ladders.decode,
    }),
    pastRetention: new Counter({
      name: 'consume_records_past_retention_total',
      help: 'Records dead-lettered (reason unpersistable) because their time is before the end of the newest month retention detached',
      registers: [registry],
    }),
    duplicates: new Counter({
      name: 'consume_records_duplicate_total',
      help: 'Records skipped by ON CONFLICT DO NOTHING (already stored)',
      registers: [registry],
    }),
    groupLag: gauge(
      'consume_group_lag',
      'Records behind the log end, per partition with a committed offset',
      ['group', 'topic', 'partition'],
    ),
    dlqDepth: gauge('dlq_depth', 'Dead-letter records retained (upper bound); NaN when unreachable'),
    dlqOldestAge: gauge(
      'dlq_oldest_age_seconds',
      'Age of the oldest dead letter not yet replayed, per dead-letter partition; 0 when none waits',
      ['partition'],
    ),
    checkpointDivergence: gauge(
      'consume_checkpoint_divergence',
      'Offsets committed to the broker beyond the stored checkpoints; 0 is healthy, NaN when unreported',
    ),
    defaultRows: gauge('partition_default_rows', 'Rows in events.cloud_event_default; must be 0'),
    persisted(type: string, n: number) {
      if (n > 0 && typeTag.admit(type)) persisted.inc({ type }, n);
    },
    poison(reason: PoisonReason, n = 1) {
      poison.inc({ reason }, n);
    },
    lifecycle(command: LifecycleCommand, outcome: CommandOutcome) {
      lifecycle.inc({ command, outcome });
    },
    replayOperation(outcome: CommandOutcome) {
      replayOps.inc({ outcome });
    },
    replayRecords(outcome: CommandOutcome, n: number) {
      if (n > 0) replayRecords.inc({ outcome }, n);
    },
  };
  for (const outcome of ['success', 'failure', 'duplicate', 'skipped'] as const)
    metrics.batchLatency.zero({ outcome });
  metrics.dlqDepth.set(Number.NaN);
  metrics.checkpointDivergence.set(Number.NaN);
  metrics.defaultRows.set(Number.NaN);
  return metrics;
}

export type ConsumerMetrics = ReturnType<typeof createConsumerMetrics>;
