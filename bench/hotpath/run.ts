/**
 * The hot path against its floors, measured in one run on one broker:
 *
 * - ingest CPU per single event (below saturation: `BELOW_SATURATION` of the rate it reached when
 *   offered more, measured first in the same run) against the sum of its floors: a plain
 *   `node:http` server answering the same requests, plus the Kafka client alone per record with
 *   the service's sending rule (same arrival rate, same linger, one send at a time, so the same
 *   records per send);
 * - batch ingest at saturation against the Kafka client alone in sends of 100, as events/s a core
 *   (1e6 / CPU µs per event: the rate each reaches with a core to itself, so other load on the
 *   machine does not decide the ratio);
 * - ingest peak RSS at saturation, single and batch;
 * - batch ingest below saturation (CPU per event for the same work), against the same floor and
 *   against the Kafka client alone sending 100 a send at the same pace (one send per request);
 * - the same service on the broker's SASL_SSL listener (SCRAM-SHA-512) against the PLAINTEXT one:
 *   CPU per single event and per batched event below saturation, and their ratio (what TLS and
 *   SASL cost the service);
 * - CPU per single event with tokens verified against an OpenID provider's key set against the
 *   static key (key-set.ts);
 *
 * in rounds; the figures are the medians of the rounds. The consumer against `COPY` is
 * bench/consume's section.
 *
 * Usage: `node --conditions=source --import tsx bench/hotpath/run.ts` (part of `make bench`); writes
 * its section of bench/results/latest.md after every round. Environment: `BENCH_SECONDS` per step
 * (default 10), `BENCH_WARMUP_SECONDS` (default 20), `BENCH_ROUNDS` (default 3), `BENCH_SINGLE_RATE`
 * the single-event rate below saturation instead of the measured one,
 * `BENCH_SERVICE_NODE_ARGS` node flags for the service instead of those of `start:prod` (e.g. add
 * `--cpu-prof --cpu-prof-dir=/tmp/prof`), `BENCH_KEY_SET=off` leaves out the single-event step with
 * a key set (key-set.ts).
 */
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { readProducerConfig } from '@event-observatory/broker';
import {
  type KafkaHandle,
  productionNodeArgs,
  repoRoot,
  securedClientEnv,
} from '@event-observatory/devstack';
import { signDevToken } from '@event-observatory/service-kit/auth';
import { type ProduceResult, produceFloor, startFloorBroker, startHttpFloor } from '../ingest/floors.js';
import { startIngestService } from '../ingest/service.js';
import { createdOf, requestShapes } from '../ingest/shapes.js';
import { type Result, step } from '../ingest/step.js';
import { procStatus } from '../lib/proc.js';
import { benchRun } from '../lib/report.js';
import { KEY_SET_ENABLED, measureKeySetSingle } from './key-set.js';

const root = repoRoot();
const SERVICE_DIR = join(root, 'services/ingest');
const SECONDS = Number(process.env.BENCH_SECONDS ?? 10);
const WARMUP_SECONDS = Number(process.env.BENCH_WARMUP_SECONDS ?? 20);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const run = benchRun('hotpath');
const NODE_ARGS =
  process.env.BENCH_SERVICE_NODE_ARGS?.split(' ').filter(Boolean) ?? productionNodeArgs(SERVICE_DIR);
const SECRET = 'bench-secret-bench-secret-bench-secret!!';
/**
 * The single-event steps below saturation offer this share of the rate the service reached when
 * saturated: CPU per event is meaningful only below it, and machines differ by up to 2x (a fixed
 * 5000/s, below saturation where it was set, was past it on a slower machine: a third refused).
 */
const BELOW_SATURATION = 0.6;
/** Offered loads above what the service sustains here (the ingest sweep's section): saturation. */
const SINGLE_SATURATION_RATE = 10000;
const BATCH_SATURATION_RATE = 300;
const BATCH_SIZE = 100;
/** Batch requests a second the service sustains here: CPU per event for the same work. */
const BATCH_RATE = 40;

