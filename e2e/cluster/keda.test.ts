/**
 * The consumer scaled on its group's lag by KEDA on the real cluster: KEDA deployed by
 * scripts/cluster/keda.sh (operator, metrics adapter, the external metrics APIService), the chart
 * installed with `consumer.autoscaling.keda` on (1 to 3 pods, lagThreshold 200, polling every
 * 5 s, a 20 s scale-down window). A backlog of 6,000 events is posted through ingest in batches;
 * the consumer is held to a fixed pace (the test-only CONSUMER_TEST_HOLD_AFTER_WRITE of 500 ms after
 * each chunk of 4 records, per partition: at most 96 records/s for the group, whatever the
 * pod count), so the backlog lasts over a minute on any machine and the scaling cannot be missed.
 * The HPA that KEDA made (named by the ScaledObject's status) scales the Deployment 1 -> 3 while
 * the lag is above 2 x 200; three members share the 12 partitions; the lag drains to 0; the HPA
 * scales back to 1, and the one pod left holds every partition. Every acknowledged event is stored
 * exactly once (counted by id); redeliveries after the rebalances show as absorbed duplicates.
 *
 * Soak, not `make test` (`make test-keda`): KEDA's cold build takes about half an hour on 2 cores.
 * Our own cluster only (KEDA's images are imported into its containerd). KEDA is removed again at
 * the end (the CRDs stay).
 */
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { beforeAll, describe, expect, it } from 'vitest';
import { ADDON_DEPLOY_TIMEOUT_MS, ADDON_SUITE_SETUP_MS, REPO_ROOT } from './lib/cluster.js';
import { ConsumerScalingSuite, PARTITIONS, waitFor } from './lib/consumer-group.js';
import { pollUntil } from './lib/poll.js';

const run = promisify(execFile);
// afterAll: the release (its ScaledObject, whose finalizer needs the operator), then KEDA.
const suite = new ConsumerScalingSuite('keda', 'keda', { cleanupTimeoutMs: 10 * 60_000 });
const { cluster, consumer: CONSUMER } = suite;
const MAX_REPLICAS = 3;
const LAG_THRESHOLD = 200;
const BACKLOG = 6_000;
const BATCH = 100;
const SUBJECTS = 240; // partition keys: every partition gets a share
// About 4 KiB an event: a fetch of 256 KiB a partition holds ~60 records, which the held pace
// works through in ~8 s, so a rebalance waits no longer than that for the members to rejoin.
const PAD = 'x'.repeat(4_000);

const keda = (command: 'deploy' | 'delete') =>
  run(join(REPO_ROOT, 'scripts/cluster/keda.sh'), [command], {
    env: { ...process.env, KUBECONFIG: cluster.kubeconfig },
    timeout: ADDON_DEPLOY_TIMEOUT_MS,
  });

/** The backlog: unique events in batches through the ingest Service; the ids ingest acknowledged. */
async function postBacklog(ingest: string): Promise<{ acknowledged: string[]; failed: string[] }> {
  const acknowledged: string[] = [];
  const failed: string[] = [];
  let next = 0;
  const worker = async () => {
    while (next < BACKLOG) {
      const first = next;
      next += BATCH;
      const events = Array.from({ length: BATCH }, (_, i) => ({
        specversion: '1.0',
        id: `keda-${suite.run}-${first + i}`,
        source: '/keda-e2e',
        type: 'com.example.keda.test',
        subject: `s-${(first + i) % SUBJECTS}`,
        time: new Date().toISOString(),
        datacontenttype: 'application/json',
        data: { n: first + i, pad: PAD },
      }));
      try {
        const res = await fetch(`http://${ingest}/v1/events:batchCreate`, {
          method: 'POST',
          headers: {
            authorization: `Bearer ${suite.token}`,
            'content-type': 'application/cloudevents-batch+json',
          },
          body: JSON.stringify(events),
          signal: AbortSignal.timeout(30_000),
        });
        const text = await res.text();
        if (res.status !== 200) {
          failed.push(`${first}..: ${res.status} ${text.slice(0, 200)}`);
          continue;
        }
        const { entries } = JSON.parse(text) as { entries: { index: number; event?: unknown }[] };
        for (const e of entries)
          if (e.event) acknowledged.push(events[e.index]!.id);
          else failed.push(`${events[e.index]!.id}: ${JSON.stringify(e).slice(0, 200)}`);
      } catch (e) {
        failed.push(`${first}..: ${(e as Error).message}`);
      }
    }
  };
  await Promise.all([worker(), worker(), worker()]);
  return { acknowledged, failed };
}

