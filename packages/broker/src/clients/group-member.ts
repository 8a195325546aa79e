/**
 * The consumer service's member of its consumer group, on kafkajs: it reads one topic, hands each
 * partition's fetched records over as a batch (`eachBatch` with `partitionsConsumedConcurrently`,
 * no autocommit, nothing auto-resolved) and commits only what the caller says is durable, through
 * the batch's own `commitOffsetsIfNecessary`.
 */
import type { Consumer, EachBatchPayload, Kafka, KafkaMessage } from 'kafkajs';

/** A record as the consumer handles it, with its origin coordinates. */
export interface InboundRecord {
  topic: string;
  partition: number;
  /** Offset as a decimal string. */
  offset: string;
  key: Buffer | null;
  value: Buffer | null;
  headers: Record<string, Buffer | string | (Buffer | string)[] | undefined>;
  /** Broker timestamp, epoch milliseconds as a decimal string. */
  timestamp: string;
}

/** Records of one partition, in offset order; a partition's next batch comes after this one settled. */
export interface PartitionBatch {
  topic: string;
  partition: number;
  records: InboundRecord[];
  /** False once the member is stopping or the batch belongs to an older group generation. */
  active(): boolean;
  /** Keeps the membership alive during a long write. */
  heartbeat(): Promise<void>;
  /** Commits `nextOffset` (the offset after the last durable record) for this partition. */
  commit(nextOffset: string): Promise<void>;
}

export interface GroupRunOptions {
  topic: string;
  /** Partitions whose batches are handled at once. */
  concurrency: number;
  /** Handles one batch; a rejection fails the member (reported through `onCrash`). */
  onBatch(batch: PartitionBatch): Promise<void>;
}

/** Fetching and group settings of a member (the consumer stream's choices). */
export interface GroupMemberSettings {
  groupId: string;
  /** Longest wait of a fetch for data. */
  maxWaitTimeInMs: number;
}

/** What a member is built with: the stream's choices and the configured session. */
export interface MemberSettings extends GroupMemberSettings {
  /** How long the group waits for a silent member (`BROKER_SESSION_TIMEOUT`) before rebalancing. */
  sessionTimeoutMs: number;
}

/**
 * Session, rebalance and heartbeat timing; fetch sizes. Bounded fetches keep the resident set
 * small: at most ~4 MiB of records per fetch (about 370 records of 700 bytes per partition).
 * Larger fetches (1 MiB a partition) were measured: no faster (the database write is the
 * bottleneck) and twice the peak RSS.
 */
function groupSettings(sessionTimeoutMs: number) {
  return {
    sessionTimeout: sessionTimeoutMs,
    rebalanceTimeout: 60_000,
    // Under a third of the shortest session BROKER_SESSION_TIMEOUT allows (10 s): Kafka's guidance.
    heartbeatInterval: 3_000,
    maxBytesPerPartition: 256 * 1024,
    maxBytes: 4 * 1024 * 1024,
  };
}

export class GroupMember {
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

  /**
   * Connects, joins the group and starts fetching from the committed offsets (the earliest
   * retained records where the group has none). Rejects when it cannot join.
   */
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

  /** Stops fetching; stays in the group. The batches in flight finish. */
  pause(): void {
    this.consumer.pause([{ topic: this.topic }]);
  }

  resume(): void {
    this.consumer.resume([{ topic: this.topic }]);
  }

  /** Lets the batches in flight finish (with their commits), leaves the group and disconnects. */
  async stop(): Promise<void> {
    await this.consumer.stop();
    await this.consumer.disconnect();
  }

  /**
   * `listener` hears a failure kafkajs does not recover from by itself (the member is then dead:
   * the caller disconnects it and builds a new one).
   */
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
