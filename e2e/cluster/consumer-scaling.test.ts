/**
 * Issue 32, "consumers rebalancing" on the cluster: the chart installed against the suite's Kafka
 * (PLAINTEXT) and PostgreSQL with one consumer pod; a steady load of unique events through the
 * ingest Service, spread over all 12 partitions (240 subjects, so 240 partition keys); the
 * consumer Deployment scaled 1 -> 3 -> 1 while the load runs. Then, against the store and the
 * broker: every acknowledged event stored exactly once (counted by id), the group's lag back to 0,
 * and the consumers' duplicate meters (consume_records_duplicate_total, read from every consumer
 * pod while it lived) showing the redeliveries that the store's unique key absorbed.
 *
 * The topic is made by the suite (12 partitions) and the controller is off: only ingest, the
 * consumer and search run, to keep the install short.
 */
import { randomUUID } from 'node:crypto';
import { createDatabase } from '@event-observatory/devstack';
import { randomDevSecret, signDevToken } from '@event-observatory/service-kit';
import { type Admin, AssignerProtocol, Kafka, logLevel } from 'kafkajs';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, inject, it, vi } from 'vitest';
import { binaryHeaders } from './lib/cloudevents.js';
import { baseInstall, Helm, setArgs } from './lib/helm.js';
import { createPipelineTopics } from './lib/kafka.js';
import { Kube, type TestNamespace } from './lib/kube.js';

const cluster = inject('cluster');
const podStack = inject('podStack');
const kube = new Kube(cluster.kubeconfig);
const helm = new Helm(cluster.kubeconfig);
const RELEASE = 'scale';
const PARTITIONS = 12;
const SUBJECTS = 240;
const suffix = randomUUID().slice(0, 8);
const topic = `scaling-e2e.${suffix}`;
const groupId = `scaling-e2e-${suffix}`;
const CONSUMER = `${RELEASE}-consumer`;
const CONSUMER_PODS = `app.kubernetes.io/instance=${RELEASE},app.kubernetes.io/name=consumer`;

let ns: TestNamespace;
let db: pg.Pool;
let admin: Admin;
let token: string;
let installed = false;
/** Stops what a test left running when it failed half-way. */
const stops: (() => Promise<void>)[] = [];

const log = (line: string) => process.stderr.write(`[consumer-scaling] ${line}\n`);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

const waitFor = <T>(check: () => Promise<T>, timeout: number) =>
  vi.waitFor(check, { timeout, interval: 1_000 });

/** Records the group has not committed yet, over every partition of the topic. */
async function groupLag(): Promise<number> {
  const [ends, [committed]] = await Promise.all([
    admin.fetchTopicOffsets(topic),
    admin.fetchOffsets({ groupId, topics: [topic] }),
  ]);
  const done = new Map(committed?.partitions.map((p) => [p.partition, Number(p.offset)]));
  return ends.reduce(
    (lag, p) => lag + Number(p.high) - Math.max(done.get(p.partition) ?? 0, Number(p.low)),
    0,
  );
}

/** The group's members and the partitions each one holds (RoundRobinAssigner's encoding). */
async function assignments(): Promise<number[][]> {
  const { groups } = await admin.describeGroups([groupId]);
  return (groups[0]?.members ?? []).map(
    (m) => AssignerProtocol.MemberAssignment.decode(m.memberAssignment)?.assignment[topic] ?? [],
  );
}

/** Unique events POSTed through the ingest Service by a few workers until stopped. */
function startLoad(ingest: string, workers: number) {
  const acknowledged: string[] = [];
  const failed: string[] = [];
  let stopped = false;
  let n = 0;
  const worker = async () => {
    while (!stopped && n < 20_000) {
      const id = `scale-${suffix}-${n}`;
      const subject = `s-${n % SUBJECTS}`;
      n++;
      try {
        const res = await fetch(`http://${ingest}/v1/events`, {
          method: 'POST',
          headers: binaryHeaders(token, {
            id,
            source: '/consumer-scaling',
            type: 'com.example.scaling.test',
            subject,
          }),
          body: JSON.stringify({ id }),
          signal: AbortSignal.timeout(15_000),
        });
        await res.arrayBuffer();
        if (res.status === 200) acknowledged.push(id);
        else failed.push(`${id}: ${res.status}`);
      } catch (e) {
        failed.push(`${id}: ${(e as Error).message}`);
      }
      await sleep(80);
    }
  };
  const running = Array.from({ length: workers }, worker);
  return {
    acknowledged,
    failed,
    stop: async () => {
      stopped = true;
      await Promise.all(running);
    },
  };
}

