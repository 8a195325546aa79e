/** Builds the real service (`createIngestService`: real producer, broker, verifier) on an ephemeral port. */
import { randomUUID } from 'node:crypto';
import { type ProducerConfig, producerConfig } from '@event-observatory/broker';
import { type AuthConfig, authConfigFromEnv, signDevToken } from '@event-observatory/service-kit/auth';
import { createLogger } from '@event-observatory/service-kit/logger';
import { createMetrics } from '@event-observatory/service-kit/metrics';
import { retry } from '@event-observatory/service-kit/resilience';
import { serveApp, serveMetrics } from '@event-observatory/service-kit/server';
import { createIngestService, type IngestService, type Limits, readIngestConfig } from '../src/index.js';

export { createTopic, readRecords } from '@event-observatory/devstack';

export const SECRET = 'test-secret-0123456789-abcdefghijklmnopqrstuvwxyz';

const AUTH = authConfigFromEnv({ AUTH_SECRET: SECRET }, { defaultScope: 'events:write' });

export interface Harness {
  url: string;
  /** The metrics listener (`GET /metrics`), as `main.ts` serves it. */
  metricsUrl: string;
  app: IngestService['app'];
  topic: string;
  token: string;
  close(): Promise<void>;
}

export interface HarnessOptions {
  bootstrapServers: string;
  topic: string;
  broker?: Partial<ProducerConfig>;
  limits?: Partial<Limits>;
  knownTypes?: string[];
  now?: () => number;
  /** Default: HS256 with `SECRET`, scope `events:write` required. */
  auth?: AuthConfig;
}

/** The service as `main.ts` builds it, on the given broker and topic, with test variations. */
export async function startHarness(opts: HarnessOptions): Promise<Harness> {
  const { registry } = createMetrics({ service: 'ingest', version: 'test' });
  const service = await createIngestService({
    config: {
      ...readIngestConfig({ SERVICE_VERSION: 'test' }),
      ...opts.limits,
      knownTypes: opts.knownTypes ?? [],
    },
    broker: producerConfig({
      bootstrapServers: [opts.bootstrapServers],
      topic: opts.topic,
      closeTimeoutMs: 2000,
      ...opts.broker,
    }),
    auth: opts.auth ?? AUTH,
    registry,
    logger: createLogger({ service: 'ingest', level: 'silent' }),
    ...(opts.now ? { now: opts.now } : {}),
  });
  const server = await serveApp(service.app, {
    host: '127.0.0.1',
    port: 0,
    drainMs: 1000,
    preempt: service.preempt,
  });
  const metrics = await serveMetrics(registry, { host: '127.0.0.1', port: 0 });
  const token = await signDevToken({ secret: SECRET, scopes: ['events:write'] });
  return {
    url: server.url,
    metricsUrl: metrics.url,
    app: service.app,
    topic: opts.topic,
    token,
    async close() {
      await server.close();
      await service.close();
      await metrics.close();
    },
  };
}

/**
 * Polls `probe` every 200 ms until it answers a value (not `undefined`), at most `timeoutMs`;
 * rejects when it never does.
 */
export function waitFor<T>(probe: () => Promise<T | undefined>, timeoutMs: number): Promise<T> {
  return retry(
    async () => {
      const value = await probe();
      if (value === undefined) throw new Error(`condition not met within ${timeoutMs} ms`);
      return value;
    },
    { backoff: { initialMs: 200, maxMs: 200 }, attempts: Math.ceil(timeoutMs / 200) },
  );
}

export function uniqueTopic(prefix: string): string {
  return `${prefix}-${randomUUID()}`;
}

/** Binary-mode headers for an event at `time`. */
export function ceHeaders(
  id: string,
  time: string,
  extra: Record<string, string> = {},
): Record<string, string> {
  return {
    'ce-specversion': '1.0',
    'ce-id': id,
    'ce-source': 'https://example.com/sensors',
    'ce-type': 'com.example.reading',
    'ce-time': time,
    ...extra,
  };
}
