/**
 * Test harness: a consumer service in-process against the devstack broker and a fresh database,
 * on its own topics and group so test files never see each other's records.
 */
import { randomUUID } from 'node:crypto';
import { brokerTopics, topicSpecs } from '@event-observatory/broker';
import { createDatabase, ensureStackTopics, kafkaClient } from '@event-observatory/devstack';
import { type CloudEvent, toKafkaRecord } from '@event-observatory/events';
import {
  type AuthConfig,
  authConfigFromEnv,
  createLogger,
  createMetrics,
  type Logger,
  metricsApp,
  signDevToken,
} from '@event-observatory/service-kit';
import type { Kafka, Message, Producer } from 'kafkajs';
import pg from 'pg';
import { inject } from 'vitest';
import { ADMIN_SCOPE, readConsumerConfig } from '../src/config.js';
import { type ConsumerService, createConsumerService } from '../src/service.js';
import type { RestartPolicyOptions } from '../src/stream/supervision.js';

export const SECRET = 'consumer-test-secret-0123456789abcdef';

export interface HarnessOptions {
  env?: Record<string, string>;
  /** Use this database server (admin URL) instead of the shared one. */
  databaseAdminUrl?: string;
  bootstrapServers?: string;
  restartPolicy?: RestartPolicyOptions;
  /** The URL the service gets for the test's database (e.g. through a proxy); default that URL. */
  serviceDatabaseUrl?: (databaseUrl: string) => string;
  /** The admin API's verifier settings; default HS256 with `SECRET`. */
  auth?: AuthConfig;
  /** Receives the admin API's audit lines. */
  audit?: Logger;
}

export interface Harness {
  id: string;
  topic: string;
  dlqTopic: string;
  groupId: string;
  databaseUrl: string;
  kafka: Kafka;
  producer: Producer;
  service: ConsumerService;
  db: pg.Pool;
  token: string;
  publish(events: CloudEvent[], extra?: Partial<Message>[]): Promise<void>;
  publishRaw(messages: Message[]): Promise<void>;
  /** To the admin app for `/admin/...`, to the probes' app otherwise, as the two listeners split them. */
  request(path: string, init?: RequestInit & { token?: string | null }): Promise<Response>;
  /** `GET /metrics` of the metrics listener's app. */
  scrape(): Promise<string>;
  count(where?: string): Promise<number>;
  metric(name: string): Promise<number | undefined>;
  close(): Promise<void>;
}

export function testEvent(n: number, overrides: Partial<CloudEvent> = {}, payload?: unknown): CloudEvent {
  return {
    specversion: '1.0',
    id: `evt-${n}`,
    source: 'urn:test:consumer',
    type: 'com.example.reading',
    time: new Date(Date.now() - 60_000).toISOString(),
    subject: `device-${n % 7}`,
    datacontenttype: 'application/json',
    extensions: {},
    data: Buffer.from(JSON.stringify(payload ?? { n, deviceId: `device-${n % 7}`, level: 'info' })),
    ...overrides,
  };
}