/**
 * Reads consume_records_duplicate_total from every consumer pod every second; a counter only
 * grows, so the last reading of each pod (also of pods scaled away) is its total.
 */
function watchDuplicateMeters() {
  const last = new Map<string, number>();
  let stopped = false;
  const loop = (async () => {
    while (!stopped) {
      const pods = await kube
        .getJson<{ items: { metadata: { name: string }; status: { podIP?: string } }[] }>([
          'pods',
          '--namespace',
          ns.name,
          '-l',
          CONSUMER_PODS,
        ])
        .catch(() => ({ items: [] }));
      await Promise.all(
        pods.items.map(async (p) => {
          if (!p.status.podIP) return;
          const text = await fetch(`http://${p.status.podIP}:8080/metrics`, {
            signal: AbortSignal.timeout(2_000),
          })
            .then((r) => r.text())
            .catch(() => '');
          const match = /^consume_records_duplicate_total(?:\{[^}]*\})? (\d+)/m.exec(text);
          if (match) last.set(p.metadata.name, Number(match[1]));
        }),
      );
      await sleep(1_000);
    }
  })();
  return {
    pods: last,
    stop: async () => {
      stopped = true;
      await loop;
    },
  };
}

async function scaleConsumer(replicas: number): Promise<void> {
  const t0 = Date.now();
  await ns.kubectl(['scale', 'deployment', CONSUMER, `--replicas=${replicas}`]);
  await ns.rolloutStatus(CONSUMER, 120_000);
  log(`consumer scaled to ${replicas} in ${Math.round((Date.now() - t0) / 1000)} s`);
}

beforeAll(async () => {
  const t0 = Date.now();
  ns = await kube.createNamespace('scaling');
  const kafka = new Kafka({
    clientId: 'scaling-e2e',
    brokers: [podStack.bootstrapServers],
    logLevel: logLevel.NOTHING,
  });
  admin = kafka.admin();
  await admin.connect();
  await createPipelineTopics(podStack.bootstrapServers, topic, PARTITIONS);

  const databaseUrl = await createDatabase(podStack.databaseUrl, `scaling_${suffix}`);
  db = new pg.Pool({ connectionString: databaseUrl, max: 2 });
  const authSecret = randomDevSecret();
  token = await signDevToken({
    secret: authSecret,
    scopes: ['events:write'],
    audience: 'observatory-ingest',
    ttl: '1h',
  });
  const base = await baseInstall(cluster.images, { ns, name: 'scaling-secrets', databaseUrl, authSecret });
  await helm
    .install(RELEASE, ns.name, [
      ...setArgs({
        ...base.values,
        'kafka.bootstrapServers': podStack.bootstrapServers,
        'kafka.groupId': groupId,
        'pipeline.create': false,
        'pipeline.topic': topic,
        'controller.enabled': false,
        'ingest.replicas': 1,
        'consumer.replicas': 1,
        'search.replicas': 1,
      }),
      ...base.resourceArgs,
    ])
    .catch(async (error: Error) => {
      // What kept the release from Ready, before afterAll deletes the namespace.
      log(await ns.kubectl(['get', 'pods', '-o', 'wide']).catch((e: Error) => e.message));
      for (const pod of (await ns.pods('app.kubernetes.io/part-of=event-observatory')).map(
        (p) => p.metadata.name,
      ))
        log(`${pod}: ${(await ns.logs(pod).catch((e: Error) => e.message)).slice(-1500)}`);
      throw error;
    });
  installed = true;
  log(`installed in ${Math.round((Date.now() - t0) / 1000)} s`);
}, 300_000);

