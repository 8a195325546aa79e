/**
 * The whole local stack in one call: Kafka + PostgreSQL + the spec's topics. Used by `make dev`
 * (scripts/dev.ts), the CLI and the vitest global setup.
 */
import { mkdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import {
  type EnsureTopicsResult,
  ensureTopics,
  readBrokerTopics,
  type TopicSpec,
  topicSpecs,
} from '@event-observatory/broker';
import { type KafkaHandle, type KafkaOptions, startKafka } from './kafka.js';
import { withKafkaAdmin } from './kafka-clients.js';
import { type KafkaCluster, startKafkaCluster } from './kafka-cluster.js';
import { type PostgresHandle, type PostgresOptions, startPostgres } from './postgres.js';

export interface StackOptions {
  /** Root folder: Kafka in `<dataDir>/kafka`, PostgreSQL in `<dataDir>/postgres`. */
  dataDir: string;
  /** Kafka client port (0/absent: free port). `make dev` passes 9092. */
  kafkaPort?: number;
  kafkaControllerPort?: number;
  /**
   * Kafka nodes; default 1. More starts a KRaft cluster (`startKafkaCluster`, free ports, the
   * `kafka` options' host, heap and version) and gives the default topics replication factor 3
   * (at most the node count) and `min.insync.replicas` 2.
   */
  kafkaNodes?: number;
  /** With `kafkaNodes` > 1: a silent proxy in front of each node (`KafkaCluster.paths`). */
  kafkaSilentPaths?: boolean;
  /** PostgreSQL port (0/absent: free port). */
  postgresPort?: number;
  /**
   * Address both servers listen on (Kafka also advertises it); default `127.0.0.1`. Give this
   * machine's own address for clients in pods (with `postgres.allowedClients` for PostgreSQL).
   */
  host?: string;
  postgresPassword?: string;
  /** Topics to ensure; default: `stackTopics()`. */
  topics?: TopicSpec[];
  kafka?: Partial<Omit<KafkaOptions, 'dataDir' | 'port' | 'controllerPort'>>;
  postgres?: Partial<Omit<PostgresOptions, 'dataDir' | 'port' | 'password'>>;
  log?: (line: string) => void;
}

export interface Stack {
  /** The only Kafka node, or node 1 of the cluster. */
  kafka: KafkaHandle;
  /** The cluster, when `kafkaNodes` > 1. */
  kafkaCluster?: KafkaCluster;
  postgres: PostgresHandle;
  /** `<host>:<port>`, comma-separated for a cluster */
  bootstrapServers: string;
  /** Superuser URL of the `postgres` database; see createDatabase for a database of your own. */
  databaseUrl: string;
  topics: EnsureTopicsResult;
  /** Stops Kafka and PostgreSQL (in parallel) and waits until both processes are gone. */
  stop(): Promise<void>;
  /** Starts both again on the same ports and data. */
  start(): Promise<void>;
}

/**
 * Default topics of the stack: the event topic (12 partitions) and its dead-letter topic (3,
 * compacted), named and kept as `env` says (`BROKER_TOPIC`, `BROKER_DLQ_TOPIC`,
 * `BROKER_LOG_RETENTION_HOURS`; the spec's defaults when unset).
 */
export function stackTopics(env: Readonly<Record<string, string | undefined>> = process.env): TopicSpec[] {
  return topicSpecs(readBrokerTopics(env));
}

/** The topics replicated on a cluster of `nodes`: factor 3 at most, two in-sync copies for acks=all. */
export function replicatedTopics(topics: TopicSpec[], nodes: number): TopicSpec[] {
  return topics.map((t) => ({
    ...t,
    replicationFactor: Math.min(3, nodes),
    configs: { ...t.configs, 'min.insync.replicas': String(Math.min(2, nodes)) },
  }));
}

/** Runs `ensureTopics` with a short-lived kafkajs admin client (`bootstrapServers` comma-separated). */
export function ensureStackTopics(
  bootstrapServers: string,
  topics: TopicSpec[] = stackTopics(),
): Promise<EnsureTopicsResult> {
  return withKafkaAdmin(bootstrapServers, (admin) => ensureTopics(admin, topics));
}

/**
 * Starts Kafka and PostgreSQL in parallel, then ensures the topics. On failure, whatever started is
 * stopped again before the error is thrown.
 *
 * @example
 * const stack = await startStack({ dataDir: '.dev', kafkaPort: 9092 });
 * console.log(stack.bootstrapServers, stack.databaseUrl);
 * await stack.stop();
 */
export async function startStack(opts: StackOptions): Promise<Stack> {
  const dataDir = resolve(opts.dataDir);
  mkdirSync(dataDir, { recursive: true });
  const nodes = opts.kafkaNodes ?? 1;
  const topics = opts.topics ?? (nodes > 1 ? replicatedTopics(stackTopics(), nodes) : stackTopics());
  const [kafkaResult, postgresResult] = await Promise.allSettled([
    nodes > 1
      ? startKafkaCluster({
          host: opts.host,
          ...opts.kafka,
          dataDir: join(dataDir, 'kafka'),
          nodes,
          silentPaths: opts.kafkaSilentPaths,
          log: opts.log ?? opts.kafka?.log,
        })
      : startKafka({
          host: opts.host,
          ...opts.kafka,
          dataDir: join(dataDir, 'kafka'),
          port: opts.kafkaPort,
          controllerPort: opts.kafkaControllerPort,
          log: opts.log ?? opts.kafka?.log,
        }),
    startPostgres({
      host: opts.host,
      ...opts.postgres,
      dataDir: join(dataDir, 'postgres'),
      port: opts.postgresPort,
      password: opts.postgresPassword,
    }),
  ]);
  const started = [kafkaResult, postgresResult].flatMap((r) => (r.status === 'fulfilled' ? [r.value] : []));
  const failure = [kafkaResult, postgresResult].find((r) => r.status === 'rejected');
  if (failure) {
    await Promise.allSettled(started.map((h) => h.stop()));
    throw (failure as PromiseRejectedResult).reason;
  }
  const kafka = (kafkaResult as PromiseFulfilledResult<KafkaHandle | KafkaCluster>).value;
  const postgres = (postgresResult as PromiseFulfilledResult<PostgresHandle>).value;
  const cluster = 'nodes' in kafka ? kafka : undefined;
  const stop = async () => {
    await Promise.all([kafka.stop(), postgres.stop()]);
  };
  let topicResult: EnsureTopicsResult;
  try {
    topicResult = await ensureStackTopics(kafka.bootstrapServers, topics);
  } catch (error) {
    await stop();
    throw error;
  }
  return {
    kafka: cluster ? (cluster.nodes[0] as KafkaHandle) : (kafka as KafkaHandle),
    ...(cluster && { kafkaCluster: cluster }),
    postgres,
    bootstrapServers: kafka.bootstrapServers,
    databaseUrl: postgres.url,
    topics: topicResult,
    stop,
    start: async () => {
      await Promise.all([kafka.start(), postgres.start()]);
    },
  };
}
