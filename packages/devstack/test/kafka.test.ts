import { DEAD_LETTER_TOPIC, EVENT_TOPIC, ensureTopics, eventTopicSpec } from '@event-observatory/broker';
import { kafkaClient } from '@event-observatory/devstack';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';

const { bootstrapServers } = inject('stack');
const kafka = kafkaClient(bootstrapServers, { clientId: 'devstack-test' });
const admin = kafka.admin();

beforeAll(async () => {
  await admin.connect();
});
afterAll(async () => {
  await admin.disconnect();
});

describe('the devstack Kafka broker', () => {
  it('is a single KRaft node on 127.0.0.1 serving the spec topics', async () => {
    const cluster = await admin.describeCluster();
    expect(cluster.brokers).toEqual([expect.objectContaining({ nodeId: 1, host: '127.0.0.1' })]);
    expect(cluster.controller).toBe(1);
    const topics = await admin.listTopics();
    expect(topics).toEqual(expect.arrayContaining([EVENT_TOPIC, DEAD_LETTER_TOPIC]));
  });

  it('round-trips a record with headers through a real topic with kafkajs', async () => {
    const topic = `devstack-roundtrip-${Date.now()}`;
    await ensureTopics(admin, [{ ...eventTopicSpec(topic), partitions: 2 }]);
    const producer = kafka.producer({ idempotent: true, maxInFlightRequests: 1 });
    await producer.connect();
    const [meta] = await producer.send({
      topic,
      acks: -1,
      messages: [{ key: 'source#subject', value: 'hello', headers: { ce_type: 'com.example.test' } }],
    });
    await producer.disconnect();
    expect(meta?.errorCode).toBe(0);

    const consumer = kafka.consumer({ groupId: `${topic}-group` });
    await consumer.connect();
    await consumer.subscribe({ topic, fromBeginning: true });
    const received = await new Promise<{ key: string; value: string; type: string; partition: number }>(
      (resolve) => {
        void consumer.run({
          eachMessage: async ({ message, partition }) => {
            resolve({
              key: message.key?.toString() ?? '',
              value: message.value?.toString() ?? '',
              type: message.headers?.ce_type?.toString() ?? '',
              partition,
            });
          },
        });
      },
    );
    await consumer.disconnect();
    expect(received).toEqual({
      key: 'source#subject',
      value: 'hello',
      type: 'com.example.test',
      partition: meta!.partition,
    });
  });

  it('does not create topics on demand (auto-creation disabled)', async () => {
    const topic = `devstack-not-created-${Date.now()}`;
    const producer = kafka.producer({
      allowAutoTopicCreation: true,
      retry: { retries: 1, initialRetryTime: 50 },
    });
    await producer.connect();
    await expect(producer.send({ topic, messages: [{ value: 'x' }] })).rejects.toThrow();
    await producer.disconnect();
    expect(await admin.listTopics()).not.toContain(topic);
  });
});
