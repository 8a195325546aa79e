/**
 * Ingest benchmark: starts a dedicated Kafka broker (devstack) and the ingestion service as a
 * child process in its production form (`dist/main.js` built by `npx tsc -b`, plain `node`,
 * LOG_LEVEL info), so its RSS and CPU are measured alone, then drives it with an open-loop
 * generator (`loadgen.ts`): requests are *scheduled* at a fixed arrival rate and latency is
 * measured from the scheduled time (no coordinated omission), whatever the service's answers do.
 *
 * Scenarios: single 1 KiB binary events at fixed rates; batches of 100 events; 64 concurrent
 * 1 MiB uploads. Writes its section of bench/results/latest.md.
 *
 * Usage: `(cd bench/ingest && npm run bench)`. Environment:
 * - `BENCH_SECONDS` seconds per step (default 10)
 * - `BENCH_SCENARIOS` comma list of `single`, `batch`, `big` (default all three)
 * - `BENCH_SINGLE_RATES` events/s (default `5000,7500,10000`)
 * - `BENCH_BATCH_RATES` batch requests/s of 100 events (default `300,500,700`)
 * - `BENCH_AUTH` `on` (default): HS256 bearer tokens verified by the service; `off`: AUTH_ENABLED=false
 * - `BENCH_SOURCE=1` runs the service from TypeScript sources through tsx instead of `dist/`
 * - `BENCH_SERVICE_NODE_ARGS` node flags for the service instead of those of `start:prod`
 *   (e.g. `--max-semi-space-size=32 --cpu-prof --cpu-prof-dir=/tmp/prof`)
 * - `BENCH_SERVICE_DIR` the service folder to run (default services/ingest of this checkout)
 * - `BENCH_BROKER_SETTINGS` extra broker settings, `key=value,...`
 * - `BENCH_CONFIGS` service configurations, `defaults,queue-8192` (default: all of ALL_CONFIGS)
 * - `BENCH_OVERLOAD` `on` (default): after each sweep of single or batch, the overload steps
 *   (`overload.ts`: 80 % of the sweep's peak, then 1.7x, 2.3x and 3x of it); `off` skips them
 */
import { execFileSync } from 'node:child_process';
import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { EVENT_TOPIC, eventTopicSpec } from '@event-observatory/broker';
import { ensureStackTopics, productionNodeArgs, startKafka } from '@event-observatory/devstack';
import { overloadedEvents } from '@event-observatory/ingest';
import { signDevToken } from '@event-observatory/service-kit/auth';
import { procStatus } from '../lib/proc.js';
import { benchRun } from '../lib/report.js';
import { startHttpFloor } from './floors.js';
import { overloadSteps, overloadTable } from './overload.js';
import { startIngestService } from './service.js';
import { createdOf, requestShapes } from './shapes.js';
import { type Result, resultTable, step } from './step.js';

const here = dirname(fileURLToPath(import.meta.url));
const repo = join(here, '..', '..');
const SECONDS = Number(process.env.BENCH_SECONDS ?? 10);
/**
 * Seconds of single events before measuring, half at 3,000/s then half at 6,000/s, so both JITs
 * (the service's and the broker's JVM) are warm: a cold broker made the first measured step up to
 * 3x slower than the same step a minute later.
 */
const WARMUP_SECONDS = Number(process.env.BENCH_WARMUP_SECONDS ?? 30);
const TOPIC = EVENT_TOPIC;
const SCENARIOS = new Set((process.env.BENCH_SCENARIOS ?? 'single,batch,big').split(','));
const SINGLE_RATES = (process.env.BENCH_SINGLE_RATES ?? '5000,7500,10000').split(',').map(Number);
const BATCH_RATES = (process.env.BENCH_BATCH_RATES ?? '300,500,700').split(',').map(Number);
const AUTH = (process.env.BENCH_AUTH ?? 'on') !== 'off';
const OVERLOAD = (process.env.BENCH_OVERLOAD ?? 'on') !== 'off';
const FROM_SOURCE = process.env.BENCH_SOURCE === '1';
/** The service's folder; another checkout's (e.g. an older commit's) to compare with the same generator. */
const SERVICE_DIR = process.env.BENCH_SERVICE_DIR ?? join(repo, 'services/ingest');
/** The node flags of the service's `start:prod` script, so the bench runs it as production does. */
const PRODUCTION_NODE_ARGS = productionNodeArgs(SERVICE_DIR);
/** `BENCH_SERVICE_NODE_ARGS` replaces them (repeat them when adding a profiler flag). */
const SERVICE_NODE_ARGS =
  process.env.BENCH_SERVICE_NODE_ARGS === undefined
    ? PRODUCTION_NODE_ARGS
    : process.env.BENCH_SERVICE_NODE_ARGS.split(' ').filter((a) => a !== '');
