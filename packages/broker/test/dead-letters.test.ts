/** The dead-letter API (publish, depth, scan, replay) against the devstack's real Kafka. */
import { randomBytes, randomUUID } from 'node:crypto';
import { createTopic, ensureStackTopics, readRecords, withKafkaAdmin } from '@event-observatory/devstack';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import {
  type ConsumerClients,
  createConsumerClients,
  DeadLetterProducer,
  deadLetterTopicSpec,
  GroupAdmin,
  readConsumerBrokerConfig,
  type ScannedRecord,
  type ScanStep,
  scanDeadLetters,
  sendsOf,
  topicDepth,
} from '../src/index.js';

const { bootstrapServers } = inject('stack');
const topic = `dl-events-${randomUUID().slice(0, 8)}`;
const dlqTopic = `${topic}.dlq`;
const groupId = `dl-test-${randomUUID().slice(0, 8)}`;
let clients: ConsumerClients;
let deadLetters: DeadLetterProducer;
let admin: GroupAdmin;

beforeAll(async () => {
  await createTopic(bootstrapServers, topic, 3);
  await createTopic(bootstrapServers, dlqTopic, 3);
  clients = createConsumerClients(readConsumerBrokerConfig({ BROKER_BOOTSTRAP_SERVERS: bootstrapServers }), {
    requestTimeoutMs: 10_000,
  });
  deadLetters = new DeadLetterProducer(clients, { topic, dlqTopic });
  admin = new GroupAdmin(clients);
  await Promise.all([deadLetters.connect(), admin.connect()]);
});
afterAll(async () => {
  await deadLetters?.disconnect();
  await admin?.disconnect();
});

const scan = (maxRecords: number, visit: (r: ScannedRecord) => ScanStep = () => 'next') =>
  scanDeadLetters(clients, admin, { dlqTopic, groupId, maxRecords, timeoutMs: 20_000 }, visit);

/** The groups the broker knows, by a client of the test's own. */
function groups(): Promise<string[]> {
  return withKafkaAdmin(bootstrapServers, async (admin) =>
    (await admin.listGroups()).groups.map((g) => g.groupId),
  );
}