interface IngestFigures {
  single: Result;
  batch: Result;
  singleSaturated: Result;
  batchSaturated: Result;
  highWaterMiB: number;
}

/** The service on the SASL_SSL listener, below saturation (CPU per event for the same work). */
interface SecuredFigures {
  single: Result;
  batch: Result;
}

/**
 * One round's figures: the service, kafkajs alone sending as the service does and 100 a send, and
 * the service again on the SASL_SSL listener.
 */
interface Round {
  ingest: IngestFigures;
  paced: ProduceResult;
  batchFloor: ProduceResult;
  /** kafkajs alone, `BATCH_SIZE` a send at `BATCH_RATE` sends a second: the batch step's pace. */
  batchPaced: ProduceResult;
  secured: SecuredFigures;
  /** Single events with a key set instead of the static key (none with `BENCH_KEY_SET=off`). */
  keySet?: Result;
}

const microsPerEvent = (r: Result) => (r.serviceCores * 1e6) / r.eventsPerSecond;

type Load = Omit<Parameters<typeof step>[0], 'name' | 'rate'>;

/**
 * Starts the service (with `env` over its defaults), warms it up with single events and, unless
 * `singleOnly` (a measure of single events alone), batches, hands `measure` the single-event and
 * batch loads, and stops it.
 */
