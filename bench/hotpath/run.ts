/**
 * The hot path against its floors, measured in one run on one broker (issue 18's table):
 *
 * - ingest CPU per single event (at a rate it sustains) against the sum of its floors: a plain
 *   `node:http` server answering the same requests, plus the Kafka client alone per record with
 *   the service's sending rule (same arrival rate, same linger, one send at a time, so the same
 *   records per send);
 * - batch ingest at saturation against the Kafka client alone in sends of 100, as events/s a core
 *   (1e6 / CPU µs per event: the rate each reaches with a core to itself, so other load on the
 *   machine does not decide the ratio);
 * - ingest peak RSS at saturation, single and batch;
 * - the consumer against `COPY` into the same table, quoted from bench/consume's last run
 *   (`bench/results/consume.json`; `make bench` runs it just before).
 *
 * Usage: `node --conditions=source --import tsx bench/hotpath/run.ts` (part of `make bench`); writes
 * bench/results/hotpath.md (BENCH_OUT=- prints only). Environment: `BENCH_SECONDS` per step
 * (default 10), `BENCH_WARMUP_SECONDS` (default 20), `BENCH_SERVICE_NODE_ARGS` node flags for the
 * service instead of those of `start:prod` (e.g. add `--cpu-prof --cpu-prof-dir=/tmp/prof`).
 */
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { readProducerConfig } from '@event-observatory/broker';
import { repoRoot } from '@event-observatory/devstack';
import { signDevToken } from '@event-observatory/service-kit/auth';
import { type ProduceResult, produceFloor, startFloorBroker, startHttpFloor } from '../ingest/floors.js';
import { productionNodeArgs, startIngestService } from '../ingest/service.js';
import { createdOf, requestShapes } from '../ingest/shapes.js';
import { type Result, step } from '../ingest/step.js';
import { procStatus } from '../lib/proc.js';

const root = repoRoot();
const SERVICE_DIR = join(root, 'services/ingest');
const SECONDS = Number(process.env.BENCH_SECONDS ?? 10);
const WARMUP_SECONDS = Number(process.env.BENCH_WARMUP_SECONDS ?? 20);
const OUT = process.env.BENCH_OUT ?? join(root, 'bench/results/hotpath.md');
const NODE_ARGS =
  process.env.BENCH_SERVICE_NODE_ARGS?.split(' ').filter(Boolean) ?? productionNodeArgs(SERVICE_DIR);
const SECRET = 'bench-secret-bench-secret-bench-secret!!';
/** A rate the service sustains on this machine (CPU per event is meaningful below saturation). */
const SINGLE_RATE = 5000;
/** Offered loads above what the service sustains here (bench/results/ingest.md): saturation. */
const SINGLE_SATURATION_RATE = 10000;
const BATCH_SATURATION_RATE = 300;
const BATCH_SIZE = 100;

interface IngestFigures {
  single: Result;
  singleSaturated: Result;
  batchSaturated: Result;
  highWaterMiB: number;
}

const microsPerEvent = (r: Result) => (r.serviceCores * 1e6) / r.eventsPerSecond;

async function measureIngest(
  bootstrapServers: string,
  brokerPid: number | undefined,
): Promise<IngestFigures> {
  const service = await startIngestService({
    serviceDir: SERVICE_DIR,
    bootstrapServers,
    nodeArgs: NODE_ARGS,
    authSecret: SECRET,
  });
  const token = await signDevToken({
    secret: SECRET,
    scopes: ['events:write'],
    ttl: '24h',
    subject: 'bench',
  });
  const { single, batch } = requestShapes(`127.0.0.1:${service.port}`, token);
  const at = { port: service.port, pid: service.pid, brokerPid, seconds: SECONDS };
  const one = { ...at, eventsPerRequest: 1, request: single };
  const many = { ...at, eventsPerRequest: BATCH_SIZE, request: batch, acknowledged: createdOf };
  try {
    await step({ ...one, name: 'warm-up', rate: 3000, seconds: WARMUP_SECONDS / 2 });
    await step({ ...one, name: 'warm-up', rate: 6000, seconds: WARMUP_SECONDS / 2 });
    const figures = {
      single: await step({ ...one, name: `single @ ${SINGLE_RATE}/s`, rate: SINGLE_RATE }),
      singleSaturated: await step({
        ...one,
        name: `single @ ${SINGLE_SATURATION_RATE}/s`,
        rate: SINGLE_SATURATION_RATE,
      }),
      batchSaturated: await step({
        ...many,
        name: `batch of ${BATCH_SIZE} @ ${BATCH_SATURATION_RATE} req/s`,
        rate: BATCH_SATURATION_RATE,
      }),
      highWaterMiB: Math.round(procStatus(service.pid, 'VmHWM') / 1048576),
    };
    for (const r of [figures.single, figures.singleSaturated, figures.batchSaturated])
      console.error(JSON.stringify(r));
    return figures;
  } finally {
    await service.stop();
  }
}

/** The plain node:http server under the same single-event load as the service. */
async function measureHttpFloor(): Promise<Result> {
  const server = await startHttpFloor();
  const { single } = requestShapes(`127.0.0.1:${server.port}`, 'x'.repeat(180));
  const one = { port: server.port, pid: server.pid, eventsPerRequest: 1, request: single, seconds: SECONDS };
  try {
    await step({ ...one, name: 'warm-up', rate: 3000, seconds: 3 });
    return await step({ ...one, name: `single @ ${SINGLE_RATE}/s`, rate: SINGLE_RATE });
  } finally {
    await server.stop();
  }
}

interface ConsumeFigures {
  generatedAt: string;
  records: number;
  consumerRowsPerSecond: number;
  copyRowsPerSecond: number;
}

