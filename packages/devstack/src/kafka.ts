/**
 * One Apache Kafka node in KRaft combined mode (broker + controller) on 127.0.0.1 (or on `host`),
 * optionally with secured client listeners beside the PLAINTEXT one (`kafka-secured.ts`).
 *
 * Layout of `dataDir`: `server.properties`, `log4j2.properties` (4.x) or `log4j.properties` (3.x), `kafka.log` (stdout/stderr of the JVM),
 * `kafka.pid`, `cluster-id`, and `data/` (the log directory, formatted on the first start only);
 * with secured listeners also `tls/` (the run's certificates) and `scram-users.json`.
 */
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { kafkaClient } from './kafka-clients.js';
import { ensureKafkaDistribution, kafkaVersion } from './kafka-dist.js';
import { loggingConfig } from './kafka-logging.js';
import {
  addScramArgs,
  type SecuredListenerOptions,
  type SecuredListeners,
  scramUsers,
  securedListeners,
} from './kafka-secured.js';
import { freePort, refuseBusyPorts } from './ports.js';
import { killStale, pollReady, runCommand, type Supervised, supervisedService } from './supervise.js';

export interface KafkaOptions {
  /** Folder for configuration, logs and the broker's data; created when missing, reused when present. */
  dataDir: string;
  /** Client (PLAINTEXT) port; 0 or absent picks a free port once, kept across stop()/start(). */
  port?: number;
  /**
   * Address the client listener binds and advertises; default `127.0.0.1`. The cluster suites give
   * this machine's own address, which pods can route to (they cannot reach 127.0.0.1 of the host).
   * The controller listener stays on 127.0.0.1.
   */
  host?: string;
  /** Controller (KRaft quorum) port; 0 or absent picks a free port once. */
  controllerPort?: number;
  /**
   * Also listen with `SASL_SSL` (SCRAM users made at format time) and `SSL` (client certificate
   * required) on `host`, with certificates issued for this start; `{}` for the defaults.
   */
  secured?: SecuredListenerOptions;
  /** Extra or overriding broker settings (server.properties keys). */
  settings?: Record<string, string>;
  /** JVM heap options; default `-Xms256m -Xmx512m` (or `$OBSERVATORY_KAFKA_HEAP_OPTS`). */
  heapOpts?: string;
  /**
   * More JVM options for the broker and its storage format, e.g. `-XX:TieredStopAtLevel=1`; default
   * `$OBSERVATORY_KAFKA_JVM_OPTS` (split on spaces), which the repository's vitest runs set.
   */
  jvmOpts?: string[];
  /** Kafka release; default {@link kafkaVersion} (4.4.0 unless `OBSERVATORY_KAFKA_VERSION` says otherwise). */
  version?: string;
  /** Give up waiting for the broker after this long; default 120 s. */
  startTimeoutMs?: number;
  /** Progress lines (Maven resolution); default: nothing. */
  log?: (line: string) => void;
}

export interface KafkaHandle {
  /** `<host>:<port>`, host `127.0.0.1` unless given */
  bootstrapServers: string;
  /** The Kafka release running, e.g. `4.4.0`. */
  version: string;
  port: number;
  controllerPort: number;
  /** The secured listeners, their CA, client certificate and users (when `secured` was given). */
  secured?: SecuredListeners;
  dataDir: string;
  /** File receiving the broker's console output (WARN and above, plus start/stop lines). */
  logFile: string;
  /** Process id of the running JVM, undefined while stopped. */
  pid(): number | undefined;
  /** SIGTERM, wait for the exit (SIGKILL after 30 s). Idempotent. */
  stop(): Promise<void>;
  /** SIGKILL (a crash: no clean shutdown); `start()` brings it back on the same port and data. */
  kill(): Promise<void>;
  /** Starts the same broker again: same ports, same data. Idempotent while running. */
  start(): Promise<void>;
}