const run = benchRun('ingest');
/** The service's early refusal (at the default event limit), as the refusal floor answers it. */
const FLOOR_REFUSAL = (() => {
  const refusal = overloadedEvents(1024);
  return {
    headers: { 'content-type': 'application/json', ...refusal.headers },
    body: JSON.stringify(refusal.toBody()),
  };
})();
const SECRET = 'bench-secret-bench-secret-bench-secret!!';
/** The bearer token of every request, signed once for every service process of the run. */
const TOKEN = signDevToken({ secret: SECRET, scopes: ['events:write'], ttl: '24h', subject: 'bench' });
/**
 * Service configurations measured one after the other against the same broker: the defaults, and
 * a producer queue eight times the default's. The queue's capacity is the ceiling of the adaptive
 * event limit, so this one shows what raising it buys (fewer batches refused near saturation) and
 * what it costs (more requests in flight under overload: latency and RSS), for the README's advice.
 * `BENCH_CONFIGS=defaults` or `=queue-8192` runs one of them.
 */
const ALL_CONFIGS = [
  { name: 'defaults', env: {} as Record<string, string> },
  { name: 'queue-8192', env: { BROKER_QUEUE_CAPACITY: '8192' } as Record<string, string> },
];
const CONFIG_NAMES = process.env.BENCH_CONFIGS?.split(',') ?? ALL_CONFIGS.map((c) => c.name);
const CONFIGS = ALL_CONFIGS.filter((c) => CONFIG_NAMES.includes(c.name));
/** Kafka settings (devstack defaults plus these; more with BENCH_BROKER_SETTINGS=`key=value,...`). */
const BROKER_SETTINGS: Record<string, string> = {
  'message.max.bytes': '2097152',
  ...Object.fromEntries(
    (process.env.BENCH_BROKER_SETTINGS ?? '')
      .split(',')
      .filter((kv) => kv.includes('='))
      .map((kv) => [kv.slice(0, kv.indexOf('=')), kv.slice(kv.indexOf('=') + 1)]),
  ),
};

