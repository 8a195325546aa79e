import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { kafkaClient } from '@event-observatory/devstack';
import type { Producer } from 'kafkajs';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import {
  createConsumerClients,
  ensureTopics,
  type GroupMember,
  type InboundRecord,
  readConsumerBrokerConfig,
} from '../src/index.js';

const { bootstrapServers } = inject('stack');
const kafka = kafkaClient(bootstrapServers, { clientId: 'member-test' });
let producer: Producer;

beforeAll(async () => {
  producer = kafka.producer({ allowAutoTopicCreation: false });
  await producer.connect();
});
afterAll(async () => {
  await producer.disconnect();
});

/** A topic of `partitions` partitions holding `perPartition` records in each, values `p/i`. */
async function filledTopic(partitions: number, perPartition: number): Promise<string> {
  const topic = `member-${randomUUID().slice(0, 8)}`;
  const admin = kafka.admin();
  await admin.connect();
  await ensureTopics(admin, [{ name: topic, partitions, replicationFactor: 1, configs: {} }]);
  await admin.disconnect();
  await publish(topic, partitions, 0, perPartition);
  return topic;
}

async function publish(topic: string, partitions: number, from: number, to: number) {
  for (let p = 0; p < partitions; p++) {
    const messages = [];
    for (let i = from; i < to; i++)
      messages.push({ partition: p, key: `k${i}`, value: `${p}/${i}`, headers: { h: 'v' } });
    await producer.send({ topic, acks: -1, messages });
  }
}

/** Runs a member that records every batch and commits it whole, as the consumer stream does. */
async function started(groupId: string, topic: string) {
  const config = readConsumerBrokerConfig({ BROKER_BOOTSTRAP_SERVERS: bootstrapServers });
  const member: GroupMember = createConsumerClients(config, { requestTimeoutMs: 10_000 }).groupMember({
    groupId,
    maxWaitTimeInMs: 100,
  });
  const seen: InboundRecord[] = [];
  const crashes: Error[] = [];
  member.onCrash((err) => crashes.push(err));
  await member.run({
    topic,
    concurrency: 4,
    onBatch: async (batch) => {
      seen.push(...batch.records);
      await batch.commit((BigInt(batch.records.at(-1)!.offset) + 1n).toString());
    },
  });
  return { member, seen, crashes };
}

async function until(check: () => boolean, ms = 60_000): Promise<void> {
  const end = Date.now() + ms;
  while (!check()) {
    if (Date.now() > end) throw new Error('condition not met in time');
    await sleep(50);
  }
}

// The first group on a fresh broker waits for the offsets topic to be created.
describe('the group member', { timeout: 120_000 }, () => {
  it('hands each partition over in offset order with key, value and headers; a new member resumes from the commits', async () => {
    const topic = await filledTopic(3, 10);
    const groupId = `g-${randomUUID()}`;
    const first = await started(groupId, topic);
    await until(() => first.seen.length >= 30);
    await first.member.stop();
    expect(first.crashes).toEqual([]);
    for (let p = 0; p < 3; p++) {
      const offsets = first.seen.filter((r) => r.partition === p).map((r) => Number(r.offset));
      expect(offsets).toEqual([...Array(10).keys()]);
    }
    const sample = first.seen.find((r) => r.partition === 1 && r.offset === '3')!;
    expect(sample).toMatchObject({ topic, key: Buffer.from('k3'), value: Buffer.from('1/3') });
    expect(sample.headers.h?.toString()).toBe('v');
    expect(Number(sample.timestamp)).toBeGreaterThan(Date.now() - 120_000);

    await publish(topic, 3, 10, 20);
    const second = await started(groupId, topic);
    await until(() => second.seen.length >= 30);
    await sleep(500); // nothing below the committed offsets arrives late
    await second.member.stop();
    expect(second.seen.map((r) => `${r.partition}/${r.offset}`).sort()).toEqual(
      [0, 1, 2].flatMap((p) => [...Array(10).keys()].map((i) => `${p}/${i + 10}`)).sort(),
    );
  });

  it('hands nothing over while paused and the rest after resume', async () => {
    const topic = await filledTopic(2, 5);
    const { member, seen } = await started(`g-${randomUUID()}`, topic);
    await until(() => seen.length >= 10);
    member.pause();
    await sleep(300); // a batch already fetched may still arrive
    const atPause = seen.length;
    await publish(topic, 2, 5, 10);
    await sleep(1_500);
    expect(seen.length).toBe(atPause);
    member.resume();
    await until(() => seen.length >= 20);
    await member.stop();
    expect(new Set(seen.map((r) => `${r.partition}/${r.offset}`)).size).toBe(20);
  });
});