interface Condition {
  type: string;
  status: string;
}

interface Scale {
  /** The Deployment's replicas (what the HPA set), its ready pods, consumer pods that exist. */
  replicas: number;
  ready: number;
  pods: number;
  /** The HPA's desired replicas and its reading of the lag metric (average per pod). */
  desired: number;
  metric?: string;
  /** The ScaledObject's Active condition (lag above the activation threshold, 0). */
  active?: string;
  lag: number;
}

let hpaName = '';

async function scale(): Promise<Scale> {
  const [deployment, hpa, pods, scaled, lag] = await Promise.all([
    suite.kube.getJson<{ spec: { replicas: number }; status: { readyReplicas?: number } }>([
      'deployment',
      CONSUMER,
      '-n',
      suite.ns.name,
    ]),
    suite.kube.getJson<{
      status: {
        desiredReplicas: number;
        currentMetrics?: { external?: { current: { averageValue?: string } } }[];
      };
    }>(['hpa', hpaName, '-n', suite.ns.name]),
    suite.kube.getJson<{ items: unknown[] }>(['pods', '-n', suite.ns.name, '-l', suite.consumerPods]),
    suite.kube.getJson<{ status: { conditions?: Condition[] } }>([
      'scaledobject',
      CONSUMER,
      '-n',
      suite.ns.name,
    ]),
    suite.groupLag(),
  ]);
  return {
    replicas: deployment.spec.replicas,
    ready: deployment.status.readyReplicas ?? 0,
    pods: pods.items.length,
    desired: hpa.status.desiredReplicas,
    metric: hpa.status.currentMetrics?.[0]?.external?.current.averageValue,
    active: scaled.status.conditions?.find((c) => c.type === 'Active')?.status,
    lag,
  };
}

/** Polls the scale every 2 s until `done` holds; logs each change. */
function until(what: string, timeoutMs: number, done: (s: Scale) => boolean): Promise<Scale> {
  return pollUntil({
    what,
    timeoutMs,
    read: scale,
    line: (s) =>
      `replicas ${s.replicas}, ready ${s.ready}, pods ${s.pods}; HPA desired ${s.desired}, metric ${s.metric ?? '-'}; active ${s.active ?? '-'}; lag ${s.lag}`,
    done,
    log: (line) => suite.log(line),
  });
}

/**
 * KEDA took the ScaledObject (Ready) and made an HPA for it, named in its status, owned by it,
 * aimed at the consumer Deployment with the chart's bounds: that HPA's name.
 */
async function kedaHpa(): Promise<string> {
  const name = await waitFor(async () => {
    const so = await suite.kube.getJson<{ status: { hpaName?: string; conditions?: Condition[] } }>([
      'scaledobject',
      CONSUMER,
      '-n',
      suite.ns.name,
    ]);
    expect(so.status.conditions?.find((c) => c.type === 'Ready')?.status).toBe('True');
    expect(so.status.hpaName).toBeTruthy();
    return so.status.hpaName as string;
  }, 60_000);
  const hpa = await suite.kube.getJson<{
    metadata: { ownerReferences?: { kind: string; name: string }[] };
    spec: { scaleTargetRef: { kind: string; name: string }; minReplicas: number; maxReplicas: number };
  }>(['hpa', name, '-n', suite.ns.name]);
  expect(hpa.metadata.ownerReferences?.map((o) => `${o.kind}/${o.name}`)).toEqual([
    `ScaledObject/${CONSUMER}`,
  ]);
  expect(hpa.spec.scaleTargetRef).toMatchObject({ kind: 'Deployment', name: CONSUMER });
  expect([hpa.spec.minReplicas, hpa.spec.maxReplicas]).toEqual([1, MAX_REPLICAS]);
  return name;
}

