/**
 * The partition of a record: kafkajs' default partitioner (murmur2 of the key, as the Java client),
 * remembered per key. Events of one source (and subject) repeat their key, and hashing it again for
 * every record showed in profiles. The producer gives kafkajs the partition explicitly.
 */
import { Partitioners, type PartitionMetadata } from 'kafkajs';

/** Keys whose partition is remembered at most; the memory is forgotten wholesale beyond it. */
const MAX_KEYS = 10_000;

export class PartitionCache {
  private readonly partitioner = Partitioners.DefaultPartitioner();
  private readonly byKey = new Map<string, number>();
  /** What the partitioner needs to know of the topic: only the partition ids count for a keyed record. */
  private metadata: PartitionMetadata[] = [];

  constructor(private readonly topic: string) {}

  /** Partitions of the topic as last seen (0: not known yet). */
  get count(): number {
    return this.metadata.length;
  }

  /** Takes a partition count read from the broker; partitions only grow, so a smaller one is stale. */
  observe(count: number): void {
    if (count <= this.metadata.length) return;
    this.metadata = Array.from({ length: count }, (_, partitionId) => ({
      partitionId,
      partitionErrorCode: 0,
      leader: 0,
      replicas: [],
      isr: [],
    }));
    this.byKey.clear();
  }

  partitionOf(key: string): number {
    let partition = this.byKey.get(key);
    if (partition === undefined) {
      if (this.byKey.size >= MAX_KEYS) this.byKey.clear();
      partition = this.partitioner({
        topic: this.topic,
        partitionMetadata: this.metadata,
        message: { key, value: null },
      });
      this.byKey.set(key, partition);
    }
    return partition;
  }
}