async function main(): Promise<void> {
  if (!FROM_SOURCE) execFileSync('npx', ['tsc', '-b'], { cwd: SERVICE_DIR, stdio: 'inherit' });
  const dir = mkdtempSync(join(tmpdir(), 'bench-ingest-'));
  chmodSync(dir, 0o755);
  const kafka = await startKafka({ dataDir: join(dir, 'kafka'), settings: BROKER_SETTINGS });
  await ensureStackTopics(kafka.bootstrapServers, [eventTopicSpec(TOPIC)]);
  const sections: string[] = [];
  for (const config of CONFIGS) {
    sections.push(...(await measureService(kafka, config)));
  }
  await kafka.stop();
  rmSync(dir, { recursive: true, force: true });
  const lines = [
    '# Ingest rate sweep (bench/ingest)',
    '',
    `${SERVICE_DIR === join(repo, 'services/ingest') ? '' : `Against ${SERVICE_DIR}; `}${SECONDS} s per step.`,
    'Open loop: requests are scheduled at a fixed arrival rate and latency counts from the scheduled time (generator: `loadgen.ts`, raw keep-alive sockets, up to 512 connections).',
    `One Kafka broker (KRaft, local, ${Object.entries(BROKER_SETTINGS)
      .map(([k, v]) => `${k}=${v}`)
      .join(
        ', ',
      )}), 12 partitions, acks=all, idempotent producer; service ${FROM_SOURCE ? 'from sources (tsx)' : `from dist/ (\`${['node', ...SERVICE_NODE_ARGS, 'dist/main.js'].join(' ')}\`${SERVICE_NODE_ARGS === PRODUCTION_NODE_ARGS ? ', as `npm run start:prod`' : ''})`}, LOG_LEVEL=info, AUTH_ENABLED=${AUTH} (HS256 bearer token on every request), tracing off.`,
    'Load generator, service and broker share the same 2-core machine; the cores columns are CPU seconds per second of each process over the step (the service above 1.00 means GC and libuv threads beside the event loop). "acknowledged" counts events the service answered as published (for batches: the `created` count of each 200; elements refused inside a 200 are failed).',
    '',
    ...sections,
  ];
  run.write(lines.join('\n'), { kafkaVersion: kafka.version });
}

/**
 * Runs `work` with the broker stopped (SIGSTOP) for its first `seconds`, the sending window of a
 * step, then resumed, so the requests it held are answered and the step ends.
 */
async function withBrokerPaused<T>(
  pid: number | undefined,
  seconds: number,
  work: () => Promise<T>,
): Promise<T> {
  if (pid === undefined) throw new Error('the broker has no process to pause');
  process.kill(pid, 'SIGSTOP');
  const resume = setTimeout(() => process.kill(pid, 'SIGCONT'), seconds * 1000);
  try {
    return await work();
  } finally {
    clearTimeout(resume);
    process.kill(pid, 'SIGCONT');
  }
}

/** What a scenario runs against: the service's process and the requests of its shapes. */
interface ScenarioContext {
  at: { port: number; pid: number; brokerPid: number | undefined };
  base: string;
  token: string;
  single: ReturnType<typeof requestShapes>['single'];
  batch: ReturnType<typeof requestShapes>['batch'];
}

/**
 * Runs each scenario of `config` on a service process of its own, started and warmed for it, so a
 * scenario's figures (RSS above all: V8 and malloc keep pages a step before has grown) do not
 * depend on which scenarios ran before it. Returns the configuration's report section.
 */
async function measureService(
  kafka: Awaited<ReturnType<typeof startKafka>>,
  config: { name: string; env: Record<string, string> },
): Promise<string[]> {
  const results: Result[] = [];
  const notes: string[] = [];
  const scenarios: Array<[string, (c: ScenarioContext) => Promise<string[]>]> = [
    ['single', (c) => singleScenario(c, results)],
    ['batch', (c) => batchScenario(c, results)],
    ['big', bigScenario],
  ];
  for (const [scenario, measure] of scenarios) {
    if (!SCENARIOS.has(scenario)) continue;
    notes.push(...(await withWarmService(kafka, config.env, measure)));
  }
  const settings = Object.entries(config.env)
    .map(([k, v]) => `${k}=${v}`)
    .join(', ');
  return [
    `## ${config.name}${settings ? ` (${settings})` : ' (every setting at its default)'}`,
    '',
    ...resultTable(results),
    '',
    ...notes,
  ];
}

/**
 * Starts the service with `env`, warms it (single events, see WARMUP_SECONDS), runs `measure`,
 * and stops it; returns `measure`'s lines and the process's high-water mark.
 */
async function withWarmService(
  kafka: Awaited<ReturnType<typeof startKafka>>,
  env: Record<string, string>,
  measure: (c: ScenarioContext) => Promise<string[]>,
): Promise<string[]> {
  const service = await startIngestService({
    dir: SERVICE_DIR,
    bootstrapServers: kafka.bootstrapServers,
    nodeArgs: SERVICE_NODE_ARGS,
    fromSource: FROM_SOURCE,
    authSecret: AUTH ? SECRET : undefined,
    env,
  });
  try {
    const { port, pid } = service;
    const token = await TOKEN;
    const { single, batch } = requestShapes(`127.0.0.1:${port}`, AUTH ? token : undefined);
    const at = { port, pid, brokerPid: kafka.pid() };
    for (const rate of [3000, 6000]) {
      await step({
        ...at,
        name: 'warm-up',
        rate,
        eventsPerRequest: 1,
        request: single,
        seconds: WARMUP_SECONDS / 2,
      });
    }
    const lines = await measure({ at, base: `http://127.0.0.1:${port}`, token, single, batch });
    const hwm = procStatus(pid, 'VmHWM');
    return [
      ...lines,
      `Service process high-water mark over this scenario (its own process): ${Math.round(hwm / 1048576)} MiB.`,
      '',
    ];
  } finally {
    await service.stop();
  }
}

/**
 * Runs a scenario's sweep, then its overload steps against the sweep's peak; pushes every step's
 * result to `results` and returns the overload table.
 */
