/** A group's offsets through `GroupAdmin` against the devstack's real Kafka; lag and depth arithmetic. */
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { createTopic, kafkaClient } from '@event-observatory/devstack';
import type { Admin } from 'kafkajs';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import {
  createConsumerClients,
  GroupAdmin,
  groupLag,
  readConsumerBrokerConfig,
  topicDepth,
} from '../src/index.js';

const { bootstrapServers } = inject('stack');
const topic = `offsets-${randomUUID().slice(0, 8)}`;
const kafka = kafkaClient(bootstrapServers, { clientId: 'offsets-test' });
let witness: Admin;
let admin: GroupAdmin;

beforeAll(async () => {
  await createTopic(bootstrapServers, topic, 3);
  const producer = kafka.producer({ allowAutoTopicCreation: false });
  await producer.connect();
  for (const [partition, count] of [3, 5, 0].entries()) {
    if (count === 0) continue;
    const messages = Array.from({ length: count }, (_, i) => ({ partition, value: `${partition}/${i}` }));
    await producer.send({ topic, acks: -1, messages });
  }
  await producer.disconnect();
  witness = kafka.admin();
  await witness.connect();
  const clients = createConsumerClients(
    readConsumerBrokerConfig({ BROKER_BOOTSTRAP_SERVERS: bootstrapServers }),
    {
      requestTimeoutMs: 10_000,
    },
  );
  admin = new GroupAdmin(clients);
  await admin.connect();
  // A fresh broker creates its offsets topic at the first group request and answers "not the
  // coordinator" until it is ready (the probe would just read again at its next tick).
  for (let attempt = 1; ; attempt++) {
    try {
      await admin.committedOffsets('offsets-warm-up', topic);
      break;
    } catch (err) {
      if (attempt === 50) throw err;
      await sleep(200);
    }
  }
});
afterAll(async () => {
  await admin?.disconnect();
  await witness?.disconnect();
});

describe('GroupAdmin on the real broker', () => {
  it('answers a ping', async () => {
    await expect(admin.ping()).resolves.toBeUndefined();
  });

  it("reads a topic's retained ranges and a group's committed offsets", async () => {
    const groupId = `offsets-g-${randomUUID().slice(0, 8)}`;
    const ranges = await admin.partitionRanges(topic);
    expect(ranges).toEqual([
      { partition: 0, low: '0', high: '3' },
      { partition: 1, low: '0', high: '5' },
      { partition: 2, low: '0', high: '0' },
    ]);
    expect(await admin.committedOffsets(groupId, topic)).toEqual(new Map());
    await witness.setOffsets({
      groupId,
      topic,
      partitions: [
        { partition: 0, offset: '1' },
        { partition: 1, offset: '5' },
      ],
    });
    const committed = await admin.committedOffsets(groupId, topic);
    expect(committed).toEqual(
      new Map([
        [0, 1n],
        [1, 5n],
      ]),
    );
    expect(groupLag(committed, ranges)).toEqual(
      new Map([
        [0, 2n],
        [1, 0n],
      ]),
    );
  });

  it('resets a group to the earliest retained records, then deletes it', async () => {
    const groupId = `offsets-r-${randomUUID().slice(0, 8)}`;
    await witness.setOffsets({ groupId, topic, partitions: [{ partition: 1, offset: '4' }] });
    await admin.resetToEarliest(groupId, topic);
    const [after] = await witness.fetchOffsets({ groupId, topics: [topic], resolveOffsets: true });
    expect(after!.partitions.map((p) => [p.partition, p.offset]).sort()).toEqual([
      [0, '0'],
      [1, '0'],
      [2, '0'],
    ]);
    await admin.deleteGroup(groupId);
    expect((await witness.listGroups()).groups.map((g) => g.groupId)).not.toContain(groupId);
  });
});

describe('groupLag and topicDepth', () => {
  const ranges = [
    { partition: 0, low: '2', high: '10' },
    { partition: 1, low: '0', high: '9000000000' },
    { partition: 2, low: '4', high: '4' },
  ];

  it('counts lag only where the group committed, never below 0', () => {
    expect(
      groupLag(
        new Map([
          [0, 12n],
          [1, 1n],
        ]),
        ranges,
      ),
    ).toEqual(
      new Map([
        [0, 0n],
        [1, 8_999_999_999n],
      ]),
    );
  });

  it('sums the retained records', () => {
    expect(topicDepth(ranges)).toEqual({
      depth: 9_000_000_008,
      partitions: [
        { partition: 0, low: '2', high: '10', depth: 8 },
        { partition: 1, low: '0', high: '9000000000', depth: 9_000_000_000 },
        { partition: 2, low: '4', high: '4', depth: 0 },
      ],
    });
  });
});