function lastConsumeRun(): ConsumeFigures | undefined {
  const file = join(root, 'bench/results/consume.json');
  return existsSync(file) ? JSON.parse(readFileSync(file, 'utf8')) : undefined;
}

async function main(): Promise<void> {
  execFileSync('npx', ['tsc', '-b'], { cwd: SERVICE_DIR, stdio: 'inherit' });
  const broker = await startFloorBroker('bench-hotpath');
  const { kafka } = broker;
  try {
    const config = readProducerConfig({ BROKER_BOOTSTRAP_SERVERS: kafka.bootstrapServers });
    const { lingerMs } = config;
    const { maxBatchBytes } = config.producer;
    const ingest = await measureIngest(kafka.bootstrapServers, kafka.pid());
    const http = await measureHttpFloor();
    const pacedFloor = await produceFloor(
      kafka.bootstrapServers,
      kafka.pid(),
      { rate: SINGLE_RATE, lingerMs, maxBatchBytes },
      SECONDS,
    );
    const batchFloor = await produceFloor(
      kafka.bootstrapServers,
      kafka.pid(),
      { sendSize: BATCH_SIZE },
      SECONDS,
    );
    const report = render(ingest, http, pacedFloor, batchFloor, lastConsumeRun(), kafka.version);
    if (OUT !== '-') writeFileSync(OUT, report);
    console.log(report);
  } finally {
    await broker.stop();
  }
}

function render(
  ingest: IngestFigures,
  http: Result,
  paced: ProduceResult,
  batchFloor: ProduceResult,
  consume: ConsumeFigures | undefined,
  kafkaVersion: string,
): string {
  const us = (n: number) => `${Math.round(n)} µs`;
  const ratio = (n: number) => `${n.toFixed(2)}x`;
  const pct = (n: number) => `${Math.round(n * 100)} %`;
  const svc = microsPerEvent(ingest.single);
  const httpUs = microsPerEvent(http);
  const floor = httpUs + paced.cpuMicrosPerRecord;
  const batchRate = ingest.batchSaturated.eventsPerSecond;
  const batchUs = microsPerEvent(ingest.batchSaturated);
  // Throughput a core (1e6 / CPU µs per event): what one process reaches with a core to itself,
  // whatever else shares the machine while the bench runs.
  const perCore = (micros: number) => `${Math.round(1e6 / micros)}`;
  const rows = [
    `| ingest CPU per single event @ ${SINGLE_RATE}/s | ${us(svc)} | node:http ${us(httpUs)} + kafkajs ${us(paced.cpuMicrosPerRecord)} a record (${Math.round(paced.records / paced.sends)} a send) = ${us(floor)} | ${ratio(svc / floor)} | <= 1.5x |`,
    `| batch ingest at saturation (${ingest.batchSaturated.name}), events/s a core | ${perCore(batchUs)} (${us(batchUs)} an event) | kafkajs alone, ${BATCH_SIZE} a send: ${perCore(batchFloor.cpuMicrosPerRecord)} records/s a core (${us(batchFloor.cpuMicrosPerRecord)} a record) | ${pct(batchFloor.cpuMicrosPerRecord / batchUs)} | >= 50 % |`,
    consume
      ? `| consumer rows/s (bench/consume, ${consume.records} records, ${consume.generatedAt}) | ${consume.consumerRowsPerSecond} | COPY into the same table: ${consume.copyRowsPerSecond} rows/s | ${pct(consume.consumerRowsPerSecond / consume.copyRowsPerSecond)} | >= 60 % |`
      : '| consumer rows/s | not measured (run bench/consume first) | | | >= 60 % |',
    `| ingest peak RSS, ${ingest.singleSaturated.name} (achieved ${ingest.singleSaturated.eventsPerSecond}/s) | ${ingest.singleSaturated.peakRssMiB} MiB | | | < 256 MiB |`,
    `| ingest peak RSS, ${ingest.batchSaturated.name} (achieved ${batchRate} events/s) | ${ingest.batchSaturated.peakRssMiB} MiB | | | < 256 MiB |`,
  ];
  const steps = [ingest.single, ingest.singleSaturated, ingest.batchSaturated, http];
  return [
    '# The hot path against its floors',
    '',
    `Generated by \`make bench\` (\`bench/hotpath/run.ts\`) on ${new Date().toISOString()}, Node ${process.version}, Kafka ${kafkaVersion} (one local KRaft broker, 12 partitions), ${SECONDS} s a step; the ingest service from dist/ with its defaults (\`node ${NODE_ARGS.join(' ')} dist/main.js\`, auth on), the generator, the floors and the broker on the same 2-core machine, one after the other.`,
    "Floors: kafkajs with the service's guarantees (idempotent, one request in flight, acks=all), the records `toKafkaRecord` makes of the same event; for single events it sends as the service does (records arriving at the same rate, sent after the same linger, one send at a time).",
    '',
    '| measure | value | floor (same run) | ratio | target |',
    '|---|---|---|---|---|',
    ...rows,
    '',
    `Steps (offered, achieved events/s, failed, p99 ms, cores, CPU µs/event): ${steps
      .map(
        (r) =>
          `${r === http ? 'node:http ' : 'ingest '}${r.name}: ${r.targetRate}, ${r.eventsPerSecond}, ${r.failed}, ${r.p99.toFixed(0)}, ${r.serviceCores.toFixed(2)}, ${Math.round(microsPerEvent(r))}`,
      )
      .join(
        '; ',
      )}. Ingest high-water mark over the run: ${ingest.highWaterMiB} MiB. kafkajs alone, ${BATCH_SIZE} a send: ${batchFloor.cpuMicrosPerRecord} µs a record.`,
    '',
  ].join('\n');
}

await main();
