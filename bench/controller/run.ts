/**
 * The controller with many Pipelines: how long until all are Ready, and how many status writes a
 * minute the flow health costs once they are (the write threshold and the flow period at work).
 * The controller loop (informer, queue, reconciler, flow observer) runs in this process on the
 * in-memory API server of the fast tests (services/controller/src/testing/fake-api-server.ts: every
 * status write is counted exactly, and no CRD is shared with other users of a cluster) and a
 * Kafka the devstack starts for the run. Each Pipeline has one small topic (1 partition) and a
 * consumer group committed at 0 on it; a share of the topics gets records during the steady
 * phase, so their lag moves while the others stand still.
 *
 *   node --conditions=source --import tsx bench/controller/run.ts
 *   BENCH_PIPELINES=1000 BENCH_BUSY_SHARE=0.1 BENCH_FLOW_PERIOD=10s BENCH_STEADY_SECONDS=120
 */
import { setTimeout as sleep } from 'node:timers/promises';
import {
  Controller,
  createControllerMetrics,
  FlowObserver,
  KafkaHandler,
  Reconciler,
} from '@event-observatory/controller';
import { FakeApiServer } from '@event-observatory/controller/testing';
import { kafkaClient, startKafka, tempDataDir } from '@event-observatory/devstack';
import { createLogger } from '@event-observatory/service-kit';
import { parseDuration } from '@event-observatory/service-kit/config';
import { Registry } from 'prom-client';
import { benchNumber, benchRun } from '../lib/report.js';

const PIPELINES = benchNumber('PIPELINES', 1000);
const BUSY_SHARE = benchNumber('BUSY_SHARE', 0.1);
const FLOW_PERIOD = process.env.BENCH_FLOW_PERIOD ?? '10s';
const PERIOD_MS = parseDuration(FLOW_PERIOD);
const STEADY_S = benchNumber('STEADY_SECONDS', 120);
const run = benchRun('controller');
const ns = 'bench';
const topic = (i: number) => `bench-ctl.t${i}`;
const group = (i: number) => `bench-ctl.g${i}`;

const kafkaHandle = await startKafka({ dataDir: tempDataDir('bench-controller-kafka') });
const kafka = kafkaClient(kafkaHandle.bootstrapServers, { clientId: 'bench-controller' });
const admin = kafka.admin();
const producer = kafka.producer();
await Promise.all([admin.connect(), producer.connect()]);
const log = createLogger({ service: 'controller', level: 'warn' });
const api = new FakeApiServer();
const servers = [kafkaHandle.bootstrapServers];
const handler = new KafkaHandler({ clientId: 'bench-controller', requestTimeoutMs: 10_000, logger: log });
const observer = new FlowObserver({
  api,
  kafka: handler,
  defaultServers: servers,
  allowedClusters: [servers],
  thresholds: { maxLag: 1000, maxDeadLettersPerMinute: 0 },
  rule: { ratio: 0.1, maxIntervalMs: 600_000 },
  log,
});
const writes = { reconcile: 0, flow: 0 };
const controller = new Controller({
  api,
  reconciler: new Reconciler({
    api,
    kafka: handler,
    defaultServers: servers,
    allowedClusters: [servers],
    controllerName: `${ns}/bench`,
    flow: observer,
    onStatusWrite: (cause) => writes[cause]++,
    log,
  }),
  metrics: createControllerMetrics(new Registry()),
  namespaces: [ns],
  flow: { observer, periodMs: PERIOD_MS },
  defaultServers: servers,
  resyncMs: 3_600_000, // the bench measures flow writes, not drift resyncs
  watchTimeoutMs: 300_000,
  stallMs: 310_000,
  backoff: { initialMs: 200, maxMs: 5_000 },
  log,
});
const busy = Array.from({ length: Math.round(PIPELINES * BUSY_SHARE) }, (_, i) => i);
const all = Array.from({ length: PIPELINES }, (_, i) => i);
const stored = (i: number) => api.get({ namespace: ns, name: `p${i}` });
const stopping = new AbortController();
const running = controller.run(stopping.signal);

try {
  const t0 = Date.now();
  for (const i of all)
    api.create({
      apiVersion: 'observatory.dev/v1alpha1',
      kind: 'Pipeline',
      metadata: { name: `p${i}`, namespace: ns, creationTimestamp: new Date().toISOString() },
      spec: {
        deletionPolicy: 'Retain',
        topics: [{ name: topic(i), partitions: 1, replicationFactor: 1 }],
        flow: { consumerGroup: group(i) },
      },
    });
  const ready = (i: number) =>
    stored(i)?.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True');
  while (!all.every(ready)) await sleep(1_000);
  const reconciledS = (Date.now() - t0) / 1000;
  // Each group committed at 0, as a consumer that has read nothing yet.
  for (let from = 0; from < PIPELINES; from += 20)
    await Promise.all(
      Array.from({ length: Math.min(20, PIPELINES - from) }, (_, k) =>
        admin.setOffsets({
          groupId: group(from + k),
          topic: topic(from + k),
          partitions: [{ partition: 0, offset: '0' }],
        }),
      ),
    );
  await sleep(3 * PERIOD_MS); // every Pipeline has its flow status
  const before = { ...writes };
  const t1 = Date.now();
  const load = setInterval(() => {
    for (const i of busy) void producer.send({ topic: topic(i), messages: [{ value: 'x' }, { value: 'y' }] });
  }, 1_000);
  await sleep(STEADY_S * 1000);
  clearInterval(load);
  const after = { ...writes };
  const minutes = (Date.now() - t1) / 60_000;
  const flowPerMin = (after.flow - before.flow) / minutes;
  const reconcilePerMin = (after.reconcile - before.reconcile) / minutes;
  const unthrottled = PIPELINES * (60_000 / PERIOD_MS);
  const withLag = all.filter((i) => typeof stored(i)?.status?.flow?.lag === 'number').length;
  run.write(`# Controller: ${PIPELINES} Pipelines, status writes per minute

${PIPELINES} Pipelines of one 1-partition topic each, flow read every ${FLOW_PERIOD}; ${busy.length} topics
receive 2 records a second during a ${STEADY_S} s steady phase, the others none.

| figure | value |
| --- | --- |
| all Pipelines Ready after | ${reconciledS.toFixed(0)} s |
| Pipelines with status.flow.lag at the end | ${withLag} |
| flow status writes per minute (steady) | ${flowPerMin.toFixed(1)} |
| reconcile status writes per minute (steady) | ${reconcilePerMin.toFixed(1)} |
| writes per minute if every reading were written | ${unthrottled.toFixed(0)} |
`);
} finally {
  stopping.abort();
  await running;
  await handler.close();
  await producer.disconnect();
  await admin.disconnect();
  await kafkaHandle.stop();
}
