/**
 * The pipeline the faults are done to: a Kafka and a PostgreSQL of its own (the faults kill and
 * stop them, which must not disturb the other suites' shared stack), and the ingestion and
 * consumer services as real processes on fixed ports, so a restarted one answers where the old
 * one did.
 */
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { DEAD_LETTER_TOPIC } from '@event-observatory/broker';
import {
  createDatabase,
  freePort,
  type SilentProxy,
  type Stack,
  startSilentProxy,
  startStack,
  tempDataDir,
  topicRecordCount,
} from '@event-observatory/devstack';
import { signDevToken } from '@event-observatory/service-kit/auth';
import pg from 'pg';
import { type ServiceProcess, spawnService } from './faults-process.js';
import { INGEST_QUEUE_CAPACITY } from './faults-run.js';
import { until } from './faults-wait.js';

const SECRET = 'faults-secret-0123456789-abcdefghijklmnopqrstuvwxyz';
const START_TIMEOUT_MS = 90_000;

/**
 * Settings the suite gives the services on purpose: a small send queue (`INGEST_QUEUE_CAPACITY`),
 * and a 200 ms hold between a chunk's write and its offset commit
 * (`CONSUMER_TEST_HOLD_AFTER_WRITE`), so a kill lands between the two most of the time.
 */
export const CONSUMER_HOLD = '200ms';
export const HELD = 'test hold: chunk written, offset not committed yet';
/**
 * The consumer's `DATABASE_STATEMENT_TIMEOUT` here: a write on a connection gone silent fails
 * after twice this (the write pool's client-side bound) instead of the default's 35 s.
 */
export const CONSUMER_STATEMENT_TIMEOUT_MS = 2_000;

/** What the pipeline runs on; the default is the suite's: one broker, the services' delivery bounds. */
export interface PipelineOptions {
  /** Kafka nodes (devstack's KRaft cluster when more than 1: replication factor 3, min ISR 2). */
  kafkaNodes?: number;
  /** Ingest reaches the brokers only through silent proxies (`stack.kafkaCluster.paths`). */
  ingestThroughPaths?: boolean;
  /** Added to the ingestion service's environment (BROKER_DELIVERY_TIMEOUT, ...). */
  ingestEnv?: Record<string, string>;
  /** Folder name prefix under the temporary directory. */
  name?: string;
}

export interface Pipeline {
  stack: Stack;
  /** The consumer's database, for the reconciliation (errors while it is stopped are expected). */
  db: pg.Pool;
  token: string;
  dataDir: string;
  ingest: ServiceProcess;
  consumer: ServiceProcess;
  /** The consumer reaches PostgreSQL through it; `freeze()` silences the connections open now. */
  databasePath: SilentProxy;
  /** Starts (again) the ingestion service on its port and waits until it is ready. */
  startIngest(): Promise<void>;
  /** Starts (again) the consumer on its port and waits until it is ready. */
  startConsumer(): Promise<void>;
  /**
   * Starts one more consumer process in the same group (`instance` names its log) on a port of
   * its own and waits until it is ready; the caller stops or kills it.
   */
  startExtraConsumer(instance: string): Promise<ServiceProcess>;
  /** The sum of a meter's series on the consumer's /metrics. */
  consumerMetric(name: string): Promise<number>;
  /**
   * Records the consumer skipped as already stored (`consume_records_duplicate_total`), summed
   * over its processes: a replaced process's last reading (sampled every 500 ms) is carried over.
   */
  duplicatesAbsorbed(): Promise<number>;
  /** Records ever written to the dead-letter topic (sum of its high watermarks). */
  deadLetters(): Promise<number>;
  close(): Promise<void>;
}

async function ready(url: string): Promise<boolean> {
  return (await fetch(`${url}/health/ready`, { signal: AbortSignal.timeout(3_000) })).status === 200;
}

