import { randomUUID } from 'node:crypto';
import { kafkaClient } from '@event-observatory/devstack';
import type { Admin } from 'kafkajs';
import { afterAll, beforeAll, describe, expect, inject, it, vi } from 'vitest';
import {
  deadLetterTopicSpec,
  deleteTopics,
  ensureTopics,
  eventTopicSpec,
  readTopicStates,
  type TopicSpec,
} from '../src/index.js';

const { bootstrapServers } = inject('stack');
const kafka = kafkaClient(bootstrapServers, { clientId: 'topics-test' });
let admin: Admin;

beforeAll(async () => {
  admin = kafka.admin();
  await admin.connect();
});
afterAll(async () => {
  await admin.disconnect();
});

const unique = (base: string) => `${base}-${randomUUID().slice(0, 8)}`;

/**
 * The topic's state once the broker shows `key` = `value`. In KRaft a config change is acknowledged
 * when the controller has committed it; the broker that answers describeConfigs applies it from the
 * metadata log a moment later, so a read at once may still see the value before.
 */
async function stateOnce(name: string, key: string, value: string) {
  return vi.waitFor(
    async () => {
      const seen = await state(name);
      expect(seen.configs[key]).toBe(value);
      return seen;
    },
    { timeout: 10_000, interval: 100 },
  );
}

async function state(name: string) {
  const { topics } = await admin.fetchTopicMetadata({ topics: [name] });
  const { resources } = await admin.describeConfigs({
    includeSynonyms: false,
    resources: [{ type: 2, name }],
  });
  const configs = Object.fromEntries(
    (resources[0]?.configEntries ?? []).map((e) => [e.configName, e.configValue] as const),
  );
  return { partitions: topics[0]?.partitions.length, configs };
}

