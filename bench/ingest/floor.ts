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
 * Usage: `(cd bench/ingest && npm run floor)`; writes bench/results/ingest-floor.md (BENCH_OUT=-
 * prints only). `BENCH_SECONDS` seconds per step (default 10).
 */
import { fork } from 'node:child_process';
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { EVENT_TOPIC, ensureTopics, eventTopicSpec } from '@event-observatory/broker';
import { freePort, startKafka } from '@event-observatory/devstack';
import { decodeHttpEvent, toKafkaRecord } from '@event-observatory/events';
import { CompressionTypes, Kafka, logLevel } from 'kafkajs';
import { cpuSeconds } from '../lib/proc.js';
import { createdOf, requestShapes, SINGLE_PAYLOAD, singleEventHeaders } from './shapes.js';
import { type Result, resultTable, step } from './step.js';

const here = dirname(fileURLToPath(import.meta.url));
const OUT = process.env.BENCH_OUT ?? join(here, '..', 'results', 'ingest-floor.md');
const SECONDS = Number(process.env.BENCH_SECONDS ?? 10);
const TOPIC = EVENT_TOPIC;

async function httpFloor(): Promise<Result[]> {
  const port = await freePort();
  const server = fork(join(here, 'noop-server.ts'), [String(port)], {
    execArgv: ['--import', 'tsx'],
    stdio: 'inherit',
  });
  await new Promise((resolve) => server.once('message', resolve));
  const { single, batch } = requestShapes(`127.0.0.1:${port}`, 'x'.repeat(180));
  const at = { port, pid: server.pid!, seconds: SECONDS };
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
  server.kill('SIGTERM');
  await new Promise((r) => server.once('exit', r));
  return results;
}

interface ProduceResult {
  sendSize: number;
  records: number;
  recordsPerSecond: number;
  cpuMicrosPerRecord: number;
  producerCores: number;
  brokerCores: number;
}

async function kafkajsFloor(): Promise<ProduceResult[]> {
  const dir = mkdtempSync(join(tmpdir(), 'bench-floor-'));
  chmodSync(dir, 0o755);
  const kafka = await startKafka({
    dataDir: join(dir, 'kafka'),
    settings: { 'message.max.bytes': '2097152' },
  });
  const client = new Kafka({ brokers: [kafka.bootstrapServers], logLevel: logLevel.NOTHING });
  const admin = client.admin();
  await admin.connect();
  await ensureTopics(admin, [eventTopicSpec(TOPIC)]);
  await admin.disconnect();
  const producer = client.producer({ idempotent: true, maxInFlightRequests: 1 });
  await producer.connect();
  // The records the service makes of run.ts's single event, with a fresh id and source each.
  const record = (i: number) => toKafkaRecord(decodeHttpEvent(singleEventHeaders(i), SINGLE_PAYLOAD).event);
  const results: ProduceResult[] = [];
  let n = 0;
  for (const sendSize of [10, 100, 1000]) {
    const run = async (seconds: number) => {
      const started = performance.now();
      const cpu0 = process.cpuUsage();
      const broker0 = cpuSeconds(kafka.pid());
      let records = 0;
      while (performance.now() - started < seconds * 1000) {
        const messages = Array.from({ length: sendSize }, () => record(n++));
        await producer.send({ topic: TOPIC, acks: -1, compression: CompressionTypes.None, messages });
        records += sendSize;
      }
      const elapsed = (performance.now() - started) / 1000;
      const cpu = process.cpuUsage(cpu0);
      return {
        sendSize,
        records,
        recordsPerSecond: Math.round(records / elapsed),
        cpuMicrosPerRecord: Math.round((cpu.user + cpu.system) / records),
        producerCores: (cpu.user + cpu.system) / 1e6 / elapsed,
        brokerCores: (cpuSeconds(kafka.pid()) - broker0) / elapsed,
      };
    };
    await run(2); // warm-up
    results.push(await run(SECONDS));
    console.error(JSON.stringify(results.at(-1)));
  }
  await producer.disconnect();
  await kafka.stop();
  rmSync(dir, { recursive: true, force: true });
  return results;
}

const http = await httpFloor();
const produce = await kafkajsFloor();
const lines = [
  '# Ingest floor: the parts alone',
  '',
  `Generated by \`(cd bench/ingest && npm run floor)\` on ${new Date().toISOString()} (${SECONDS}s per step, Node ${process.version}); see floor.ts for what each part is.`,
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
      `| ${r.sendSize} | ${r.records} | ${r.recordsPerSecond} | ${r.cpuMicrosPerRecord} | ${r.producerCores.toFixed(2)} | ${r.brokerCores.toFixed(2)} |`,
  ),
  '',
];
if (OUT !== '-') writeFileSync(OUT, lines.join('\n'));
console.log(lines.join('\n'));