async function withService<T>(
  bootstrapServers: string,
  brokerPid: number | undefined,
  env: Record<string, string>,
  measure: (one: Load, many: Load, pid: number) => Promise<T>,
  { singleOnly = false } = {},
): Promise<T> {
  const service = await startIngestService({
    bootstrapServers,
    nodeArgs: NODE_ARGS,
    authSecret: SECRET,
    env,
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
    // Both shapes, as the floors warm their own for 2 s: a batch step that followed single events
    // alone paid for compiling the batch path in its measured seconds.
    await step({ ...one, name: 'warm-up', rate: 3000, seconds: WARMUP_SECONDS / 2 });
    if (!singleOnly) await step({ ...many, name: 'warm-up', rate: BATCH_RATE, seconds: WARMUP_SECONDS / 4 });
    await step({ ...one, name: 'warm-up', rate: 6000, seconds: WARMUP_SECONDS / 2 });
    return await measure(one, many, service.pid);
  } finally {
    await service.stop();
  }
}

/** The single-event rate below saturation, and the saturated step it was derived from (none when given). */
interface SingleRate {
  rate: number;
  saturated?: Result;
}

/**
 * `BENCH_SINGLE_RATE`, else `BELOW_SATURATION` of what a warmed service acknowledged a second when
 * offered `SINGLE_SATURATION_RATE`, in hundreds.
 */
async function singleRate(bootstrapServers: string, brokerPid: number | undefined): Promise<SingleRate> {
  if (process.env.BENCH_SINGLE_RATE) return { rate: Number(process.env.BENCH_SINGLE_RATE) };
  const saturated = await withService(
    bootstrapServers,
    brokerPid,
    {},
    (one) => step({ ...one, name: `single @ ${SINGLE_SATURATION_RATE}/s`, rate: SINGLE_SATURATION_RATE }),
    { singleOnly: true },
  );
  console.error(JSON.stringify(saturated));
  const rate = Math.max(100, Math.floor((saturated.eventsPerSecond * BELOW_SATURATION) / 100) * 100);
  return { rate, saturated };
}

/** How the report says the single-event rate was chosen. */
function singleRateText({ rate, saturated }: SingleRate): string {
  if (!saturated) return `Single events below saturation at ${rate}/s (\`BENCH_SINGLE_RATE\`).`;
  return `Single events below saturation at ${rate}/s: ${Math.round(BELOW_SATURATION * 100)} % of the ${saturated.eventsPerSecond}/s the service acknowledged when offered ${SINGLE_SATURATION_RATE}/s, measured first (${saturated.serviceCores.toFixed(2)} cores).`;
}

function measureIngest(
  bootstrapServers: string,
  brokerPid: number | undefined,
  singleRate: number,
): Promise<IngestFigures> {
  return withService(bootstrapServers, brokerPid, {}, async (one, many, pid) => {
    const figures = {
      single: await step({ ...one, name: `single @ ${singleRate}/s`, rate: singleRate }),
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
      highWaterMiB: Math.round(procStatus(pid, 'VmHWM') / 1048576),
    };
    for (const r of [figures.single, figures.batch, figures.singleSaturated, figures.batchSaturated])
      console.error(JSON.stringify(r));
    return figures;
  });
}

/** The steps below saturation again, with the service on the SASL_SSL listener. */
function measureSecured(kafka: KafkaHandle, singleRate: number): Promise<SecuredFigures> {
  const env = securedClientEnv(kafka.secured!, 'SASL_SSL');
  return withService(kafka.bootstrapServers, kafka.pid(), env, async (one, many) => {
    const figures = {
      single: await step({ ...one, name: `SASL_SSL single @ ${singleRate}/s`, rate: singleRate }),
      batch: await step({
        ...many,
        name: `SASL_SSL batch of ${BATCH_SIZE} @ ${BATCH_RATE} req/s`,
        rate: BATCH_RATE,
      }),
    };
    for (const r of [figures.single, figures.batch]) console.error(JSON.stringify(r));
    return figures;
  });
}

/** The plain node:http server, with the service's node flags, under the same single-event load as the service. */
async function measureHttpFloor(singleRate: number): Promise<Result> {
  const server = await startHttpFloor({ nodeArgs: NODE_ARGS });
  const { single } = requestShapes(`127.0.0.1:${server.port}`, 'x'.repeat(180));
  const one = { port: server.port, pid: server.pid, eventsPerRequest: 1, request: single, seconds: SECONDS };
  try {
    await step({ ...one, name: 'warm-up', rate: 3000, seconds: 3 });
    return await step({ ...one, name: `single @ ${singleRate}/s`, rate: singleRate });
  } finally {
    await server.stop();
  }
}

async function main(): Promise<void> {
  execFileSync('npx', ['tsc', '-b'], { cwd: SERVICE_DIR, stdio: 'inherit' });
  const broker = await startFloorBroker('bench-hotpath', { secured: true });
  const { kafka } = broker;
  try {
    const config = readProducerConfig({ BROKER_BOOTSTRAP_SERVERS: kafka.bootstrapServers });
    const { lingerMs } = config;
    const { maxBatchBytes } = config.producer;
    const at = [kafka.bootstrapServers, kafka.pid()] as const;
    const rounds: Round[] = [];
    const https: Result[] = [];
    const single = await singleRate(...at);
    const { rate } = single;
    for (let r = 0; r < ROUNDS; r++) {
      rounds.push({
        ingest: await measureIngest(...at, rate),
        paced: await produceFloor(...at, { rate, lingerMs, maxBatchBytes }, SECONDS),
        batchFloor: await produceFloor(...at, { sendSize: BATCH_SIZE }, SECONDS),
        batchPaced: await produceFloor(...at, { sendSize: BATCH_SIZE, perSecond: BATCH_RATE }, SECONDS),
        secured: await measureSecured(kafka, rate),
        ...(KEY_SET_ENABLED && {
          keySet: await measureKeySetSingle(...at, {
            nodeArgs: NODE_ARGS,
            rate,
            seconds: SECONDS,
            warmupSeconds: WARMUP_SECONDS,
          }),
        }),
      });
      https.push(await measureHttpFloor(rate));
      // Written after every round: a run cut short on a busy machine still leaves its figures.
      run.write(render(rounds, https, single), { kafkaVersion: kafka.version });
    }
  } finally {
    await broker.stop();
  }
}

/** The table row of the key-set step: its CPU per event against the static key's. */
function keySetRow(
  rounds: Round[],
  rate: number,
  staticUs: number,
  us: (n: number) => string,
  ratio: (n: number) => string,
): string[] {
  const measured = rounds.flatMap((r) => (r.keySet ? [microsPerEvent(r.keySet)] : []));
  if (measured.length === 0) return [];
  const keySetUs = median(measured);
  return [
    `| ingest CPU per single event @ ${rate}/s, tokens verified against a key set (OIDC discovery, RS256) | ${us(keySetUs)} | the static HS256 key above: ${us(staticUs)} | ${ratio(keySetUs / staticUs)} | about 1x |`,
  ];
}

/** The median of the rounds' values (the lower middle one for an even count). */
function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor((sorted.length - 1) / 2)]!;
}