/** Broker settings applied on every start; `KafkaOptions.settings` override them. */
export function brokerSettings(opts: {
  port: number;
  controllerPort: number;
  logDir: string;
  host?: string;
}): Record<string, string> {
  const host = opts.host ?? '127.0.0.1';
  return {
    'process.roles': 'broker,controller',
    'node.id': '1',
    'controller.quorum.voters': `1@127.0.0.1:${opts.controllerPort}`,
    listeners: `PLAINTEXT://${host}:${opts.port},CONTROLLER://127.0.0.1:${opts.controllerPort}`,
    'advertised.listeners': `PLAINTEXT://${host}:${opts.port}`,
    'controller.listener.names': 'CONTROLLER',
    'inter.broker.listener.name': 'PLAINTEXT',
    'listener.security.protocol.map': 'PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT',
    'log.dirs': opts.logDir,
    // The spec: topics are created by code (packages/broker), never by the broker.
    'auto.create.topics.enable': 'false',
    'log.retention.hours': '168',
    'num.partitions': '1',
    // Single node: internal topics with one replica.
    'offsets.topic.replication.factor': '1',
    'offsets.topic.num.partitions': '10',
    'transaction.state.log.replication.factor': '1',
    'transaction.state.log.min.isr': '1',
    'transaction.state.log.num.partitions': '10',
    'min.insync.replicas': '1',
    // Consumers join at once instead of waiting 3 s for more members (fast tests and dev loops).
    'group.initial.rebalance.delay.ms': '0',
    // The log cleaner allocates this buffer on the heap at start (128 MiB by default): with a
    // 512 MiB heap committed at 256 MiB it kept G1 in back-to-back concurrent cycles under load,
    // the broker burning 0.7 of a core instead of 0.2 (bench/ingest). 16 MiB still dedupes about
    // 600,000 keys a pass, far more than these brokers' compacted topics hold.
    'log.cleaner.dedupe.buffer.size': String(16 * 1024 * 1024),
  };
}

function properties(map: Record<string, string>): string {
  return `${Object.entries(map)
    .map(([k, v]) => `${k}=${v}`)
    .join('\n')}\n`;
}

/** A KRaft cluster id: 16 random bytes, base64url without padding, as `kafka-storage random-uuid`. */
export function newClusterId(): string {
  for (;;) {
    const id = randomBytes(16).toString('base64url');
    if (!id.startsWith('-')) return id;
  }
}

const JAVA_HINT = 'install a JDK 17+ (Debian: apt-get install openjdk-17-jre-headless)';

/**
 * Ready once the broker answers metadata requests with a controller and at least one broker, and
 * serves the offsets of every topic it holds.
 */
async function waitHealthy(bootstrapServers: string, proc: Supervised, timeoutMs: number): Promise<void> {
  const kafka = kafkaClient(bootstrapServers, {
    clientId: 'devstack-health',
    connectionTimeout: 1000,
    requestTimeout: 3000,
    retry: { retries: 0 },
  });
  await pollReady(
    proc,
    timeoutMs,
    250,
    async () => {
      const admin = kafka.admin();
      try {
        await admin.connect();
        const cluster = await admin.describeCluster();
        if (cluster.brokers.length === 0 || cluster.controller === null) return false;
        // A restarted broker is named leader of its partitions before it serves them: until then
        // a read of their offsets is refused (NOT_LEADER_OR_FOLLOWER), as a first produce would be.
        const topics = await admin.listTopics();
        await Promise.all(topics.map((topic) => admin.fetchTopicOffsets(topic)));
        return true;
      } finally {
        await admin.disconnect().catch(() => {});
      }
    },
    `Kafka on ${bootstrapServers}`,
  );
}

/**
 * Starts one KRaft broker+controller and waits until it serves metadata and its topics' offsets.
 * The first start in a data folder resolves the jars (cached) and formats the storage.
 *
 * @example
 * const kafka = await startKafka({ dataDir: '/tmp/k1' });
 * // ... use kafka.bootstrapServers ...
 * await kafka.stop();
 */
