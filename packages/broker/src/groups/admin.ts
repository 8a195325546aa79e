/**
 * A consumer group's offsets through one admin connection: the group's committed offsets, the
 * retained range of a topic's partitions they are measured against, resetting them to the earliest
 * retained records, and deleting a group. `groupLag` and `topicDepth` turn the readings into lag
 * and depth.
 *
 * @example
 * ```ts
 * const admin = new GroupAdmin(clients);
 * await admin.connect();
 * const committed = await admin.committedOffsets(group, topic);
 * groupLag(committed, await admin.partitionRanges(topic)); // Map { 0 => 12n, ... }
 * ```
 */
import type { Admin } from 'kafkajs';
import type { ConsumerClients } from '../clients/consumer.js';

/** A partition's retained offsets: from `low` up to `high` (the next offset written), decimal. */
export interface PartitionRange {
  partition: number;
  low: string;
  high: string;
}

export interface PartitionDepth extends PartitionRange {
  /** Records retained: `high - low`. */
  depth: number;
}

/** Records retained in a topic, in all and per partition (in partition order). */
export interface TopicDepth {
  depth: number;
  partitions: PartitionDepth[];
}

export class GroupAdmin {
  private readonly admin: Admin;
  private connecting: Promise<void> | undefined;

  constructor(clients: ConsumerClients) {
    this.admin = clients.admin();
  }

  /**
   * Connects, or joins the attempt in progress. Every request below connects first, so a client
   * that could not connect (broker down at boot) tries again on its next use; and requests made at
   * once (a probe's three reads, a readiness check) make one attempt and all fail with its reason,
   * a wrong password, where separate attempts would close each other's sockets and report only
   * "Closed connection". Connected, it returns at once.
   */
  connect(): Promise<void> {
    this.connecting ??= this.admin.connect().finally(() => {
      this.connecting = undefined;
    });
    return this.connecting;
  }

  disconnect(): Promise<void> {
    return this.admin.disconnect();
  }

  /** Resolves when a broker answers (a readiness check). */
  async ping(): Promise<void> {
    await this.connect();
    await this.admin.describeCluster();
  }

  /** The next offset `groupId` committed per partition of `topic` (partitions without a commit are absent). */
  async committedOffsets(groupId: string, topic: string): Promise<Map<number, bigint>> {
    await this.connect();
    const offsets = await this.admin.fetchOffsets({ groupId, topics: [topic] });
    const committed = new Map<number, bigint>();
    for (const p of offsets.find((t) => t.topic === topic)?.partitions ?? []) {
      const offset = BigInt(p.offset);
      if (offset >= 0n) committed.set(p.partition, offset);
    }
    return committed;
  }

  /** Each partition's retained range, in partition order. */
  async partitionRanges(topic: string): Promise<PartitionRange[]> {
    await this.connect();
    const offsets = await this.admin.fetchTopicOffsets(topic);
    return offsets
      .map(({ partition, low, high }) => ({ partition, low, high }))
      .sort((a, b) => a.partition - b.partition);
  }

  /** Moves `groupId`'s offsets on `topic` to the earliest retained records (the group must be empty). */
  async resetToEarliest(groupId: string, topic: string): Promise<void> {
    await this.connect();
    await this.admin.resetOffsets({ groupId, topic, earliest: true });
  }

  /** Deletes an empty group and its committed offsets. */
  async deleteGroup(groupId: string): Promise<void> {
    await this.connect();
    await this.admin.deleteGroups([groupId]);
  }
}

/**
 * Records behind the group per partition: `high` minus the committed offset, never below 0. Only
 * partitions with a commit have a lag.
 */
export function groupLag(
  committed: ReadonlyMap<number, bigint>,
  ranges: readonly PartitionRange[],
): Map<number, bigint> {
  const lag = new Map<number, bigint>();
  for (const { partition, high } of ranges) {
    const offset = committed.get(partition);
    if (offset === undefined) continue;
    const behind = BigInt(high) - offset;
    lag.set(partition, behind > 0n ? behind : 0n);
  }
  return lag;
}

/** Records retained per partition and in all. */
export function topicDepth(ranges: readonly PartitionRange[]): TopicDepth {
  const partitions = ranges.map((r) => ({ ...r, depth: Number(BigInt(r.high) - BigInt(r.low)) }));
  return { depth: partitions.reduce((sum, p) => sum + p.depth, 0), partitions };
}

/**
 * Reads, on any admin client (the controller's per-cluster one), each group's committed offsets
 * on its topic and the ranges of every topic named (the groups' topics and others, such as a
 * dead-letter topic), one request per distinct topic and group. A topic that does not exist is
 * absent from `ranges`; a group without commits on it reads as an empty map.
 */
export async function readGroupReadings(
  admin: Admin,
  groups: Array<{ groupId: string; topic: string }>,
  topics: string[],
): Promise<{ committed: Map<string, Map<number, bigint>>; ranges: Map<string, PartitionRange[]> }> {
  const existing = new Set(await admin.listTopics());
  const ranges = new Map<string, PartitionRange[]>();
  for (const topic of new Set([...topics, ...groups.map((g) => g.topic)])) {
    if (!existing.has(topic)) continue;
    const offsets = await admin.fetchTopicOffsets(topic);
    ranges.set(
      topic,
      offsets
        .map(({ partition, low, high }) => ({ partition, low, high }))
        .sort((a, b) => a.partition - b.partition),
    );
  }
  const committed = new Map<string, Map<number, bigint>>();
  const byGroup = new Map<string, Set<string>>();
  for (const { groupId, topic } of groups) {
    if (existing.has(topic)) byGroup.set(groupId, (byGroup.get(groupId) ?? new Set()).add(topic));
  }
  for (const [groupId, names] of byGroup) {
    const offsets = await admin.fetchOffsets({ groupId, topics: [...names] });
    for (const t of offsets) {
      const map = new Map<number, bigint>();
      for (const p of t.partitions) if (BigInt(p.offset) >= 0n) map.set(p.partition, BigInt(p.offset));
      committed.set(`${groupId}|${t.topic}`, map);
    }
  }
  return { committed, ranges };
}