function render(rounds: Round[], https: Result[], single: SingleRate): string {
  const { rate } = single;
  const us = (n: number) => `${Math.round(n)} µs`;
  const ratio = (n: number) => `${n.toFixed(2)}x`;
  const pct = (n: number) => `${Math.round(n * 100)} %`;
  // Throughput a core (1e6 / CPU µs per event): what one process reaches with a core to itself,
  // whatever else shares the machine while the bench runs.
  const perCore = (micros: number) => `${Math.round(1e6 / micros)}`;
  const med = (f: (r: Round) => number) => median(rounds.map(f));
  const httpUs = median(https.map(microsPerEvent));
  const svc = med((r) => microsPerEvent(r.ingest.single));
  const paced = med((r) => r.paced.cpuMicrosPerRecord);
  const perSend = med((r) => r.paced.records / r.paced.sends);
  const batchUs = med((r) => microsPerEvent(r.ingest.batchSaturated));
  const belowUs = med((r) => microsPerEvent(r.ingest.batch));
  const floorUs = med((r) => r.batchFloor.cpuMicrosPerRecord);
  const pacedFloorUs = med((r) => r.batchPaced.cpuMicrosPerRecord);
  const tlsSingle = med((r) => microsPerEvent(r.secured.single));
  const tlsBatch = med((r) => microsPerEvent(r.secured.batch));
  const brokerUs = (r: Result) => (r.brokerCores * 1e6) / r.eventsPerSecond;
  const last = rounds.at(-1)!.ingest;
  const highest = (k: 'singleSaturated' | 'batchSaturated') =>
    Math.max(...rounds.map((r) => r.ingest[k].peakRssMiB));
  const steps = rounds.map((round, i) => {
    const { ingest, paced, batchFloor, batchPaced, secured } = round;
    const all = [ingest.single, ingest.batch, ingest.singleSaturated, ingest.batchSaturated];
    const list = [...all, secured.single, secured.batch, ...(round.keySet ? [round.keySet] : [])]
      .map(
        (r) =>
          `${r.name}: ${r.targetRate}, ${r.eventsPerSecond}, ${r.failed}, ${r.p99.toFixed(0)}, ${r.serviceCores.toFixed(2)}, ${Math.round(microsPerEvent(r))}`,
      )
      .join('; ');
    const broker = [ingest.single, secured.single, ingest.batch, secured.batch]
      .map((r) => Math.round(brokerUs(r)))
      .join(', ');
    return `- round ${i + 1}: ${list}; high-water ${ingest.highWaterMiB} MiB; kafkajs alone paced ${paced.cpuMicrosPerRecord} µs a record (${paced.recordsPerSecond}/s), ${BATCH_SIZE} a send ${batchFloor.cpuMicrosPerRecord} µs a record (${batchFloor.recordsPerSecond}/s), ${BATCH_SIZE} a send at ${BATCH_RATE} sends/s ${batchPaced.cpuMicrosPerRecord} µs a record (${batchPaced.recordsPerSecond}/s); broker CPU µs/event single PLAINTEXT, SASL_SSL, batch PLAINTEXT, SASL_SSL: ${broker}`;
  });
  return [
    '# The hot path against its floors (bench/hotpath)',
    '',
    `One local KRaft broker, 12 partitions, ${SECONDS} s a step, ${rounds.length} round${rounds.length === 1 ? '' : 's'}; the ingest service from dist/ with its defaults (\`node ${NODE_ARGS.join(' ')} dist/main.js\`, auth on), the generator, the floors and the broker on the same machine, one after the other; a figure is the median of the rounds. Each service is warmed up first with single events (${WARMUP_SECONDS} s) and batches of ${BATCH_SIZE} at ${BATCH_RATE} req/s (${WARMUP_SECONDS / 4} s), the one that finds the single-event rate with single events only, each floor with 2 s of its own load.`,
    "Floors: kafkajs alone with the service's guarantees (idempotent, one request in flight, acks=all), the records `toKafkaRecord` makes of the same event; for single events it sends as the service does (records arriving at the same rate, sent after the same linger, one send at a time).",
    singleRateText(single),
    '',
    '| measure | value | floor (same run) | ratio | target |',
    '|---|---|---|---|---|',
    `| ingest CPU per single event @ ${rate}/s | ${us(svc)} | node:http ${us(httpUs)} + kafkajs ${us(paced)} a record (${Math.round(perSend)} a send) = ${us(httpUs + paced)} | ${ratio(svc / (httpUs + paced))} | <= 1.5x |`,
    `| batch ingest at saturation (${last.batchSaturated.name}), events/s a core | ${perCore(batchUs)} (${us(batchUs)} an event) | kafkajs alone, ${BATCH_SIZE} a send: ${perCore(floorUs)} records/s a core (${us(floorUs)} a record) | ${pct(floorUs / batchUs)} | >= 80 % |`,
    `| batch ingest below saturation (${last.batch.name}), events/s a core | ${perCore(belowUs)} (${us(belowUs)} an event) | as above | ${pct(floorUs / belowUs)} | >= 50 % |`,
    `| the same, against kafkajs alone at the same pace | ${perCore(belowUs)} | kafkajs alone, ${BATCH_SIZE} a send at ${BATCH_RATE} sends/s: ${perCore(pacedFloorUs)} records/s a core (${us(pacedFloorUs)} a record) | ${pct(pacedFloorUs / belowUs)} | |`,
    `| ingest peak RSS, ${last.singleSaturated.name} (achieved ${last.singleSaturated.eventsPerSecond}/s in the last round), highest of the rounds | ${highest('singleSaturated')} MiB | | | < 256 MiB |`,
    `| ingest peak RSS, ${last.batchSaturated.name} (achieved ${last.batchSaturated.eventsPerSecond} events/s in the last round), highest of the rounds | ${highest('batchSaturated')} MiB | | | < 256 MiB |`,
    ...keySetRow(rounds, rate, svc, us, ratio),
    '',
    "The service again on the broker's SASL_SSL listener (SCRAM-SHA-512, the run's own CA; devstack `secured`), below saturation, against the PLAINTEXT figures of the same rounds:",
    '',
    '| measure | SASL_SSL | PLAINTEXT | ratio |',
    '|---|---|---|---|',
    `| ingest CPU per single event @ ${rate}/s | ${us(tlsSingle)} | ${us(svc)} | ${ratio(tlsSingle / svc)} |`,
    `| ingest CPU per event, ${last.batch.name} | ${us(tlsBatch)} | ${us(belowUs)} | ${ratio(tlsBatch / belowUs)} |`,
    '',
    'Steps (offered, achieved events/s, failed, p99 ms, cores, CPU µs/event):',
    '',
    ...steps,
    `- node:http single @ ${rate}/s, CPU µs/event per round: ${https.map((r) => Math.round(microsPerEvent(r))).join(', ')}`,
    '',
  ].join('\n');
}

await main();
