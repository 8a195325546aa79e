/**
 * The pipeline's parts as the e2e suites start them: each service built by the factory its own
 * `main.ts` uses, on the run's Kafka and PostgreSQL (devstack's global setup), with a topic pair,
 * a database and a consumer group of the suite's own. Every starter returns its service and a
 * `close` that a suite calls in `afterAll`.
 */
import { brokerTopics, producerConfig, topicSpecs } from '@event-observatory/broker';
import { type ConsumerService, createConsumerService, readConsumerConfig } from '@event-observatory/consumer';
import { createDatabase, ensureStackTopics, kafkaClient } from '@event-observatory/devstack';
import { createIngestService, readIngestConfig } from '@event-observatory/ingest';
import {
  type AuthConfig,
  authConfigFromEnv,
  createLogger,
  createMetrics,
  type RunningServer,
  serveApp,
  serveMetrics,
  signDevToken,
} from '@event-observatory/service-kit';
import type { Kafka } from 'kafkajs';
import type { Registry } from 'prom-client';
import { inject } from 'vitest';

/** A kafkajs client on the run's broker, for the suites' own reads and writes. */
export function testKafka(): Kafka {
  return kafkaClient(inject('stack').bootstrapServers, { clientId: 'e2e' });
}

/** Creates the suite's event topic and its dead-letter topic as the platform does. */
export async function createPipelineTopics(topic: string): Promise<void> {
  await ensureStackTopics(inject('stack').bootstrapServers, topicSpecs(brokerTopics({ topic })));
}

/** A fresh database of the run's PostgreSQL; the consumer migrates it when it starts. */
export function createSuiteDatabase(name: string): Promise<string> {
  return createDatabase(inject('stack').databaseUrl, name);
}

async function listen(app: Parameters<typeof serveApp>[0]): Promise<RunningServer> {
  return serveApp(app, { host: '127.0.0.1', port: 0, drainMs: 1_000 });
}

/** The metrics listener, as each service's `main.ts` serves it beside the main one. */
function listenMetrics(registry: Registry): Promise<RunningServer> {
  return serveMetrics(registry, { host: '127.0.0.1', port: 0 });
}

export interface StartedConsumer {
  service: ConsumerService;
  registry: Registry;
  /** The probes' listener (`/health/...`). */
  url: string;
  /** The admin listener (`/admin/...`); authentication is off unless `auth` is given. */
  adminUrl: string;
  /** The metrics listener (`GET /metrics`). */
  metricsUrl: string;
  close(): Promise<void>;
}

/** The consumer service reading `topic` into `databaseUrl` as group `group`, already consuming. */
export async function startConsumer(opts: {
  topic: string;
  databaseUrl: string;
  group: string;
  env?: Record<string, string>;
  /** The admin API's verifier settings; authentication is off when absent. */
  auth?: AuthConfig;
}): Promise<StartedConsumer> {
  const { registry } = createMetrics({ service: 'consumer', version: 'e2e' });
  const service = await createConsumerService({
    config: readConsumerConfig({
      BROKER_BOOTSTRAP_SERVERS: inject('stack').bootstrapServers,
      BROKER_TOPIC: opts.topic,
      BROKER_GROUP_ID: opts.group,
      CONSUMER_BATCH_WINDOW: '50ms',
      LAG_REFRESH_INTERVAL: '1s',
      LOG_LEVEL: 'error',
      ...opts.env,
    }),
    databaseUrl: opts.databaseUrl,
    auth: opts.auth ?? { enabled: false },
    registry,
    logger: createLogger({ service: 'consumer', level: 'error' }),
  });
  await service.start();
  const [server, admin, metrics] = await Promise.all([
    listen(service.app),
    listen(service.adminApp),
    listenMetrics(registry),
  ]);
  return {
    service,
    registry,
    url: server.url,
    adminUrl: admin.url,
    metricsUrl: metrics.url,
    async close() {
      await Promise.all([admin.close(), server.close()]);
      await service.close();
      await metrics.close();
    },
  };
}

export interface StartedIngest {
  url: string;
  /** The metrics listener (`GET /metrics`). */
  metricsUrl: string;
  registry: Registry;
  /** A token with `events:write`, signed with the suite's secret. */
  token: string;
  close(): Promise<void>;
}

/** The ingestion service publishing to `topic`, authenticating HS256 tokens signed with `secret`. */
export async function startIngest(opts: {
  topic: string;
  secret: string;
  knownTypes?: string[];
  /** The verifier's settings; default HS256 with `secret` and the `events:write` scope. */
  auth?: AuthConfig;
}): Promise<StartedIngest> {
  const { registry } = createMetrics({ service: 'ingest', version: 'e2e' });
  const service = await createIngestService({
    config: { ...readIngestConfig({ SERVICE_VERSION: 'e2e' }), knownTypes: opts.knownTypes ?? [] },
    broker: producerConfig({ bootstrapServers: [inject('stack').bootstrapServers], topic: opts.topic }),
    auth: opts.auth ?? authConfigFromEnv({ AUTH_SECRET: opts.secret }, { defaultScope: 'events:write' }),
    registry,
    logger: createLogger({ service: 'ingest', level: 'error' }),
  });
  const [server, metrics] = await Promise.all([listen(service.app), listenMetrics(registry)]);
  return {
    url: server.url,
    metricsUrl: metrics.url,
    registry,
    token: await signDevToken({ secret: opts.secret, scopes: ['events:write'] }),
    async close() {
      await server.close();
      await service.close();
      await metrics.close();
    },
  };
}
