/**
 * The group member with `@platformatic/kafka`: one `Consumer` and its messages stream (committed
 * offsets, the earliest retained records where the group has none, no autocommit). The stream
 * yields single messages; they are queued per partition and each partition with queued records
 * and no batch in flight gets them as one batch (at most `concurrency` partitions at once), so a
 * partition's next batch starts after the previous one settled, as with kafkajs' `eachBatch`.
 * The client heartbeats on its own timer and rejoins the group by itself after a rebalance.
 * The library is loaded when a member runs (`platformatic.ts`).
 */
import type { Consumer, Message, MessagesStream } from '@platformatic/kafka';
import {
  type GroupMember,
  type GroupRunOptions,
  groupSettings,
  type InboundRecord,
  type MemberSettings,
  type PartitionBatch,
} from './group-member.js';
import { platformaticKafka } from './platformatic.js';

type Received = Message<Buffer | undefined, Buffer | undefined, string, Buffer | undefined>;
type Client = Consumer<Buffer | undefined, Buffer | undefined, string, Buffer | undefined>;

/** Records read off the stream and not yet handed to a batch; past this the stream holds the rest. */
const MAX_QUEUED = 4_096;

export interface PlatformaticConnection {
  clientId: string;
  bootstrapBrokers: string[];
  connectTimeout: number;
  /** Bound on one request. */
  timeout: number;
  retries: number;
  retryDelay: number;
}

export class PlatformaticMember implements GroupMember {
  private consumer: Client | undefined;
  private stream:
    | MessagesStream<Buffer | undefined, Buffer | undefined, string, Buffer | undefined>
    | undefined;
  private run_: GroupRunOptions | undefined;
  private readonly queues = new Map<number, Received[]>();
  private queued = 0;
  private readonly inFlight = new Map<number, Promise<void>>();
  private paused = false;
  private stopping = false;
  private readonly crashListeners: ((error: Error) => void)[] = [];

  constructor(
    private readonly connection: PlatformaticConnection,
    private readonly settings: MemberSettings,
  ) {}

  async run(opts: GroupRunOptions): Promise<void> {
    this.run_ = opts;
    const { Consumer } = platformaticKafka();
    const consumer: Client = new Consumer({
      ...this.connection,
      groupId: this.settings.groupId,
      deserializers: { headerKey: (data?: Buffer) => data?.toString() ?? '' },
    });
    this.consumer = consumer;
    // A failed rejoin is emitted as 'error': without a listener it would end the process.
    consumer.on('error', (error: Error) => this.crash(error));
    try {
      this.stream = await consumer.consume({
        ...groupSettings(this.settings.sessionTimeoutMs),
        topics: [opts.topic],
        mode: 'committed',
        fallbackMode: 'earliest',
        autocommit: false,
        maxWaitTime: this.settings.maxWaitTimeInMs,
      });
    } catch (err) {
      await consumer.close(true).catch(() => {});
      throw err;
    }
    this.stream.on('error', (error: Error) => this.crash(error));
    this.stream.on('readable', () => this.drain());
  }

  pause(): void {
    this.paused = true;
    this.stream?.pause();
  }

  resume(): void {
    this.paused = false;
    this.stream?.resume();
    this.drain();
  }

  async stop(): Promise<void> {
    this.stopping = true;
    await Promise.all(this.inFlight.values());
    await this.stream?.close();
    await this.consumer?.close();
  }

  onCrash(listener: (error: Error) => void): void {
    this.crashListeners.push(listener);
  }

  /** Reads what the stream holds into the partition queues, then starts the batches it can. */
  private drain(): void {
    const stream = this.stream;
    const run = this.run_;
    if (!stream || !run || this.stopping || this.paused) return;
    while (this.queued < MAX_QUEUED) {
      const message = stream.read() as Received | null;
      if (message === null) break;
      const queue = this.queues.get(message.partition);
      if (queue) queue.push(message);
      else this.queues.set(message.partition, [message]);
      this.queued++;
    }
    for (const [partition, messages] of this.queues) {
      if (this.inFlight.size >= run.concurrency) break;
      if (this.inFlight.has(partition)) continue;
      this.queues.delete(partition);
      this.queued -= messages.length;
      const handled = run
        .onBatch(this.batch(run.topic, partition, messages))
        .catch((err: Error) => this.crash(err))
        .finally(() => {
          this.inFlight.delete(partition);
          this.drain();
        });
      this.inFlight.set(partition, handled);
    }
  }

  private batch(topic: string, partition: number, messages: Received[]): PartitionBatch {
    const consumer = this.consumer!;
    const generation = consumer.generationId;
    return {
      topic,
      partition,
      records: messages.map(toRecord),
      active: () => !this.stopping && consumer.generationId === generation,
      // The client heartbeats on its own timer.
      heartbeat: async () => {},
      commit: async (nextOffset) => {
        const last = BigInt(nextOffset) - 1n;
        const message = messages.findLast((m) => m.offset === last);
        if (!message) throw new Error(`offset ${last} is not in the batch of ${topic}/${partition}`);
        // The stream's commit: one commit in flight, offsets merged monotonically per partition.
        await message.commit();
      },
    };
  }

  private crash(error: Error): void {
    if (this.stopping) return;
    this.stopping = true;
    void this.stream?.close().catch(() => {});
    void this.consumer?.close(true).catch(() => {});
    for (const listener of this.crashListeners) listener(error);
  }
}

function toRecord(m: Received): InboundRecord {
  const headers: InboundRecord['headers'] = {};
  for (const [key, value] of m.headerEntries) {
    if (value === undefined) continue;
    const prev = headers[key];
    headers[key] = prev === undefined ? value : Array.isArray(prev) ? [...prev, value] : [prev, value];
  }
  return {
    topic: m.topic,
    partition: m.partition,
    offset: m.offset.toString(),
    key: m.key ?? null,
    value: m.value ?? null,
    headers,
    timestamp: m.timestamp.toString(),
  };
}
