/**
 * Consumers rebalancing on the cluster: the chart installed against the suite's Kafka
 * (PLAINTEXT) and PostgreSQL with one consumer pod; a steady load of unique events through the
 * ingest Service, spread over all 12 partitions (240 subjects, so 240 partition keys); the
 * consumer Deployment scaled 1 -> 3 -> 1 while the load runs. Then, against the store and the
 * broker: every acknowledged event stored exactly once (counted by id), the group's lag back to 0,
 * and the consumers' duplicate meters (consume_records_duplicate_total, read from every consumer
 * pod while it lived) showing the redeliveries that the store's unique key absorbed.
 *
 * The topic is made by the suite (12 partitions) and the controller is off: only ingest, the
 * consumer and search run, to keep the install short (lib/consumer-group.ts, shared with keda.test.ts).
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { binaryHeaders } from './lib/cloudevents.js';
import { ConsumerScalingSuite, PARTITIONS, waitFor } from './lib/consumer-group.js';

const suite = new ConsumerScalingSuite('scaling', 'scale');
const { run: suffix, consumer: CONSUMER } = suite;
const SUBJECTS = 240;
/** Acknowledged events the load must reach before it stops: enough to fill every partition. */
const MIN_ACKNOWLEDGED = 200;

/** Stops what a test left running when it failed half-way. */
const stops: (() => Promise<void>)[] = [];

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** The distinct reasons of refused or failed sends, each with its count, most frequent first. */
function reasons(failed: string[]): string {
  const counts = new Map<string, number>();
  for (const f of failed) counts.set(f, (counts.get(f) ?? 0) + 1);
  return [...counts]
    .sort((a, b) => b[1] - a[1])
    .slice(0, 5)
    .map(([r, n]) => `${n} x ${r}`)
    .join('; ');
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
          headers: binaryHeaders(suite.token, {
            id,
            source: '/consumer-scaling',
            type: 'com.example.scaling.test',
            subject,
          }),
          body: JSON.stringify({ id }),
          signal: AbortSignal.timeout(15_000),
        });
        const body = await res.text();
        if (res.status === 200) acknowledged.push(id);
        else failed.push(`${res.status} ${body.slice(0, 160)}`);
      } catch (e) {
        failed.push((e as Error).message);
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

async function scaleConsumer(replicas: number): Promise<void> {
  const t0 = Date.now();
  await suite.ns.kubectl(['scale', 'deployment', CONSUMER, `--replicas=${replicas}`]);
  await suite.ns.rolloutStatus(CONSUMER, 120_000);
  suite.log(`consumer scaled to ${replicas} in ${Math.round((Date.now() - t0) / 1000)} s`);
}

beforeAll(async () => {
  await suite.install({});
  // First in afterAll: the load and the meters, before the release goes.
  suite.onCleanup(async () => {
    for (const stop of stops) await stop();
  });
}, 300_000);

describe('the consumer Deployment scaled 1 -> 3 -> 1 under load', () => {
  it('stores every acknowledged event once, shares the 12 partitions among 3 pods, and its lag returns to 0', async () => {
    const ingest = await suite.ingest();
    const meters = suite.watchDuplicateMeters();
    const load = startLoad(ingest, 4);
    stops.push(meters.stop, load.stop);
    const t0 = Date.now();
    let shared: number[][];
    try {
      await sleep(8_000);
      await scaleConsumer(3);
      // The three pods join one group: the next rebalance gives each a share of the partitions.
      shared = await suite.shared(3, 60_000);
      await sleep(8_000);
      await scaleConsumer(1);
      // The one left takes every partition back once the two pods scaled away have left the group.
      await waitFor(async () => {
        const members = await suite.assignments();
        expect(members).toHaveLength(1);
        expect(members[0]).toHaveLength(PARTITIONS);
      }, 90_000);
      // On a loaded node ingest answers slowly: the load goes on until it has been enough.
      const until = Date.now() + 90_000;
      do await sleep(1_000);
      while (load.acknowledged.length < MIN_ACKNOWLEDGED && Date.now() < until);
    } finally {
      await load.stop();
    }
    const loadSeconds = (Date.now() - t0) / 1000;
    const { acknowledged, failed } = load;

    expect(shared.flat().sort((a, b) => a - b)).toEqual([...Array(PARTITIONS).keys()]);
    // Every partition received events (the subjects are the partition keys).
    const ends = await suite.admin.fetchTopicOffsets(suite.topic);
    expect(ends.filter((p) => Number(p.high) > 0)).toHaveLength(PARTITIONS);

    const { counts, twice } = await suite.stored(acknowledged, 90_000);
    const lag = await suite.drained(60_000);
    await meters.stop();
    const duplicates = meters.total();
    suite.log(
      `${acknowledged.length} acknowledged at ${Math.round(acknowledged.length / loadSeconds)}/s over ${PARTITIONS} partitions, ` +
        `${failed.length} refused (${reasons(failed) || 'none'}), lost ${acknowledged.length - counts.length}, ` +
        `duplicates absorbed ${duplicates} (meters of ${meters.pods.size} pods), lag ${lag}`,
    );
    expect(acknowledged.length, `refused or failed: ${reasons(failed)}`).toBeGreaterThanOrEqual(
      MIN_ACKNOWLEDGED,
    );
    expect(counts.filter((r) => r.n !== '1')).toEqual([]); // stored exactly once
    expect(twice).toEqual([]);
    expect(lag).toBe(0);
    // Every pod that ran (one, three, one: at least three) was read; redeliveries after the
    // rebalances, if any, show there as absorbed duplicates, not as rows.
    expect(meters.pods.size).toBeGreaterThanOrEqual(3);
  }, 330_000);
});
