import { EVENT_MAX_MESSAGE_BYTES, ensureTopics } from '@event-observatory/broker';
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
 * Creates a topic (auto-creation is off) as an event topic of `partitions`, one replica, and waits
 * until every partition's leader serves it: the broker's `ensureTopics`, which also lists the
 * offsets, since KRaft metadata can name a leader before that broker has set the partition up.
 */
export function createTopic(bootstrapServers: string, topic: string, partitions = 12): Promise<void> {
  return withKafkaAdmin(bootstrapServers, async (admin) => {
    const configs = { 'max.message.bytes': String(EVENT_MAX_MESSAGE_BYTES) };
    await ensureTopics(admin, [{ name: topic, partitions, replicationFactor: 1, configs }], {
      leaderTimeoutMs: 10_000,
    });
  });
}
