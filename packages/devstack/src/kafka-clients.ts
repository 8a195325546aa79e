/**
 * The Kafka clients of the tests, the benchmarks and the local tooling, all built by the broker's
 * `createKafkaClient`, so a test reaches Kafka the way the services do: a client, an admin for one
 * piece of work, a producer of raw records, and the number of records a topic holds.
 */
import { createKafkaClient, type KafkaClientOptions } from '@event-observatory/broker';
import type { Admin, Kafka, Producer, ProducerConfig } from 'kafkajs';

/** Client id (default `devstack`), security and timeouts (kafkajs' defaults) of a client. */
export type LocalKafkaOptions = Partial<Omit<KafkaClientOptions, 'bootstrapServers'>>;

/**
 * A kafkajs client on `bootstrapServers`, comma-separated as a handle's `bootstrapServers` is.
 *
 * @example
 * const consumer = kafkaClient(stack.bootstrapServers, { clientId: 'reader' }).consumer({ groupId: 'g' });
 */
export function kafkaClient(bootstrapServers: string, options: LocalKafkaOptions = {}): Kafka {
  return createKafkaClient({
    clientId: 'devstack',
    ...options,
    bootstrapServers: bootstrapServers.split(','),
  });
}

/**
 * Runs `work` with a connected admin client, disconnected afterwards whatever `work` does.
 *
 * @example
 * await withKafkaAdmin(stack.bootstrapServers, (admin) => ensureTopics(admin, specs));
 */
export async function withKafkaAdmin<T>(
  bootstrapServers: string,
  work: (admin: Admin) => Promise<T>,
  options: LocalKafkaOptions = {},
): Promise<T> {
  const admin = kafkaClient(bootstrapServers, options).admin();
  await admin.connect();
  try {
    return await work(admin);
  } finally {
    await admin.disconnect();
  }
}

/**
 * A connected producer that sends records as given (no event encoding, no send queue) and never
 * creates a topic unless `config` says so; the caller disconnects it.
 *
 * @example
 * const producer = await rawProducer(stack.bootstrapServers, { idempotent: true });
 * await producer.send({ topic, acks: -1, messages: [{ key: 'k', value: 'v' }] });
 * await producer.disconnect();
 */
export async function rawProducer(
  bootstrapServers: string,
  config: ProducerConfig = {},
  options: LocalKafkaOptions = {},
): Promise<Producer> {
  const producer = kafkaClient(bootstrapServers, options).producer({
    allowAutoTopicCreation: false,
    ...config,
  });
  await producer.connect();
  return producer;
}

/**
 * The records `topic` has taken: the sum of its partitions' high watermarks (what a compacted or
 * expired log once held counts too).
 *
 * @example
 * expect(await topicRecordCount(stack.bootstrapServers, 'events.cloudevents.v1.dlq')).toBe(1);
 */
export function topicRecordCount(bootstrapServers: string, topic: string): Promise<number> {
  return withKafkaAdmin(bootstrapServers, async (admin) =>
    (await admin.fetchTopicOffsets(topic)).reduce((sum, p) => sum + Number(p.high), 0),
  );
}
