/**
 * The seam between the consumer service's processing and the Kafka client: one member of a
 * consumer group, reading one topic, handing each partition's fetched records over as a batch and
 * committing only what the caller says is durable. Implemented with kafkajs (`kafkajs-member.ts`)
 * and with `@platformatic/kafka` (`platformatic-member.ts`); `KAFKA_CLIENT` picks one.
 */

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
  /** Keeps the membership alive during a long write (a no-op where the client beats by itself). */
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

export interface GroupMember {
  /**
   * Connects, joins the group and starts fetching from the committed offsets (the earliest
   * retained records where the group has none). Rejects when it cannot join.
   */
  run(opts: GroupRunOptions): Promise<void>;
  /** Stops fetching; stays in the group. The batches in flight finish. */
  pause(): void;
  resume(): void;
  /** Lets the batches in flight finish (with their commits), leaves the group and disconnects. */
  stop(): Promise<void>;
  /**
   * `listener` hears a failure the client does not recover from by itself (the member is then
   * dead: the caller disconnects it and builds a new one).
   */
  onCrash(listener: (error: Error) => void): void;
}

/** Fetching and group settings both clients get (the consumer stream's choices). */
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
 * Larger fetches (1 MiB a partition) were measured with kafkajs: no faster (the database write
 * is the bottleneck) and twice the peak RSS.
 */
export function groupSettings(sessionTimeoutMs: number) {
  return {
    sessionTimeout: sessionTimeoutMs,
    rebalanceTimeout: 60_000,
    // Under a third of the shortest session BROKER_SESSION_TIMEOUT allows (10 s): Kafka's guidance.
    heartbeatInterval: 3_000,
    maxBytesPerPartition: 256 * 1024,
    maxBytes: 4 * 1024 * 1024,
  };
}