describe('ensureTopics against the real broker', () => {
  it('creates missing topics with their partitions and configs, then reports them unchanged', async () => {
    const specs = [eventTopicSpec(unique('events')), deadLetterTopicSpec(unique('events.dlq'))];
    const first = await ensureTopics(admin, specs);
    expect(first.topics.map((t) => [t.name, t.action, t.partitions])).toEqual([
      [specs[0]!.name, 'created', 12],
      [specs[1]!.name, 'created', 3],
    ]);
    const dlq = await state(specs[1]!.name);
    expect(dlq.partitions).toBe(3);
    expect(dlq.configs['cleanup.policy']).toBe('compact,delete');
    expect(dlq.configs['retention.ms']).toBe('604800000');

    const second = await ensureTopics(admin, specs);
    expect(second.topics.map((t) => t.action)).toEqual(['unchanged', 'unchanged']);
    expect(second.topics.every((t) => t.changedConfigs.length === 0 && t.warnings.length === 0)).toBe(true);
  });

  it('adds partitions when the spec asks more, and never removes any', async () => {
    const spec: TopicSpec = { ...eventTopicSpec(unique('grow')), partitions: 2 };
    await ensureTopics(admin, [spec]);
    const grown = await ensureTopics(admin, [{ ...spec, partitions: 5 }]);
    expect(grown.topics[0]).toMatchObject({ action: 'updated', partitionsBefore: 2, partitions: 5 });
    expect((await state(spec.name)).partitions).toBe(5);

    const shrink = await ensureTopics(admin, [{ ...spec, partitions: 3 }]);
    expect(shrink.topics[0]).toMatchObject({ action: 'unchanged', partitions: 5 });
    expect(shrink.topics[0]!.warnings).toEqual([expect.stringMatching(/never decreased/)]);
    expect(shrink.topics[0]!.refused).toMatchObject([
      { kind: 'cannot-decrease-partitions', current: 5, desired: 3 },
    ]);
    expect((await state(spec.name)).partitions).toBe(5);
  });

  it('restores drifted configs and keeps other values set on the topic', async () => {
    const spec = deadLetterTopicSpec(unique('drift'));
    await ensureTopics(admin, [spec]);
    await admin.alterConfigs({
      validateOnly: false,
      resources: [
        {
          type: 2,
          name: spec.name,
          configEntries: [
            { name: 'cleanup.policy', value: 'compact,delete' },
            { name: 'retention.ms', value: '1000' },
            { name: 'max.message.bytes', value: '4194304' },
            { name: 'segment.ms', value: '3600000' },
            { name: 'min.compaction.lag.ms', value: '60000' },
          ],
        },
      ],
    });
    await stateOnce(spec.name, 'retention.ms', '1000');
    const result = await ensureTopics(admin, [spec]);
    expect(result.topics[0]).toMatchObject({ action: 'updated', changedConfigs: ['retention.ms'] });
    const after = await stateOnce(spec.name, 'retention.ms', '604800000');
    expect(after.configs['cleanup.policy']).toBe('compact,delete');
    expect(after.configs['max.message.bytes']).toBe('4194304');
    expect(after.configs['min.compaction.lag.ms']).toBe('60000');
  });

  it('returns only once every partition has a leader, so a producer can send at once', async () => {
    const spec = { ...eventTopicSpec(unique('leaders')), partitions: 12 };
    await ensureTopics(admin, [spec]);
    const { topics } = await admin.fetchTopicMetadata({ topics: [spec.name] });
    expect(topics[0]!.partitions.every((p) => p.leader === 1)).toBe(true);
    const producer = kafka.producer({ retry: { retries: 0 } });
    await producer.connect();
    try {
      const messages = Array.from({ length: 12 }, (_, partition) => ({ partition, value: `p${partition}` }));
      const results = await producer.send({ topic: spec.name, acks: -1, messages });
      expect(results.every((r) => r.errorCode === 0)).toBe(true);
    } finally {
      await producer.disconnect();
    }
  });

  it('converges when several callers ensure the same topics at the same time', async () => {
    const specs = [eventTopicSpec(unique('race')), deadLetterTopicSpec(unique('race.dlq'))];
    const results = await Promise.all([ensureTopics(admin, specs), ensureTopics(admin, specs)]);
    const actions = results.flatMap((r) => r.topics.map((t) => t.action));
    expect(actions.filter((a) => a === 'created').length).toBeLessThanOrEqual(2);
    expect((await state(specs[0]!.name)).partitions).toBe(12);
    expect((await state(specs[1]!.name)).configs['cleanup.policy']).toBe('compact,delete');
  });

  it("lets the event topic take a maximal 1 MiB event with its headers (above Kafka's 1 MiB default)", async () => {
    const spec = eventTopicSpec(unique('large'));
    await ensureTopics(admin, [spec]);
    const producer = kafka.producer({ retry: { retries: 0 } });
    await producer.connect();
    try {
      const value = Buffer.alloc(1024 * 1024, 'x');
      const headers = { ce_id: 'a'.repeat(200), ce_source: 'b'.repeat(2000), ce_type: 'c'.repeat(200) };
      const [result] = await producer.send({
        topic: spec.name,
        acks: -1,
        messages: [{ key: 'k', value, headers }],
      });
      expect(result?.errorCode).toBe(0);
    } finally {
      await producer.disconnect();
    }
  });

  it('reads the states again when a listed topic is gone by the time its metadata is asked', async () => {
    const spec: TopicSpec = { ...eventTopicSpec(unique('kept')), partitions: 2 };
    await ensureTopics(admin, [spec]);
    // The first list still names a topic deleted right after it, as a list read during a deletion does.
    const deleted = unique('deleted');
    let lists = 0;
    const racing = new Proxy(admin, {
      get: (target, key) =>
        key === 'listTopics'
          ? async () => [...(await target.listTopics()), ...(lists++ === 0 ? [deleted] : [])]
          : Reflect.get(target, key),
    });
    const states = await readTopicStates(racing, [spec.name, deleted], ['retention.ms']);
    expect([...states.keys()]).toEqual([spec.name]);
    expect(states.get(spec.name)?.partitions).toBe(2);
    expect(lists).toBe(2);
  });

  it('deletes the topics that exist and passes over those already gone; the name is free again at once', async () => {
    const spec: TopicSpec = { ...eventTopicSpec(unique('gone')), partitions: 1 };
    await ensureTopics(admin, [spec]);
    const missing = unique('never-created');
    expect(await deleteTopics(admin, [spec.name, missing])).toEqual([spec.name]);
    expect(await admin.listTopics()).not.toContain(spec.name);
    expect(await deleteTopics(admin, [spec.name])).toEqual([]);
    await ensureTopics(admin, [{ ...spec, partitions: 3 }]);
    expect((await readTopicStates(admin, [spec.name], [])).get(spec.name)?.partitions).toBe(3);
  });
});
