/**
 * Faults of a replicated Kafka: the pipeline on devstack's three-node KRaft cluster
 * (event topic with replication factor 3, `min.insync.replicas` 2), ingest reaching the brokers
 * through silent proxies. The leaders' broker killed, the in-sync replicas below the minimum, and
 * ingest cut off from Kafka without a closed connection; each under the same load and exact
 * reconciliation as faults.test.ts. One stack for the file; its table goes to `FAULT_REPORT` with
 * `-brokers` before the extension.
 */

import { randomUUID } from 'node:crypto';
import { EVENT_TOPIC } from '@event-observatory/broker';
import { type KafkaCluster, kafkaClient, withKafkaAdmin } from '@event-observatory/devstack';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LedgerRow } from '../lib/faults-ledger.js';
import { type Pipeline, startPipeline } from '../lib/faults-pipeline.js';
import { brokerFailures, expectExact, reportRows, SHED_FAILURES } from '../lib/faults-report.js';
import { PLAN, runFault, SOAK } from '../lib/faults-run.js';
import { until } from '../lib/faults-wait.js';

const runId = randomUUID().slice(0, 8);
/**
 * Ingest's delivery bound here (the default is 10 s): short, so the silent path is shed within
 * seconds; at least `BROKER_LINGER` + `BROKER_REQUEST_TIMEOUT`, as the service requires.
 */
const DELIVERY_TIMEOUT_MS = 6_000;
const REQUEST_TIMEOUT_MS = 3_000;
let p: Pipeline;
let cluster: KafkaCluster;
const rows: LedgerRow[] = [];
const startedAt = new Date().toISOString();

beforeAll(async () => {
  p = await startPipeline({
    name: 'faults-brokers',
    kafkaNodes: 3,
    ingestThroughPaths: true,
    ingestEnv: {
      BROKER_DELIVERY_TIMEOUT: `${DELIVERY_TIMEOUT_MS}ms`,
      BROKER_REQUEST_TIMEOUT: `${REQUEST_TIMEOUT_MS}ms`,
    },
  });
  if (!p.stack.kafkaCluster) throw new Error('the stack started no Kafka cluster');
  cluster = p.stack.kafkaCluster;
});

afterAll(async () => {
  reportRows({
    rows,
    title: 'Fault suite, three brokers',
    startedAt,
    path: process.env.FAULT_REPORT?.replace(/(\.md)?$/, '-brokers.md'),
    setup: 'Three KRaft nodes, replication factor 3, min.insync.replicas 2.',
  });
  await p?.close();
});

/** The event topic's partitions: leader and in-sync replicas of each, as the live brokers say. */
async function eventPartitions(): Promise<{ partitionId: number; leader: number; isr: number[] }[]> {
  return withKafkaAdmin(
    cluster.bootstrapServers,
    async (admin) => {
      const { topics } = await admin.fetchTopicMetadata({ topics: [EVENT_TOPIC] });
      return topics[0]?.partitions ?? [];
    },
    { clientId: 'faults-brokers', connectionTimeout: 1_000, requestTimeout: 3_000, retry: { retries: 2 } },
  );
}

/**
 * What the event topic holds at each lost event's partition and offset (the id in its `ce_id`
 * header, or why there is none), printed when a row lost events: was it lost by Kafka or after?
 */
async function lookUpLost(row: LedgerRow): Promise<void> {
  if (row.lost === 0) return;
  const kafka = kafkaClient(cluster.bootstrapServers, { clientId: 'faults-lost' });
  const offsets = await withKafkaAdmin(cluster.bootstrapServers, (admin) =>
    admin.fetchTopicOffsets(EVENT_TOPIC),
  );
  for (const lost of row.lostEvents) {
    const bounds = offsets.find((o) => o.partition === lost.partition);
    const consumer = kafka.consumer({ groupId: `faults-lost-${randomUUID()}` });
    await consumer.connect();
    await consumer.subscribe({ topic: EVENT_TOPIC });
    const found = await new Promise<string>((resolve) => {
      const timer = setTimeout(() => resolve('nothing read within 10 s'), 10_000);
      void consumer.run({
        eachMessage: async ({ partition, message }) => {
          if (partition !== lost.partition || Number(message.offset) !== lost.offset) return;
          clearTimeout(timer);
          resolve(`holds ce_id ${message.headers?.ce_id?.toString()}`);
        },
      });
      consumer.seek({ topic: EVENT_TOPIC, partition: lost.partition ?? 0, offset: String(lost.offset) });
    });
    await consumer.disconnect();
    console.log(
      `lost ${lost.id}: partition ${lost.partition} offset ${lost.offset} (log ${bounds?.low}..${bounds?.high}) ${found}`,
    );
  }
}