beforeAll(async () => {
  if (!cluster.local) return;
  const t0 = Date.now();
  suite.onCleanup(() => keda('delete').catch((e: Error) => suite.log(`keda.sh delete: ${e.message}`)));
  await keda('deploy');
  suite.log(`KEDA deployed in ${Math.round((Date.now() - t0) / 1000)} s`);
  await suite.install({
    'consumer.autoscaling.keda.enabled': true,
    'consumer.autoscaling.keda.minReplicas': 1,
    'consumer.autoscaling.keda.maxReplicas': MAX_REPLICAS,
    'consumer.autoscaling.keda.lagThreshold': LAG_THRESHOLD,
    'consumer.autoscaling.keda.pollingIntervalSeconds': 5,
    'consumer.autoscaling.keda.scaleDownStabilizationSeconds': 20,
    'consumer.extraEnv.CONSUMER_BATCH_SIZE': '4',
    'consumer.extraEnv.CONSUMER_TEST_HOLD_AFTER_WRITE': '500ms',
    'consumer.logLevel': 'warn', // the hold logs every chunk at info
    // Not under test: they leave quickly when scaled in or when the namespace goes.
    'consumer.preStopDelaySeconds': 1,
    'search.preStopDelaySeconds': 1,
  });
}, ADDON_SUITE_SETUP_MS);

describe.skipIf(!cluster.local)("the consumer under KEDA's ScaledObject (Kafka scaler)", () => {
  it(
    'scales 1 -> 3 on a backlog, drains it with every event stored once, and scales back to 1',
    async () => {
      hpaName = await kedaHpa();
      const idle = await until('one idle consumer', 60_000, (s) => s.replicas === 1 && s.ready === 1);
      expect(idle.lag).toBe(0);

      const meters = suite.watchDuplicateMeters();
      try {
        const t0 = Date.now();
        const { acknowledged, failed } = await postBacklog(await suite.ingest());
        const posted = Math.round((Date.now() - t0) / 1000);
        suite.log(`${acknowledged.length} events acknowledged in ${posted} s, ${failed.length} refused`);
        expect(failed).toEqual([]);
        expect(acknowledged).toHaveLength(BACKLOG);

        // Out: the HPA reads a lag far above 2 x the threshold and asks for the maximum; KEDA's own
        // loop marks the ScaledObject active at its next polling.
        const out = await until(
          `${MAX_REPLICAS} ready consumer pods, the ScaledObject active`,
          120_000,
          (s) =>
            s.desired === MAX_REPLICAS &&
            s.replicas === MAX_REPLICAS &&
            s.ready === MAX_REPLICAS &&
            s.active === 'True',
        );
        const scaledOut = Math.round((Date.now() - t0) / 1000);
        expect(out.lag).toBeGreaterThan(0);
        // The three pods join the group: each gets a share of the 12 partitions.
        const shares = await suite.shared(MAX_REPLICAS, 90_000);
        suite.log(`shares ${JSON.stringify(shares)}`);

        const lag = await suite.drained(300_000);
        const drained = Math.round((Date.now() - t0) / 1000);
        // In: no lag, the ScaledObject inactive, and after the scale-down window the HPA's minimum.
        const back = await until(
          'one consumer pod, the others gone, the ScaledObject inactive',
          180_000,
          (s) => s.replicas === 1 && s.pods === 1 && s.active === 'False',
        );
        const scaledIn = Math.round((Date.now() - t0) / 1000);
        await suite.shared(1, 90_000);
        expect(back.desired).toBe(1);

        const { counts, twice } = await suite.stored(acknowledged, 90_000);
        await meters.stop();
        suite.log(
          `backlog ${acknowledged.length} over ${PARTITIONS} partitions: out to ${MAX_REPLICAS} at ${scaledOut} s, ` +
            `lag 0 at ${drained} s, back to 1 at ${scaledIn} s; stored ${counts.length}, ` +
            `duplicates absorbed ${meters.total()} (meters of ${meters.pods.size} pods)`,
        );
        expect(lag).toBe(0);
        expect(counts.filter((r) => r.n !== '1')).toEqual([]); // stored exactly once
        expect(twice).toEqual([]);
        // Every pod that ran (one, then three) was read.
        expect(meters.pods.size).toBeGreaterThanOrEqual(MAX_REPLICAS);
      } finally {
        await meters.stop();
      }
    },
    15 * 60_000,
  );
});