afterAll(async () => {
  for (const stop of stops) await stop();
  await db?.end();
  if (installed) await helm.run(['uninstall', RELEASE, '--namespace', ns.name, '--wait']).catch(() => {});
  await ns?.delete();
  await admin?.deleteTopics({ topics: [topic, `${topic}.dlq`] }).catch(() => {});
  await admin?.deleteGroups([groupId]).catch(() => {});
  await admin?.disconnect();
});

describe('the consumer Deployment scaled 1 -> 3 -> 1 under load', () => {
  it('stores every acknowledged event once, shares the 12 partitions among 3 pods, and its lag returns to 0', async () => {
    const svc = await kube.getJson<{ spec: { clusterIP: string } }>([
      'service',
      `${RELEASE}-ingest`,
      '--namespace',
      ns.name,
    ]);
    const ingest = `${svc.spec.clusterIP}:8080`;
    const meters = watchDuplicateMeters();
    const load = startLoad(ingest, 4);
    stops.push(meters.stop, load.stop);
    const t0 = Date.now();
    let shared: number[][];
    try {
      await sleep(8_000);
      await scaleConsumer(3);
      // The three pods join one group: the next rebalance gives each a share of the partitions.
      shared = await waitFor(async () => {
        const members = await assignments();
        expect(members).toHaveLength(3);
        expect(members.flat()).toHaveLength(PARTITIONS);
        for (const m of members) expect(m.length).toBeGreaterThan(0);
        return members;
      }, 60_000);
      await sleep(8_000);
      await scaleConsumer(1);
      // The one left takes every partition back once the two pods scaled away have left the group.
      await waitFor(async () => {
        const members = await assignments();
        expect(members).toHaveLength(1);
        expect(members[0]).toHaveLength(PARTITIONS);
      }, 90_000);
      await sleep(5_000);
    } finally {
      await load.stop();
    }
    const loadSeconds = (Date.now() - t0) / 1000;
    const { acknowledged, failed } = load;

    expect(shared.flat().sort((a, b) => a - b)).toEqual([...Array(PARTITIONS).keys()]);
    // Every partition received events (the subjects are the partition keys).
    const ends = await admin.fetchTopicOffsets(topic);
    expect(ends.filter((p) => Number(p.high) > 0)).toHaveLength(PARTITIONS);

    const counts = await waitFor(async () => {
      const { rows } = await db.query<{ ce_id: string; n: string }>(
        'SELECT ce_id, count(*) AS n FROM events.cloud_event WHERE ce_id = ANY($1) GROUP BY ce_id',
        [acknowledged],
      );
      expect(rows.length, 'acknowledged events in the store').toBe(acknowledged.length);
      return rows;
    }, 90_000);
    const lag = await waitFor(async () => {
      const lag = await groupLag();
      expect(lag, 'group lag').toBe(0);
      return lag;
    }, 60_000);
    await meters.stop();
    const duplicates = [...meters.pods.values()].reduce((a, b) => a + b, 0);
    // No id twice in the whole store (a refused request may still have been stored: once).
    const { rows: twice } = await db.query<{ ce_id: string }>(
      'SELECT ce_id FROM events.cloud_event GROUP BY ce_source, ce_id HAVING count(*) > 1',
    );
    log(
      `${acknowledged.length} acknowledged at ${Math.round(acknowledged.length / loadSeconds)}/s over ${PARTITIONS} partitions, ` +
        `${failed.length} refused, lost ${acknowledged.length - counts.length}, ` +
        `duplicates absorbed ${duplicates} (meters of ${meters.pods.size} pods), lag ${lag}`,
    );
    expect(acknowledged.length).toBeGreaterThan(200);
    expect(counts.filter((r) => r.n !== '1')).toEqual([]); // stored exactly once
    expect(twice).toEqual([]);
    expect(lag).toBe(0);
    // Every pod that ran (one, three, one: at least three) was read; redeliveries after the
    // rebalances, if any, show there as absorbed duplicates, not as rows.
    expect(meters.pods.size).toBeGreaterThanOrEqual(3);
  }, 240_000);
});
