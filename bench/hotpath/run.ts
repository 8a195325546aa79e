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
 *   (`bench/results/consume.json`; `make bench` runs it just before);
 * - the Kafka client by numbers (issue 18): all of the above for the service sending with each
 *   library (`KAFKA_CLIENT=kafkajs|platformatic`) and for each library alone, plus batch ingest
 *   below saturation (CPU per event for the same work), in rounds that alternate which library
 *   goes first; the figures are the medians of the rounds, the ratios are per round.
 *
 * Usage: `node --conditions=source --import tsx bench/hotpath/run.ts` (part of `make bench`); writes
 * bench/results/hotpath.md (BENCH_OUT=- prints only). Environment: `BENCH_SECONDS` per step
 * (default 10), `BENCH_WARMUP_SECONDS` (default 20), `BENCH_ROUNDS` (default 3),
 * `BENCH_SERVICE_NODE_ARGS` node flags for the service instead of those of `start:prod` (e.g. add
 * `--cpu-prof --cpu-prof-dir=/tmp/prof`).
 */
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { KAFKA_CLIENTS, type KafkaClient, readProducerConfig } from '@event-observatory/broker';
import { productionNodeArgs, repoRoot } from '@event-observatory/devstack';
import { signDevToken } from '@event-observatory/service-kit/auth';
import { type ProduceResult, produceFloor, startFloorBroker, startHttpFloor } from '../ingest/floors.js';
import { startIngestService } from '../ingest/service.js';
import { createdOf, requestShapes } from '../ingest/shapes.js';
import { type Result, step } from '../ingest/step.js';
import { procStatus } from '../lib/proc.js';

const root = repoRoot();
const SERVICE_DIR = join(root, 'services/ingest');
const SECONDS = Number(process.env.BENCH_SECONDS ?? 10);
const WARMUP_SECONDS = Number(process.env.BENCH_WARMUP_SECONDS ?? 20);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
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
/** Batch requests a second both libraries sustain here: CPU per event for the same work. */
const BATCH_RATE = 40;

interface IngestFigures {
  single: Result;
  batch: Result;
  singleSaturated: Result;
  batchSaturated: Result;
  highWaterMiB: number;
}

/** One library's figures in one round: the service sending with it, and the library alone. */
interface ClientFigures {
  ingest: IngestFigures;
  paced: ProduceResult;
  batchFloor: ProduceResult;
}

type Round = Record<KafkaClient, ClientFigures>;

const microsPerEvent = (r: Result) => (r.serviceCores * 1e6) / r.eventsPerSecond;

async function measureIngest(
  bootstrapServers: string,
  brokerPid: number | undefined,
  client: KafkaClient,
): Promise<IngestFigures> {
  const service = await startIngestService({
    bootstrapServers,
    nodeArgs: NODE_ARGS,
    authSecret: SECRET,
    env: { KAFKA_CLIENT: client },
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
      batch: await step({ ...many, name: `batch of ${BATCH_SIZE} @ ${BATCH_RATE} req/s`, rate: BATCH_RATE }),
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
    for (const r of [figures.single, figures.batch, figures.singleSaturated, figures.batchSaturated])
      console.error(JSON.stringify({ client, ...r }));
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
    const measureClient = async (client: KafkaClient): Promise<ClientFigures> => {
      const at = [kafka.bootstrapServers, kafka.pid()] as const;
      return {
        ingest: await measureIngest(...at, client),
        paced: await produceFloor(...at, { rate: SINGLE_RATE, lingerMs, maxBatchBytes }, SECONDS, client),
        batchFloor: await produceFloor(...at, { sendSize: BATCH_SIZE }, SECONDS, client),
      };
    };
    const rounds: Round[] = [];
    const https: Result[] = [];
    for (let r = 0; r < ROUNDS; r++) {
      // Which library goes first alternates, so a drift in the machine's load favours neither.
      const order = r % 2 === 0 ? KAFKA_CLIENTS : [...KAFKA_CLIENTS].reverse();
      const round: Partial<Round> = {};
      for (const client of order) round[client] = await measureClient(client);
      rounds.push(round as Round);
      https.push(await measureHttpFloor());
      // Written after every round: a run cut short on a busy machine still leaves its figures.
      const report = render(rounds, https, lastConsumeRun(), kafka.version);
      if (OUT !== '-') writeFileSync(OUT, report);
      console.log(report);
    }
  } finally {
    await broker.stop();
  }
}

/** The median of the rounds' values (the lower middle one for an even count). */
function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor((sorted.length - 1) / 2)]!;
}

