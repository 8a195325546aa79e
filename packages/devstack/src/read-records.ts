import type { IHeaders } from 'kafkajs';
import { kafkaClient, withKafkaAdmin } from './kafka-clients.js';

/** A record read back from the broker. */
export interface ReadRecord {
  partition: number;
  offset: string;
  key: Buffer | null;
  value: Buffer | null;
  headers: IHeaders;
}

/**
 * Reads every record of `topic` from the beginning until `until(records)` is true or `timeoutMs`
 * passes (tests compare what the broker holds with what the service answered).
 */
export async function readRecords(
  bootstrapServers: string,
  topic: string,
  until: (records: ReadRecord[]) => boolean,
  timeoutMs = 20_000,
): Promise<ReadRecord[]> {
  const consumer = kafkaClient(bootstrapServers, { clientId: 'devstack-reader' }).consumer({
    groupId: `reader-${Date.now()}-${Math.random()}`,
    sessionTimeout: 6000,
    heartbeatInterval: 500,
    rebalanceTimeout: 3000,
    maxWaitTimeInMs: 100,
  });
  const records: ReadRecord[] = [];
  await consumer.connect();
  try {
    await consumer.subscribe({ topic, fromBeginning: true });
    let done: () => void = () => {};
    const finished = new Promise<void>((resolve) => {
      done = resolve;
    });
    await consumer.run({
      eachMessage: async ({ partition, message }) => {
        records.push({
          partition,
          offset: message.offset,
          key: message.key,
          value: message.value,
          headers: message.headers ?? {},
        });
        if (until(records)) done();
      },
    });
    const timer = setTimeout(done, timeoutMs);
    await finished;
    clearTimeout(timer);
  } finally {
    await consumer.disconnect();
  }
  return records;
}

/**
 * Creates a fresh topic (auto-creation is off) and waits until every partition's leader serves it.
 * KRaft metadata can name a leader before that broker has set the partition up, so a leader in the
 * metadata is not enough: the wait ends only when the leaders answer a list-offsets request too.
 */
export function createTopic(bootstrapServers: string, topic: string, partitions = 12): Promise<void> {
  return withKafkaAdmin(bootstrapServers, async (admin) => {
    await admin.createTopics({
      waitForLeaders: true,
      topics: [
        {
          topic,
          numPartitions: partitions,
          replicationFactor: 1,
          configEntries: [{ name: 'max.message.bytes', value: '2097152' }],
        },
      ],
    });
    let lastError: unknown;
    for (let i = 0; i < 100; i++) {
      try {
        const meta = await admin.fetchTopicMetadata({ topics: [topic] });
        if (
          meta.topics[0]?.partitions.length === partitions &&
          meta.topics[0].partitions.every((p) => p.leader >= 0) &&
          (await admin.fetchTopicOffsets(topic)).length === partitions
        )
          return;
      } catch (error) {
        lastError = error; // NOT_LEADER_OR_FOLLOWER and the like until the leaders serve the partitions
      }
      await new Promise((r) => setTimeout(r, 100));
    }
    throw new Error(
      `topic ${topic} not served on all ${partitions} partitions after 10 s: ${String(lastError)}`,
    );
  });
}
