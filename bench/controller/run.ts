/**
 * The controller with many Pipelines: how long until all are Ready, and how many status writes a
 * minute the flow health costs once they are (the write threshold and the flow period at work).
 * A controller runs in this process against the API server of KUBECONFIG (default the running
 * `make cluster`) and a Kafka the devstack starts for the run. Each Pipeline has one small topic
 * (1 partition) and a consumer group committed at 0 on it; a share of the topics gets records
 * during the steady phase, so their lag moves while the others stand still.
 *
 *   node --conditions=source --import tsx bench/controller/run.ts
 *   BENCH_PIPELINES=1000 BENCH_BUSY_SHARE=0.1 BENCH_FLOW_PERIOD=10s BENCH_STEADY_SECONDS=120
 *
 * Everything it made (namespace, topics, Kafka) is removed at the end.
 */
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { createControllerService, type Pipeline, readControllerConfig } from '@event-observatory/controller';
import { repoRoot, startKafka, tempDataDir } from '@event-observatory/devstack';
import { createLogger, createMetrics } from '@event-observatory/service-kit';
import { parseDuration } from '@event-observatory/service-kit/config';
import { KubeConfig } from '@kubernetes/client-node';
import { Kafka, logLevel } from 'kafkajs';
import { benchRun } from '../lib/report.js';

const PIPELINES = Number(process.env.BENCH_PIPELINES ?? 1000);
const BUSY_SHARE = Number(process.env.BENCH_BUSY_SHARE ?? 0.1);
const FLOW_PERIOD = process.env.BENCH_FLOW_PERIOD ?? '10s';
const PERIOD_MS = parseDuration(FLOW_PERIOD);
const STEADY_S = Number(process.env.BENCH_STEADY_SECONDS ?? 120);
const kubeconfig = process.env.KUBECONFIG ?? join(repoRoot(), '.dev/kubeconfig');
const run = benchRun('controller');
const ns = `bench-ctl-${Math.random().toString(36).slice(2, 8)}`;
const kubectl = (args: string[], input?: string) =>
  execFileSync('kubectl', ['--kubeconfig', kubeconfig, ...args], {
    input,
    encoding: 'utf8',
    maxBuffer: 256 * 1024 * 1024,
  });
const topic = (i: number) => `${ns}.t${i}`;
const group = (i: number) => `${ns}.g${i}`;

const kafkaHandle = await startKafka({ dataDir: tempDataDir('bench-controller-kafka') });
const kafka = new Kafka({ brokers: [kafkaHandle.bootstrapServers], logLevel: logLevel.NOTHING });
const admin = kafka.admin();
const producer = kafka.producer();
await Promise.all([admin.connect(), producer.connect()]);
kubectl(['apply', '--server-side', '--force-conflicts', '-f', join(repoRoot(), 'crds/pipeline.yaml')]);
kubectl(['create', 'namespace', ns]);
const kubeConfig = new KubeConfig();
kubeConfig.loadFromFile(kubeconfig);
const { registry } = createMetrics({ service: 'controller', defaultMetrics: false });
const controller = createControllerService({
  config: readControllerConfig({
    BROKER_BOOTSTRAP_SERVERS: kafkaHandle.bootstrapServers,
    CONTROLLER_WATCH_NAMESPACE: ns,
    CONTROLLER_LEASE_NAMESPACE: ns,
    CONTROLLER_FLOW_PERIOD: FLOW_PERIOD,
    CONTROLLER_RESYNC_PERIOD: '1h', // the bench measures flow writes, not drift resyncs
  }),
  kubeConfig,
  registry,
  logger: createLogger({ service: 'controller', level: 'warn' }),
});
const writes = async () => {
  const values = (await registry.getSingleMetric('controller_status_writes_total')?.get())?.values ?? [];
  return Object.fromEntries(values.map((v) => [v.labels.cause, v.value])) as Record<string, number>;
};
const statuses = () =>
  (JSON.parse(kubectl(['get', 'pipelines', '-n', ns, '-o', 'json'])) as { items: Pipeline[] }).items;
const busy = Array.from({ length: Math.round(PIPELINES * BUSY_SHARE) }, (_, i) => i);

try {
  controller.start();
  const t0 = Date.now();
  for (let from = 0; from < PIPELINES; from += 100) {
    const items = Array.from({ length: Math.min(100, PIPELINES - from) }, (_, k) => {
      const i = from + k;
      return {
        apiVersion: 'observatory.dev/v1alpha1',
        kind: 'Pipeline',
        metadata: { name: `p${i}`, namespace: ns },
        spec: {
          topics: [{ name: topic(i), partitions: 1, replicationFactor: 1 }],
          flow: { consumerGroup: group(i) },
        },
      };
    });
    kubectl(['apply', '-f', '-'], JSON.stringify({ apiVersion: 'v1', kind: 'List', items }));
  }
  let ready = 0;
  while (ready < PIPELINES) {
    await sleep(2_000);
    ready = statuses().filter((p) =>
      p.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True'),
    ).length;
  }
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
  const before = await writes();
  const t1 = Date.now();
  const load = setInterval(() => {
    for (const i of busy) void producer.send({ topic: topic(i), messages: [{ value: 'x' }, { value: 'y' }] });
  }, 1_000);
  await sleep(STEADY_S * 1000);
  clearInterval(load);
  const after = await writes();
  const minutes = (Date.now() - t1) / 60_000;
  const flowPerMin = ((after.flow ?? 0) - (before.flow ?? 0)) / minutes;
  const reconcilePerMin = ((after.reconcile ?? 0) - (before.reconcile ?? 0)) / minutes;
  const unthrottled = PIPELINES * (60_000 / PERIOD_MS);
  const withLag = statuses().filter((p) => typeof p.status?.flow?.lag === 'number').length;
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
  await controller.close();
  await producer.disconnect();
  await admin.disconnect();
  await kafkaHandle.stop();
  try {
    kubectl(['delete', 'namespace', ns, '--wait=false']);
  } catch (error) {
    console.error(`namespace ${ns} not deleted: ${(error as Error).message}`);
  }
}