/** The node leading most partitions of the event topic. */
async function mainLeader(): Promise<number> {
  const counts = new Map<number, number>();
  for (const { leader } of await eventPartitions()) counts.set(leader, (counts.get(leader) ?? 0) + 1);
  return [...counts.entries()].sort((a, b) => b[1] - a[1])[0]?.[0] ?? -1;
}

/** Every partition back on three in-sync replicas (after a node's return), so faults do not overlap. */
function fullyReplicated(): Promise<void> {
  return until(
    'every event partition with 3 in-sync replicas',
    async () => (await eventPartitions().catch(() => [])).every((part) => part.isr.length === 3),
    60_000,
  );
}

describe('the pipeline on three brokers, every acknowledged event stored exactly once', () => {
  it('survives kill -9 of the broker leading the event topic: its partitions move to the others, lost 0', async () => {
    const killed = await mainLeader();
    const node = cluster.node(killed);
    const { row } = await runFault(p, runId, {
      name: 'leader broker kill -9',
      async begin() {
        await node.kill();
        // The controller fences the dead node (broker.session.timeout.ms) and elects new leaders
        // among the in-sync replicas.
        await until(
          `no partition led by the killed node ${killed}`,
          async () => (await eventPartitions().catch(() => [])).every((part) => part.leader !== killed),
          30_000,
        );
      },
      // The short form ends once the partitions moved (the fencing took seconds already).
      holdMs: SOAK ? PLAN.outageMs : 0,
      end: () => node.start(),
    });
    await lookUpLost(row);
    expectExact(rows, row);
    expect(row.deadLettered).toBe(0);
    await fullyReplicated();
  });

  it('refuses with 503 unpersistable while fewer than min.insync.replicas are in sync, and recovers', async () => {
    const stopped = cluster.nodes.slice(1);
    const { row, load } = await runFault(p, runId, {
      name: 'ISR below minimum',
      async begin(load) {
        // Graceful stops: each node's controlled shutdown takes it out of the in-sync replicas
        // while the quorum still stands; then one node, one replica, is left.
        for (const node of stopped) await node.stop();
        await until(
          'a send refused by the broker (503)',
          async () => load.outcomes.some((o) => o.answer === 503 && !SHED_FAILURES.has(o.failure ?? '')),
          30_000,
        );
      },
      holdMs: PLAN.outageMs,
      end: async () => {
        await Promise.all(stopped.map((node) => node.start()));
      },
    });
    await lookUpLost(row);
    expectExact(rows, row);
    expect(row.deadLettered).toBe(0);
    expect(brokerFailures(row).length).toBeGreaterThan(0);
    const refused = load.outcomes.filter((o) => o.answer === 503);
    expect(new Set(refused.map((o) => o.reason))).toEqual(new Set(['unpersistable']));
    await fullyReplicated();
  });

  it('sheds with 503 within BROKER_DELIVERY_TIMEOUT while the path to Kafka drops everything silently, and recovers', async () => {
    let heldAt = 0;
    const { row, load } = await runFault(p, runId, {
      name: 'ingest-Kafka path silent',
      async begin() {
        cluster.paths?.hold();
        heldAt = Date.now();
      },
      // Longer than the delivery bound, so sends fail on it.
      holdMs: DELIVERY_TIMEOUT_MS + PLAN.outageMs,
      end: async () => cluster.paths?.release(),
    });
    await lookUpLost(row);
    expectExact(rows, row);
    expect(row.deadLettered).toBe(0);
    expect(row.unavailable).toBeGreaterThan(0);
    // Every answer, 503 or not, came within the delivery bound (plus a loaded machine's slack):
    // nothing waited on the silent path longer.
    // A loop, not Math.max(...): the soak form has 100,000s of outcomes, past the argument limit.
    const slowest = load.outcomes
      .filter((o) => o.sentAt >= heldAt)
      .reduce((max, o) => Math.max(max, o.answeredAt - o.sentAt), 0);
    expect(slowest).toBeLessThan(DELIVERY_TIMEOUT_MS + 3_000);
  });
});