function render(
  rounds: Round[],
  https: Result[],
  consume: ConsumeFigures | undefined,
  kafkaVersion: string,
): string {
  const us = (n: number) => `${Math.round(n)} µs`;
  const ratio = (n: number) => `${n.toFixed(2)}x`;
  const pct = (n: number) => `${Math.round(n * 100)} %`;
  // Throughput a core (1e6 / CPU µs per event): what one process reaches with a core to itself,
  // whatever else shares the machine while the bench runs.
  const perCore = (micros: number) => `${Math.round(1e6 / micros)}`;
  const med = (f: (r: Round, i: number) => number) => median(rounds.map(f));
  const httpUs = median(https.map(microsPerEvent));
  const hotPathRows = KAFKA_CLIENTS.flatMap((client) => {
    const of = (r: Round) => r[client];
    const svc = med((r) => microsPerEvent(of(r).ingest.single));
    const paced = med((r) => of(r).paced.cpuMicrosPerRecord);
    const perSend = med((r) => of(r).paced.records / of(r).paced.sends);
    const batchUs = med((r) => microsPerEvent(of(r).ingest.batchSaturated));
    const floorUs = med((r) => of(r).batchFloor.cpuMicrosPerRecord);
    const last = of(rounds.at(-1)!).ingest;
    return [
      `| ${client}: ingest CPU per single event @ ${SINGLE_RATE}/s | ${us(svc)} | node:http ${us(httpUs)} + ${client} ${us(paced)} a record (${Math.round(perSend)} a send) = ${us(httpUs + paced)} | ${ratio(svc / (httpUs + paced))} | <= 1.5x |`,
      `| ${client}: batch ingest at saturation (${last.batchSaturated.name}), events/s a core | ${perCore(batchUs)} (${us(batchUs)} an event) | ${client} alone, ${BATCH_SIZE} a send: ${perCore(floorUs)} records/s a core (${us(floorUs)} a record) | ${pct(floorUs / batchUs)} | >= 50 % |`,
      `| ${client}: ingest peak RSS, ${last.singleSaturated.name} (achieved ${last.singleSaturated.eventsPerSecond}/s in the last round), highest of the rounds | ${Math.max(...rounds.map((r) => of(r).ingest.singleSaturated.peakRssMiB))} MiB | | | < 256 MiB |`,
      `| ${client}: ingest peak RSS, ${last.batchSaturated.name} (achieved ${last.batchSaturated.eventsPerSecond} events/s in the last round), highest of the rounds | ${Math.max(...rounds.map((r) => of(r).ingest.batchSaturated.peakRssMiB))} MiB | | | < 256 MiB |`,
    ];
  });
  const consumeRow = consume
    ? `| consumer rows/s (bench/consume, ${consume.records} records, ${consume.generatedAt}) | ${consume.consumerRowsPerSecond} | COPY into the same table: ${consume.copyRowsPerSecond} rows/s | ${pct(consume.consumerRowsPerSecond / consume.copyRowsPerSecond)} | >= 60 % |`
    : '| consumer rows/s | not measured (run bench/consume first) | | | >= 60 % |';
  // kafkajs CPU over platformatic CPU per event, per round: issue 18 switches at 1.3x or better.
  const compared: [string, (f: ClientFigures) => number][] = [
    [`ingest, single @ ${SINGLE_RATE}/s`, (f) => microsPerEvent(f.ingest.single)],
    [`ingest, batch of ${BATCH_SIZE} @ ${BATCH_RATE} req/s`, (f) => microsPerEvent(f.ingest.batch)],
    [`ingest, batch of ${BATCH_SIZE} at saturation`, (f) => microsPerEvent(f.ingest.batchSaturated)],
    [`library alone, as the service sends single events`, (f) => f.paced.cpuMicrosPerRecord],
    [`library alone, ${BATCH_SIZE} a send`, (f) => f.batchFloor.cpuMicrosPerRecord],
  ];
  const clientRows = compared.map(([name, cpu]) => {
    const values = (client: KafkaClient) => rounds.map((r) => Math.round(cpu(r[client])));
    const ratios = rounds.map((r) => cpu(r.kafkajs) / cpu(r.platformatic));
    return `| ${name} | ${values('kafkajs').join(', ')} | ${values('platformatic').join(', ')} | ${ratios.map(ratio).join(', ')} | ${ratio(median(ratios))} |`;
  });
  const throughputRows = (['singleSaturated', 'batchSaturated'] as const).map((k) => {
    const achieved = (client: KafkaClient) =>
      rounds.map((r) => r[client].ingest[k].eventsPerSecond).join(', ');
    return `| ingest, ${rounds[0]!.kafkajs.ingest[k].name} | ${achieved('kafkajs')} | ${achieved('platformatic')} |`;
  });
  const steps = rounds.flatMap((round, i) =>
    KAFKA_CLIENTS.map((client) => {
      const { ingest, paced, batchFloor } = round[client];
      const list = [ingest.single, ingest.batch, ingest.singleSaturated, ingest.batchSaturated]
        .map(
          (r) =>
            `${r.name}: ${r.targetRate}, ${r.eventsPerSecond}, ${r.failed}, ${r.p99.toFixed(0)}, ${r.serviceCores.toFixed(2)}, ${Math.round(microsPerEvent(r))}`,
        )
        .join('; ');
      return `- round ${i + 1}, ${client}: ${list}; high-water ${ingest.highWaterMiB} MiB; alone paced ${paced.cpuMicrosPerRecord} µs a record (${paced.recordsPerSecond}/s), ${BATCH_SIZE} a send ${batchFloor.cpuMicrosPerRecord} µs a record (${batchFloor.recordsPerSecond}/s)`;
    }),
  );
  return [
    '# The hot path against its floors',
    '',
    `Generated by \`make bench\` (\`bench/hotpath/run.ts\`) on ${new Date().toISOString()}, Node ${process.version}, Kafka ${kafkaVersion} (one local KRaft broker, 12 partitions), ${SECONDS} s a step, ${rounds.length} rounds; the ingest service from dist/ with its defaults (\`node ${NODE_ARGS.join(' ')} dist/main.js\`, auth on) and \`KAFKA_CLIENT\` set to each library in turn, the generator, the floors and the broker on the same 2-core machine, one after the other. Each round measures both libraries (which goes first alternates); a figure is the median of the rounds.`,
    "Floors: each Kafka library with the service's guarantees (idempotent, one request in flight, acks=all), the records `toKafkaRecord` makes of the same event; for single events it sends as the service does (records arriving at the same rate, sent after the same linger, one send at a time).",
    '',
    '| measure | value | floor (same run) | ratio | target |',
    '|---|---|---|---|---|',
    ...hotPathRows,
    consumeRow,
    '',
    '## The Kafka client by numbers (issue 18)',
    '',
    `CPU µs an event of the ingest service sending with each library, and of each library alone, per round; the ratio is kafkajs's CPU over platformatic's in the same round (the switch needs 1.3x or better in an ingest mode). The service's CPU includes node:http's (${us(httpUs)} an event).`,
    '',
    '| mode | kafkajs µs an event | platformatic µs an event | kafkajs / platformatic | median |',
    '|---|---|---|---|---|',
    ...clientRows,
    '',
    'Events/s the service reached at saturation, per round:',
    '',
    '| step | kafkajs | platformatic |',
    '|---|---|---|',
    ...throughputRows,
    '',
    'Steps (offered, achieved events/s, failed, p99 ms, cores, CPU µs/event):',
    '',
    ...steps,
    `- node:http single @ ${SINGLE_RATE}/s, CPU µs/event per round: ${https.map((r) => Math.round(microsPerEvent(r))).join(', ')}`,
    '',
  ].join('\n');
}

await main();