describe('dead letters on the real broker', () => {
  it('scans an empty dead-letter topic as complete without joining a group', async () => {
    expect(await scan(10)).toEqual({ scanned: 0, complete: true });
    expect(topicDepth(await admin.partitionRanges(dlqTopic))).toMatchObject({ depth: 0 });
  });

  it('publishes dead letters with their keys and headers, counts them, and scans them in offset order', async () => {
    const letters = Array.from({ length: 9 }, (_, i) => ({
      key: `${topic}/${i % 3}/${i}`,
      value: JSON.stringify({ n: i }),
      headers: { 'content-type': 'application/cloudevents+json' },
    }));
    await deadLetters.publish(letters);
    const stored = await readRecords(bootstrapServers, dlqTopic, (rs) => rs.length >= 9);
    expect(stored.map((r) => r.key?.toString()).sort()).toEqual(letters.map((l) => l.key).sort());
    for (const r of stored)
      expect(r.headers['content-type']?.toString()).toBe('application/cloudevents+json');

    const depth = topicDepth(await admin.partitionRanges(dlqTopic));
    expect(depth.depth).toBe(9);
    expect(depth.partitions.map((p) => p.partition)).toEqual([0, 1, 2]);
    for (const p of depth.partitions) {
      const inPartition = stored.filter((r) => r.partition === p.partition).length;
      expect(p).toEqual({ partition: p.partition, low: '0', high: String(inPartition), depth: inPartition });
    }

    const seen: ScannedRecord[] = [];
    const groupsBefore = await groups();
    const visit = (r: ScannedRecord) => {
      seen.push(r);
      return 'next' as const;
    };
    expect(await scan(100, visit)).toEqual({ scanned: 9, complete: true });
    expect(seen.map((r) => JSON.parse(r.value!.toString()).n).sort()).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8]);
    for (const p of [0, 1, 2]) {
      const offsets = seen.filter((r) => r.partition === p).map((r) => Number(r.offset));
      expect(offsets).toEqual(offsets.map((_, i) => i));
    }
    // The scan's throw-away group is gone afterwards.
    expect(
      (await groups()).filter((g) => g.startsWith(`${groupId}.dlq-admin.`) && !groupsBefore.includes(g)),
    ).toEqual([]);
  });

  it('publishes letters too large together for one record batch of the topic, in several sends', async () => {
    // Three letters of about 1.5 MiB for one partition: 4.5 MiB in one batch, over the topic's 4 MiB.
    const large = `${topic}.large.dlq`;
    await ensureStackTopics(bootstrapServers, [deadLetterTopicSpec(large, 1)]);
    const producer = new DeadLetterProducer(clients, { topic, dlqTopic: large });
    await producer.connect();
    try {
      const letters = Array.from({ length: 3 }, (_, i) => ({
        key: `${topic}/0/${i}`,
        value: randomBytes(1_100_000).toString('base64'),
        partition: 0,
      }));
      expect(sendsOf(letters)).toHaveLength(2);
      await producer.publish(letters);
      const stored = await readRecords(bootstrapServers, large, (rs) => rs.length >= 3);
      expect(stored.map((r) => r.key?.toString())).toEqual(letters.map((l) => l.key));
    } finally {
      await producer.disconnect();
    }
  });

  it('stops at maxRecords or when the visitor says so, and reports the scan incomplete', async () => {
    expect(await scan(4)).toEqual({ scanned: 4, complete: false });
    let visited = 0;
    expect(await scan(100, () => (++visited === 2 ? 'stop' : 'next'))).toEqual({
      scanned: 2,
      complete: false,
    });
  });

  it('reads no further in a partition the visitor is done with, and completes when every one is', async () => {
    const seen = new Map<number, number>();
    const outcome = await scan(100, ({ partition }) => {
      seen.set(partition, (seen.get(partition) ?? 0) + 1);
      return 'partition-done';
    });
    const withRecords = (await admin.partitionRanges(dlqTopic)).filter((p) => p.high !== p.low);
    expect([...seen.keys()].sort()).toEqual(withRecords.map((p) => p.partition).sort());
    expect([...seen.values()].every((n) => n === 1)).toBe(true);
    expect(outcome).toEqual({ scanned: withRecords.length, complete: true });
  });

  it('replays an original record byte for byte to the event topic, and tombstones the dead letter', async () => {
    const original = {
      key: Buffer.from([0, 1, 255]),
      value: Buffer.from([9, 0, 8]),
      headers: { ce_id: Buffer.from('r-1'), multi: [Buffer.from('a'), Buffer.from('b')] },
      timestamp: '1700000000000',
    };
    const position = await deadLetters.replay(original);
    expect(position.topic).toBe(topic);
    const [replayed] = await readRecords(bootstrapServers, topic, (rs) => rs.length >= 1);
    expect(replayed).toMatchObject({ partition: position.partition, offset: position.offset });
    expect([...replayed!.key!]).toEqual([0, 1, 255]);
    expect([...replayed!.value!]).toEqual([9, 0, 8]);
    expect(replayed!.headers.ce_id?.toString()).toBe('r-1');
    expect((replayed!.headers.multi as Buffer[]).map(String)).toEqual(['a', 'b']);

    await deadLetters.tombstone(`${topic}/2/7`, 2);
    const tombstones: ScannedRecord[] = [];
    await scan(100, (r) => {
      if (r.value === null) tombstones.push(r);
      return 'next';
    });
    expect(tombstones.map((r) => ({ key: r.key?.toString(), partition: r.partition }))).toEqual([
      { key: `${topic}/2/7`, partition: 2 },
    ]);
    expect(topicDepth(await admin.partitionRanges(dlqTopic)).depth).toBe(10);
  });
});
