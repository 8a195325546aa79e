/**
 * The consumer as a real process (devstack's `startServiceProcess`, as `make dev` runs it), for
 * tests that signal or kill it: its own topic and database on the shared stack, JSON log lines
 * collected from its output.
 */
import { randomUUID } from 'node:crypto';
import { rmSync } from 'node:fs';
import { connect } from 'node:net';
import { brokerTopics, ensureTopics, topicSpecs } from '@event-observatory/broker';
import {
  createDatabase,
  kafkaClient,
  type ServiceProcess,
  startServiceProcess,
  tempDataDir,
} from '@event-observatory/devstack';
import { type CloudEvent, toKafkaRecord } from '@event-observatory/events';
import type { Admin, Message } from 'kafkajs';
import pg from 'pg';
import { afterAll, beforeAll, inject } from 'vitest';
import { waitFor } from './harness.js';

export interface LogLine {
  msg?: string;
  [k: string]: unknown;
}

export interface ConsumerProcess extends ServiceProcess {
  logs: LogLine[];
  /** Resolves with the first log line with this message (or throws after `timeoutMs`). */
  waitForLog(msg: string, timeoutMs?: number): Promise<LogLine>;
}

export interface ProcessFixture {
  topic: string;
  groupId: string;
  databaseUrl: string;
  db: pg.Pool;
  admin: Admin;
  publish(events: CloudEvent[]): Promise<void>;
  /** Records as given (e.g. one that cannot be decoded). */
  publishRaw(records: Message[]): Promise<void>;
  spawn(env?: Record<string, string>): Promise<ConsumerProcess>;
  /** Σ committed offsets of the group over the topic's partitions (0 for none). */
  committed(): Promise<number>;
  /** Σ high watermarks of the topic (or of `of`, e.g. the dead-letter topic). */
  published(of?: string): Promise<number>;
  count(sql?: string): Promise<number>;
  close(): Promise<void>;
}

export async function processFixture(name: string): Promise<ProcessFixture> {
  const stack = inject('stack');
  const id = `${name}-${randomUUID().slice(0, 8)}`;
  const topic = `test.${id}`;
  const groupId = `group-${id}`;
  const databaseUrl = await createDatabase(stack.databaseUrl, `p_${id.replace(/[^a-z0-9]/g, '_')}`);
  const kafka = kafkaClient(stack.bootstrapServers, { clientId: 'consumer-test' });
  const admin = kafka.admin();
  await admin.connect();
  await ensureTopics(admin, topicSpecs(brokerTopics({ topic })));
  const producer = kafka.producer({ allowAutoTopicCreation: false });
  await producer.connect();
  const db = new pg.Pool({ connectionString: databaseUrl, max: 2 });
  const dataDir = tempDataDir(`consumer-${name}`);
  const children: ServiceProcess[] = [];

  return {
    topic,
    groupId,
    databaseUrl,
    db,
    admin,
    async publish(events) {
      await producer.send({ topic, acks: -1, messages: events.map(toKafkaRecord) });
    },
    async publishRaw(records) {
      await producer.send({ topic, acks: -1, messages: records });
    },
    async spawn(env = {}) {
      const logs: LogLine[] = [];
      const service = await startServiceProcess({
        name: 'consumer',
        instance: `consumer-${children.length + 1}`,
        dataDir,
        env: {
          BROKER_BOOTSTRAP_SERVERS: stack.bootstrapServers,
          BROKER_TOPIC: topic,
          BROKER_GROUP_ID: groupId,
          DATABASE_URL: databaseUrl,
          ADMIN_AUTH_ENABLED: 'false',
          LOG_LEVEL: 'info',
          OTEL_SDK_DISABLED: 'true',
          CONSUMER_BATCH_WINDOW: '50ms',
          LAG_REFRESH_INTERVAL: '1s',
          // A killed member's partitions move after 10 s, not the default 30.
          BROKER_SESSION_TIMEOUT: '10s',
          ...env,
        },
        onLine: (line) => {
          try {
            logs.push(JSON.parse(line) as LogLine);
          } catch {
            logs.push({ msg: line });
          }
        },
      });
      children.push(service);
      return {
        ...service,
        logs,
        async waitForLog(msg, timeoutMs = 60_000) {
          await waitFor(`log "${msg}"`, () => logs.some((l) => l.msg === msg), timeoutMs);
          return logs.find((l) => l.msg === msg)!;
        },
      };
    },
    async committed() {
      const [t] = await admin.fetchOffsets({ groupId, topics: [topic] });
      return t!.partitions.reduce((s, p) => s + (p.offset === '-1' ? 0 : Number(p.offset)), 0);
    },
    async published(of = topic) {
      const offsets = await admin.fetchTopicOffsets(of);
      return offsets.reduce((s, p) => s + Number(p.high), 0);
    },
    // sql-witness: counts the stored events in its own SQL, independently of the store's insert under test.
    async count(sql = 'SELECT count(*)::int AS n FROM events.cloud_event') {
      const { rows } = await db.query(sql);
      return rows[0].n as number;
    },
    async close() {
      await Promise.all(children.map((c) => c.kill()));
      await producer.disconnect();
      await admin.disconnect();
      await db.end();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/** A `processFixture` made before the describe block's tests and closed after them; call in the block. */
export function useProcessFixture(name: string): () => ProcessFixture {
  let fixture: ProcessFixture | undefined;
  beforeAll(async () => {
    fixture = await processFixture(name);
  });
  afterAll(async () => {
    await fixture?.close();
  });
  return () => {
    if (!fixture) throw new Error(`the process fixture ${name} is not made yet`);
    return fixture;
  };
}

/** True when nothing accepts a TCP connection on 127.0.0.1:`port`. */
export function refused(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host: '127.0.0.1', port });
    socket.once('connect', () => {
      socket.destroy();
      resolve(false);
    });
    socket.once('error', () => resolve(true));
  });
}
