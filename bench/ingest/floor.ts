/**
 * The floor of this machine for the ingest targets: what the parts the service cannot do without
 * cost when they do nothing else. Two measurements, each alone on the machine:
 *
 * 1. HTTP floor: noop-server.ts (plain node:http, reads the body, answers a response of the
 *    service's size) driven by the same generator and requests as run.ts, at the target rates.
 * 2. kafkajs floor: one process producing exactly the records the service makes of the single
 *    1 KiB event (`toKafkaRecord`), with the service's producer guarantees (idempotent, one request
 *    in flight, acks=all, no compression) to a local broker, as fast as it can, in sends of
 *    10, 100 and 1,000 records (a linger decides the size in the service).
 *
 * The service needs at least the sum of the two per event (plus decoding, auth, metrics); the
 * generator and the broker take their share of the same 2 cores.
 *
 * Usage: `(cd bench/ingest && npm run floor)`; writes its section of bench/results/latest.md.
 * `BENCH_SECONDS` seconds per step (default 10).
 */
import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { EVENT_TOPIC, eventTopicSpec } from '@event-observatory/broker';
import { ensureStackTopics, startKafka } from '@event-observatory/devstack';
import { benchRun } from '../lib/report.js';
import { type ProduceResult, produceFloor, startHttpFloor } from './floors.js';
import { createdOf, requestShapes } from './shapes.js';
import { type Result, resultTable, step } from './step.js';

const run = benchRun('ingest-floor');
const SECONDS = Number(process.env.BENCH_SECONDS ?? 10);
const TOPIC = EVENT_TOPIC;

async function httpFloor(): Promise<Result[]> {
  const server = await startHttpFloor();
  const { single, batch } = requestShapes(`127.0.0.1:${server.port}`, 'x'.repeat(180));
  const at = { port: server.port, pid: server.pid, seconds: SECONDS };
  const results: Result[] = [];
  await step({ ...at, name: 'warm-up', rate: 2000, eventsPerRequest: 1, request: single, seconds: 3 });
  for (const rate of [5000, 10000]) {
    results.push(
      await step({ ...at, name: `single 1 KiB @ ${rate}/s`, rate, eventsPerRequest: 1, request: single }),
    );
  }
  results.push(
    await step({
      ...at,
      name: 'batch of 100 @ 500 req/s',
      rate: 500,
      eventsPerRequest: 100,
      request: batch,
      acknowledged: createdOf,
    }),
  );
  await server.stop();
  return results;
}

async function kafkajsFloor(): Promise<ProduceResult[]> {
  const dir = mkdtempSync(join(tmpdir(), 'bench-floor-'));
  chmodSync(dir, 0o755);
  const kafka = await startKafka({
    dataDir: join(dir, 'kafka'),
    settings: { 'message.max.bytes': '2097152' },
  });
  await ensureStackTopics(kafka.bootstrapServers, [eventTopicSpec(TOPIC)]);
  const results: ProduceResult[] = [];
  for (const sendSize of [10, 100, 1000]) {
    results.push(await produceFloor(kafka.bootstrapServers, kafka.pid(), { sendSize }, SECONDS));
    console.error(JSON.stringify(results.at(-1)));
  }
  await kafka.stop();
  rmSync(dir, { recursive: true, force: true });
  return results;
}

const http = await httpFloor();
const produce = await kafkajsFloor();
const lines = [
  '# Ingest floor: the parts alone (bench/ingest)',
  '',
  `${SECONDS} s per step; see floor.ts for what each part is.`,
  '',
  '## HTTP alone: plain node:http server that reads the body and answers, nothing else',
  '',
  'Same generator, requests (1 KiB binary event with a bearer header; batches of 100 structured events) and rates as run.ts.',
  '',
  ...resultTable(http, 'server'),
  '',
  "## kafkajs alone: the service's records, its producer guarantees, as fast as one process sends them",
  '',
  'idempotent, one request in flight, acks=all, no compression, 12 partitions, records made by `toKafkaRecord` from the single 1 KiB event (the record building is inside the CPU figure).',
  '',
  '| records per send | records | records/s | producer CPU µs/record | producer cores | broker cores |',
  '|---|---|---|---|---|---|',
  ...produce.map(
    (r) =>
      `| ${r.mode} | ${r.records} | ${r.recordsPerSecond} | ${r.cpuMicrosPerRecord} | ${r.producerCores.toFixed(2)} | ${r.brokerCores.toFixed(2)} |`,
  ),
  '',
];
run.write(lines.join('\n'));