export async function startHarness(name: string, opts: HarnessOptions = {}): Promise<Harness> {
  const stack = inject('stack');
  const id = `${name}-${randomUUID().slice(0, 8)}`;
  const topic = `test.${id}`;
  const topics = brokerTopics({ topic });
  const { dlqTopic } = topics;
  const groupId = `group-${id}`;
  const bootstrapServers = opts.bootstrapServers ?? stack.bootstrapServers;
  const databaseUrl = await createDatabase(
    opts.databaseAdminUrl ?? stack.databaseUrl,
    `c_${id.replace(/[^a-z0-9]/g, '_')}`,
  );
  const kafka = kafkaClient(bootstrapServers, { clientId: 'consumer-test' });
  await ensureStackTopics(bootstrapServers, topicSpecs(topics));
  const producer = kafka.producer({ allowAutoTopicCreation: false });
  await producer.connect();

  const config = readConsumerConfig({
    BROKER_BOOTSTRAP_SERVERS: bootstrapServers,
    BROKER_TOPIC: topic,
    BROKER_GROUP_ID: groupId,
    HTTP_PORT: '0',
    LAG_REFRESH_INTERVAL: '1s',
    LAG_REQUEST_TIMEOUT: '2s',
    CONSUMER_BATCH_WINDOW: '50ms',
    CONSUMER_RETRY_DELAY: '50ms',
    CONSUMER_DRAIN_TIMEOUT: '5s',
    LOG_LEVEL: 'error',
    // A crashed member's session is waited out in 10 s, not the default 30.
    BROKER_SESSION_TIMEOUT: '10s',
    ...opts.env,
  });
  const auth =
    opts.auth ??
    authConfigFromEnv({ ADMIN_AUTH_SECRET: SECRET }, { defaultScope: ADMIN_SCOPE, prefix: 'ADMIN_AUTH' });
  const { registry } = createMetrics({ service: 'consumer', version: 'test' });
  const logger = createLogger({ service: 'consumer', level: config.logLevel });
  const service = await createConsumerService({
    config,
    databaseUrl: opts.serviceDatabaseUrl?.(databaseUrl) ?? databaseUrl,
    auth,
    registry,
    logger,
    restartPolicy: opts.restartPolicy,
    ...(opts.audit ? { audit: opts.audit } : {}),
  });
  await service.start();
  const db = new pg.Pool({ connectionString: databaseUrl, max: 2 });
  db.on('error', () => {}); // idle clients lose their server in outage tests
  const token = await signDevToken({ secret: SECRET, scopes: [ADMIN_SCOPE], subject: 'test-admin' });

  const h: Harness = {
    id,
    topic,
    dlqTopic,
    groupId,
    databaseUrl,
    kafka,
    producer,
    service,
    db,
    token,
    async publish(events, extra = []) {
      await producer.send({
        topic,
        acks: -1,
        messages: events.map((e, i) => {
          const rec = toKafkaRecord(e);
          return { ...rec, ...extra[i], headers: { ...rec.headers, ...extra[i]?.headers } };
        }),
      });
    },
    async publishRaw(messages) {
      await producer.send({ topic, acks: -1, messages });
    },
    request(path, init = {}) {
      const headers = new Headers(init.headers);
      const t = init.token === undefined ? token : init.token;
      if (t) headers.set('authorization', `Bearer ${t}`);
      const app = path.startsWith('/admin') ? service.adminApp : service.app;
      return Promise.resolve(app.request(path, { ...init, headers }));
    },
    async scrape() {
      return (await metricsApp(registry).request('/metrics')).text();
    },
    async count(where = 'true') {
      // sql-witness: counts the stored events in its own SQL, independently of the store's insert under test.
      const { rows } = await db.query(`SELECT count(*)::int AS n FROM events.cloud_event WHERE ${where}`);
      return rows[0].n as number;
    },
    async metric(name) {
      const text = await registry.metrics();
      const line = text.split('\n').find((l) => l.startsWith(`${name} `) || l.startsWith(`${name}{`));
      return line === undefined ? undefined : Number(line.slice(line.lastIndexOf(' ') + 1));
    },
    async close() {
      await service.close();
      await producer.disconnect();
      await db.end();
    },
  };
  return h;
}

/** Polls `fn` until it returns true (or throws after `timeoutMs`). */
export async function waitFor(
  what: string,
  fn: () => Promise<boolean> | boolean,
  timeoutMs = 30_000,
): Promise<void> {
  const started = Date.now();
  for (;;) {
    if (await fn()) return;
    if (Date.now() - started > timeoutMs) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** Sum of the values of every series of `name` whose labels contain `match`. */
export async function metricSum(h: Harness, name: string, match = ''): Promise<number> {
  const text = await h.scrape();
  let sum = 0;
  for (const line of text.split('\n')) {
    if (!line.startsWith(name)) continue;
    const rest = line.slice(name.length);
    if (!(rest.startsWith(' ') || rest.startsWith('{'))) continue;
    if (match && !line.includes(match)) continue;
    sum += Number(line.slice(line.lastIndexOf(' ') + 1));
  }
  return sum;
}