export async function startPipeline(opts: PipelineOptions = {}): Promise<Pipeline> {
  const dataDir = tempDataDir(opts.name ?? 'faults');
  const stack = await startStack({
    dataDir: join(dataDir, 'stack'),
    kafkaNodes: opts.kafkaNodes,
    kafkaSilentPaths: opts.ingestThroughPaths,
  });
  const databaseUrl = await createDatabase(stack.databaseUrl, 'faults');
  const db = new pg.Pool({ connectionString: databaseUrl, max: 2 });
  const direct = new URL(databaseUrl);
  const databasePath = await startSilentProxy({ host: direct.hostname, port: Number(direct.port) });
  const proxied = new URL(databaseUrl);
  proxied.port = String(databasePath.port);
  // Idle clients lose their server when PostgreSQL stops: an expected error, not a crash.
  db.on('error', () => {});
  const [ingestPort, consumerPort] = [await freePort(), await freePort()];
  const common = { BROKER_BOOTSTRAP_SERVERS: stack.bootstrapServers, SERVICE_VERSION: 'faults' };
  const consumerEnv = {
    ...common,
    DATABASE_URL: proxied.toString(),
    DATABASE_STATEMENT_TIMEOUT: `${CONSUMER_STATEMENT_TIMEOUT_MS}ms`,
    ADMIN_AUTH_ENABLED: 'false',
    CONSUMER_BATCH_WINDOW: '50ms',
    CONSUMER_TEST_HOLD_AFTER_WRITE: CONSUMER_HOLD,
    LAG_REFRESH_INTERVAL: '1s',
    // The killed consumer's partitions move to its successor after 10 s, not 30.
    BROKER_SESSION_TIMEOUT: '10s',
    LOG_LEVEL: 'info',
  };

  let ingest: ServiceProcess | undefined;
  let consumer: ServiceProcess | undefined;
  // The duplicate meter of the processes replaced so far, and the current one's last reading.
  let absorbedBefore = 0;
  let absorbedNow = 0;
  const sampleAbsorbed = async () => {
    absorbedNow = await p.consumerMetric('consume_records_duplicate_total').catch(() => absorbedNow);
    return absorbedBefore + absorbedNow;
  };
  const sampler = setInterval(() => void sampleAbsorbed(), 500);
  const running = (service: ServiceProcess | undefined, name: string) => {
    if (!service) throw new Error(`${name} not started`);
    return service;
  };

  const p: Pipeline = {
    stack,
    db,
    token: await signDevToken({ secret: SECRET, scopes: ['events:write'] }),
    dataDir,
    databasePath,
    get ingest() {
      return running(ingest, 'ingest');
    },
    get consumer() {
      return running(consumer, 'consumer');
    },
    async startIngest() {
      ingest = await spawnService(
        'ingest',
        ingestPort,
        {
          ...common,
          AUTH_SECRET: SECRET,
          BROKER_QUEUE_CAPACITY: String(INGEST_QUEUE_CAPACITY),
          LOG_LEVEL: 'warn',
          ...(opts.ingestThroughPaths && {
            BROKER_BOOTSTRAP_SERVERS: stack.kafkaCluster?.pathBootstrapServers ?? stack.bootstrapServers,
          }),
          ...opts.ingestEnv,
        },
        dataDir,
      );
      await until('ingest ready', () => ready(p.ingest.url).catch(() => false), START_TIMEOUT_MS);
    },
    async startConsumer() {
      absorbedBefore += absorbedNow;
      absorbedNow = 0;
      consumer = await spawnService('consumer', consumerPort, consumerEnv, dataDir);
      await until('consumer ready', () => ready(p.consumer.url).catch(() => false), START_TIMEOUT_MS);
    },
    async startExtraConsumer(instance) {
      const extra = await spawnService('consumer', await freePort(), consumerEnv, dataDir, instance);
      await until(`${instance} ready`, () => ready(extra.url).catch(() => false), START_TIMEOUT_MS);
      return extra;
    },
    async consumerMetric(name) {
      const text = await (await fetch(`${p.consumer.metricsUrl}/metrics`)).text();
      return text
        .split('\n')
        .filter((l) => l.startsWith(`${name}{`) || l.startsWith(`${name} `))
        .reduce((sum, l) => sum + Number(l.slice(l.lastIndexOf(' ') + 1)), 0);
    },
    duplicatesAbsorbed: sampleAbsorbed,
    deadLetters: () => topicRecordCount(stack.bootstrapServers, DEAD_LETTER_TOPIC),
    async close() {
      clearInterval(sampler);
      for (const service of [ingest, consumer]) await service?.stop();
      await databasePath.close();
      await db.end();
      await stack.stop();
      if (!process.env.OBSERVATORY_KEEP_STACK) rmSync(dataDir, { recursive: true, force: true });
    },
  };
  await Promise.all([p.startIngest(), p.startConsumer()]);
  return p;
}
