import { rmSync } from 'node:fs';
import { DEAD_LETTER_TOPIC, EVENT_TOPIC } from '@event-observatory/broker';
import {
  rawProducer,
  type Stack,
  startStack,
  tempDataDir,
  topicRecordCount,
  withKafkaAdmin,
} from '@event-observatory/devstack';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { processesMentioning } from './processes.js';

// A stack of its own: this file stops and starts it, which must not disturb the shared one.
const dir = tempDataDir('restart-test');
let stack: Stack;

beforeAll(async () => {
  stack = await startStack({ dataDir: dir });
});
afterAll(async () => {
  await stack?.stop();
  rmSync(dir, { recursive: true, force: true });
});

function describeTopics(bootstrapServers: string) {
  return withKafkaAdmin(bootstrapServers, async (admin) => {
    const names = [EVENT_TOPIC, DEAD_LETTER_TOPIC];
    const { topics } = await admin.fetchTopicMetadata({ topics: names });
    const { resources } = await admin.describeConfigs({
      includeSynonyms: false,
      resources: names.map((name) => ({ type: 2, name, configNames: ['cleanup.policy', 'retention.ms'] })),
    });
    return names.map((name) => ({
      name,
      partitions: topics.find((t) => t.name === name)?.partitions.length,
      leaders: topics.find((t) => t.name === name)?.partitions.every((p) => p.leader === 1),
      configs: Object.fromEntries(
        (resources.find((r) => r.resourceName === name)?.configEntries ?? []).map((e) => [
          e.configName,
          e.configValue,
        ]),
      ),
    }));
  });
}

const expectedTopics = [
  {
    name: EVENT_TOPIC,
    partitions: 12,
    leaders: true,
    configs: { 'cleanup.policy': 'delete', 'retention.ms': '604800000' },
  },
  {
    name: DEAD_LETTER_TOPIC,
    partitions: 3,
    leaders: true,
    configs: { 'cleanup.policy': 'compact,delete', 'retention.ms': '604800000' },
  },
];

// A stop and a start of Kafka and PostgreSQL take seconds alone and took over two minutes on a
// loaded machine: the claims are about what survives, the bound only about never hanging.
describe('a stack restarted with stop() and start()', { timeout: 300_000 }, () => {
  it('keeps its ports, its topics (partitions, cleanup policy, retention), records and rows', async () => {
    expect(await describeTopics(stack.bootstrapServers)).toEqual(expectedTopics);
    const producer = await rawProducer(stack.bootstrapServers, { idempotent: true, maxInFlightRequests: 1 });
    await producer.send({
      topic: EVENT_TOPIC,
      acks: -1,
      messages: [{ key: 'k', value: 'before restart' }],
    });
    await producer.disconnect();
    const db = new pg.Client({ connectionString: stack.databaseUrl });
    await db.connect();
    await db.query('create table restart_probe (note text)');
    await db.query("insert into restart_probe values ('before restart')");
    await db.end();
    const { bootstrapServers, databaseUrl } = stack;
    const oldPids = [stack.kafka.pid(), stack.postgres.pid()];

    await stack.stop();
    expect(stack.kafka.pid()).toBeUndefined();
    expect(stack.postgres.pid()).toBeUndefined();
    for (const pid of oldPids) expect(processesMentioning(dir)).not.toContain(pid);
    await stack.start();

    expect(stack.bootstrapServers).toBe(bootstrapServers);
    expect(stack.databaseUrl).toBe(databaseUrl);
    expect(await describeTopics(stack.bootstrapServers)).toEqual(expectedTopics);
    expect(await topicRecordCount(stack.bootstrapServers, EVENT_TOPIC)).toBe(1);
    const again = new pg.Client({ connectionString: stack.databaseUrl });
    await again.connect();
    const { rows } = await again.query('select note from restart_probe');
    await again.end();
    expect(rows).toEqual([{ note: 'before restart' }]);
  });

  it('leaves no java or postgres process behind after stop()', async () => {
    expect(processesMentioning(dir).length).toBeGreaterThanOrEqual(2);
    await stack.stop();
    expect(processesMentioning(dir)).toEqual([]);
    await stack.start(); // afterAll stops it again
  });
});