async function sweep(
  c: ScenarioContext,
  results: Result[],
  scenario: string,
  shape: Omit<Parameters<typeof step>[0], 'name' | 'rate' | 'seconds'>,
  rates: number[],
  nameOf: (rate: number) => string,
): Promise<string[]> {
  const measured = async (name: string, rate: number, maxConnections?: number, expectContinue?: boolean) => {
    const r = await step({
      ...shape,
      name,
      rate,
      seconds: SECONDS,
      ...(maxConnections ? { maxConnections } : {}),
      ...(expectContinue ? { expectContinue } : {}),
    });
    console.error(JSON.stringify(r));
    results.push(r);
    return r;
  };
  const swept: Result[] = [];
  for (const rate of rates) swept.push(await measured(nameOf(rate), rate));
  if (!OVERLOAD) return [];
  const { peak, sweepPeak, base, refusal, figures } = await overloadSteps({
    scenario,
    eventsPerRequest: shape.eventsPerRequest,
    sweep: swept,
    run: measured,
    // More connections than the event limit's ceiling (BROKER_QUEUE_CAPACITY, 1,024 by default)
    // holds: with one request a connection, fewer would never fill it, and nothing is refused.
    refusing: (name, rate, expectContinue) =>
      withBrokerPaused(c.at.brokerPid, SECONDS, () => measured(name, rate, 2048, expectContinue)),
    // Clients ask before sending a large body; a single 1 KiB event is sent whole.
    expectContinue: shape.eventsPerRequest > 1,
    refusalFloor: async (name, rate) => {
      const floor = await startHttpFloor({ refusal: FLOOR_REFUSAL, nodeArgs: SERVICE_NODE_ARGS });
      try {
        const at = {
          ...shape,
          port: floor.port,
          pid: floor.pid,
          brokerPid: undefined,
          rate,
          maxConnections: 2048,
        };
        // Its JIT warmed first, as the service's is by the steps before.
        await step({ ...at, name: 'warm-up', seconds: 2 });
        const r = await step({ ...at, name, seconds: SECONDS });
        console.error(JSON.stringify(r));
        return r;
      } finally {
        await floor.stop();
      }
    },
  });
  return [...overloadTable(scenario, peak, sweepPeak, base, refusal, figures), ''];
}

function singleScenario(c: ScenarioContext, results: Result[]): Promise<string[]> {
  return sweep(
    c,
    results,
    'single 1 KiB binary',
    { ...c.at, eventsPerRequest: 1, request: c.single },
    SINGLE_RATES,
    (rate) => `single 1 KiB binary @ ${rate}/s`,
  );
}

async function batchScenario(c: ScenarioContext, results: Result[]): Promise<string[]> {
  const batchStep = { ...c.at, eventsPerRequest: 100, request: c.batch, acknowledged: createdOf };
  await step({ ...batchStep, name: 'warm-up batch', rate: 100, seconds: 2 });
  return sweep(c, results, 'batch of 100', batchStep, BATCH_RATES, (rate) => `batch of 100 @ ${rate} req/s`);
}

/** 64 concurrent 1 MiB uploads. */
async function bigScenario(c: ScenarioContext): Promise<string[]> {
  const big = Buffer.alloc(1_048_576, 0x62);
  let peak = 0;
  const sampler = setInterval(() => {
    peak = Math.max(peak, procStatus(c.at.pid, 'VmRSS'));
  }, 20);
  const started = performance.now();
  const statuses = await Promise.all(
    Array.from({ length: 64 }, async (_, i) => {
      const headers: Record<string, string> = {
        'ce-specversion': '1.0',
        'ce-id': `big-${i}`,
        'ce-source': 'https://bench.example/big',
        'ce-type': 'bench.reading',
        'ce-time': new Date().toISOString(),
        'content-type': 'application/octet-stream',
      };
      if (AUTH) headers.authorization = `Bearer ${c.token}`;
      const r = await fetch(`${c.base}/v1/events`, { method: 'POST', headers, body: big });
      await r.arrayBuffer();
      return r.status;
    }),
  );
  clearInterval(sampler);
  const bigMs = performance.now() - started;
  return [
    `64 concurrent 1 MiB uploads: statuses ${JSON.stringify(countBy(statuses))}, ${bigMs.toFixed(0)} ms, peak RSS during the burst ${Math.round(peak / 1048576)} MiB.`,
  ];
}

function countBy(values: number[]): Record<string, number> {
  const out: Record<string, number> = {};
  for (const v of values) out[v] = (out[v] ?? 0) + 1;
  return out;
}

await main();