export async function startKafka(opts: KafkaOptions): Promise<KafkaHandle> {
  const dataDir = resolve(opts.dataDir);
  const logDir = join(dataDir, 'data');
  mkdirSync(logDir, { recursive: true });
  const dist = await ensureKafkaDistribution(opts.version ?? kafkaVersion(), opts.log);
  await killStale(dataDir, 'kafka', dataDir);
  const jvmOpts = opts.jvmOpts ?? (process.env.OBSERVATORY_KAFKA_JVM_OPTS ?? '').split(/\s+/).filter(Boolean);

  await refuseBusyPorts('Kafka', [
    opts.port,
    opts.controllerPort,
    opts.secured?.saslSslPort,
    opts.secured?.sslPort,
  ]);
  const taken = new Set<number>();
  const pick = async (wanted: number | undefined): Promise<number> => {
    let port = wanted || (await freePort());
    while (taken.has(port)) port = await freePort();
    taken.add(port);
    return port;
  };
  const port = await pick(opts.port);
  const controllerPort = await pick(opts.controllerPort);
  const host = opts.host ?? '127.0.0.1';
  const bootstrapServers = `${host}:${port}`;
  const formatted = existsSync(join(logDir, 'meta.properties'));

  const configFile = join(dataDir, 'server.properties');
  const logging = loggingConfig(dist.version);
  const log4jFile = join(dataDir, logging.fileName);
  const logFile = join(dataDir, 'kafka.log');
  const base = brokerSettings({ port, controllerPort, logDir, host });
  const secured =
    opts.secured &&
    securedListeners(
      {
        saslSslPort: await pick(opts.secured.saslSslPort),
        sslPort: await pick(opts.secured.sslPort),
        host,
        users: scramUsers(dataDir, opts.secured.users ?? ['observatory'], formatted),
        tlsDir: join(dataDir, 'tls'),
      },
      {
        listeners: base.listeners as string,
        advertised: base['advertised.listeners'] as string,
        protocolMap: base['listener.security.protocol.map'] as string,
      },
    );
  writeFileSync(configFile, properties({ ...base, ...secured?.settings, ...(opts.settings ?? {}) }));
  writeFileSync(log4jFile, logging.contents);

  const env = { ...process.env };
  delete env.CLASSPATH;
  delete env.JAVA_TOOL_OPTIONS;
  const log4jOpt = `-D${logging.systemProperty}=file:${log4jFile}`;

  if (!formatted) {
    const idFile = join(dataDir, 'cluster-id');
    const clusterId = existsSync(idFile) ? readFileSync(idFile, 'utf8').trim() : newClusterId();
    writeFileSync(idFile, `${clusterId}\n`);
    await runCommand(
      'java',
      [
        ...jvmOpts,
        log4jOpt,
        '-cp',
        dist.classPath,
        'kafka.tools.StorageTool',
        'format',
        // Before the last argument, which is what a failure message quotes (not a password).
        ...addScramArgs(secured?.listeners.users ?? []),
        '-t',
        clusterId,
        '-c',
        configFile,
      ],
      { env, missingHint: JAVA_HINT },
    );
  }

  const heap = (opts.heapOpts ?? process.env.OBSERVATORY_KAFKA_HEAP_OPTS ?? '-Xms256m -Xmx512m')
    .split(/\s+/)
    .filter(Boolean);
  const javaArgs = [
    ...heap,
    '-XX:+UseG1GC',
    '-XX:MaxGCPauseMillis=20',
    ...jvmOpts,
    '-Djava.awt.headless=true',
    log4jOpt,
    `-Dkafka.logs.dir=${dataDir}`,
    '-cp',
    dist.classPath,
    'kafka.Kafka',
    configFile,
  ];
  const timeoutMs = opts.startTimeoutMs ?? 120_000;
  const service = supervisedService({
    name: 'kafka',
    command: 'java',
    args: javaArgs,
    dataDir,
    marker: dataDir,
    logFile,
    env,
    banner: () => `--- devstack: starting Kafka ${dist.version} at ${new Date().toISOString()}`,
    waitReady: (proc) => waitHealthy(bootstrapServers, proc, timeoutMs),
    stopSignal: 'SIGTERM',
    stopGraceMs: 30_000,
  });

  await service.start();
  return {
    bootstrapServers,
    version: dist.version,
    port,
    controllerPort,
    ...(secured && { secured: secured.listeners }),
    dataDir,
    logFile,
    pid: service.pid,
    stop: service.stop,
    kill: service.kill,
    start: service.start,
  };
}
