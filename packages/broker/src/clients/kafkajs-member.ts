/**
 * The group member with kafkajs: `eachBatch` with `partitionsConsumedConcurrently`, no autocommit,
 * nothing auto-resolved; a batch's commit goes through the payload's `commitOffsetsIfNecessary`.
 */
import type { Consumer, EachBatchPayload, Kafka, KafkaMessage } from 'kafkajs';
import {
  type GroupMember,
  type GroupRunOptions,
  groupSettings,
  type InboundRecord,
  type MemberSettings,
  type PartitionBatch,
} from './group-member.js';

export class KafkajsMember implements GroupMember {
  private readonly consumer: Consumer;
  private topic = '';

  constructor(kafka: Kafka, settings: MemberSettings) {
    this.consumer = kafka.consumer({
      ...groupSettings(settings.sessionTimeoutMs),
      groupId: settings.groupId,
      maxWaitTimeInMs: settings.maxWaitTimeInMs,
      // kafkajs gives up after its retries and crashes the consumer instead of restarting it: the
      // caller supervises restarts.
      retry: { retries: 5, restartOnFailure: async () => false },
    });
  }

  async run(opts: GroupRunOptions): Promise<void> {
    this.topic = opts.topic;
    try {
      await this.consumer.connect();
      await this.consumer.subscribe({ topics: [opts.topic], fromBeginning: true });
      await this.consumer.run({
        autoCommit: false,
        eachBatchAutoResolve: false,
        partitionsConsumedConcurrently: opts.concurrency,
        eachBatch: (payload) => opts.onBatch(toBatch(payload)),
      });
    } catch (err) {
      await this.consumer.disconnect().catch(() => {});
      throw err;
    }
  }

  pause(): void {
    this.consumer.pause([{ topic: this.topic }]);
  }

  resume(): void {
    this.consumer.resume([{ topic: this.topic }]);
  }

  async stop(): Promise<void> {
    await this.consumer.stop();
    await this.consumer.disconnect();
  }

  onCrash(listener: (error: Error) => void): void {
    this.consumer.on(this.consumer.events.CRASH, (event) => listener(event.payload.error));
  }
}

function toBatch(payload: EachBatchPayload): PartitionBatch {
  const { batch, resolveOffset, heartbeat, isRunning, isStale, commitOffsetsIfNecessary } = payload;
  return {
    topic: batch.topic,
    partition: batch.partition,
    records: batch.messages.map((m) => toRecord(batch.topic, batch.partition, m)),
    active: () => isRunning() && !isStale(),
    heartbeat,
    commit: async (nextOffset) => {
      resolveOffset((BigInt(nextOffset) - 1n).toString());
      // Not `consumer.commitOffsets`: once `stop()` has begun, kafkajs drops that call silently (the
      // runner is no longer running), so the batch drained at shutdown would stay uncommitted. The
      // payload's commit goes to the group directly; the member is still in the group until every
      // eachBatch has returned (the SIGTERM test checks the drained batch is committed).
      await commitOffsetsIfNecessary({
        topics: [{ topic: batch.topic, partitions: [{ partition: batch.partition, offset: nextOffset }] }],
      });
    },
  };
}

function toRecord(topic: string, partition: number, m: KafkaMessage): InboundRecord {
  return {
    topic,
    partition,
    offset: m.offset,
    key: m.key,
    value: m.value,
    headers: (m.headers ?? {}) as InboundRecord['headers'],
    timestamp: m.timestamp,
  };
}
