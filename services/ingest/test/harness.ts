/** Builds the real app (real producer, real broker, real verifier) on an ephemeral port. */
import { randomUUID } from 'node:crypto';
import { EventProducer, type ProducerConfig, producerConfig } from '@event-observatory/broker';
import { createVerifier, signDevToken } from '@event-observatory/service-kit/auth';
import { createMetrics } from '@event-observatory/service-kit/metrics';
import { type RunningServer, serveApp } from '@event-observatory/service-kit/server';
import { type AppDeps, BrokerBelief, buildApp, DEFAULT_LIMITS, KnownTypes, type Limits } from '../src/app.js';

export { createTopic, readRecords } from '../../../packages/broker/test/read-records.js';

export const SECRET = 'test-secret-0123456789-abcdefghijklmnopqrstuvwxyz';

export interface Harness {
  url: string;
  app: ReturnType<typeof buildApp>;
  producer: EventProducer;
  belief: BrokerBelief;
  registry: AppDeps['registry'];
  topic: string;
  token: string;
  server: RunningServer;
  close(): Promise<void>;
}

export async function startHarness(opts: {
  bootstrapServers: string;
  topic: string;
  broker?: Partial<ProducerConfig>;
  limits?: Partial<Limits>;
  knownTypes?: string[];
  now?: () => number;
}): Promise<Harness> {
  const { registry } = createMetrics({ service: 'ingest', version: 'test' });
  const verifier = createVerifier(
    {
      enabled: true,
      algorithm: 'HS256',
      key: new TextEncoder().encode(SECRET),
      leewayMs: 30_000,
      requiredScope: 'events:write',
    },
    { registry },
  );
  const belief = new BrokerBelief();
  const producer = new EventProducer({
    config: producerConfig({ bootstrapServers: [opts.bootstrapServers], topic: opts.topic, ...opts.broker }),
    registry,
    onOutcome: (ok) => belief.observe(ok),
  });
  await producer.probe();
  producer.startProbing();
  const app = buildApp({
    producer,
    belief,
    verifier,
    registry,
    limits: { ...DEFAULT_LIMITS, ...opts.limits },
    knownTypes: new KnownTypes(opts.knownTypes ?? []),
    version: 'test',
    ...(opts.now ? { now: opts.now } : {}),
  });
  const server = await serveApp(app, { host: '127.0.0.1', port: 0, drainMs: 1000 });
  const token = await signDevToken({ secret: SECRET, scopes: ['events:write'] });
  return {
    url: server.url,
    app,
    producer,
    belief,
    registry,
    topic: opts.topic,
    token,
    server,
    async close() {
      await server.close();
      await producer.close(2000);
    },
  };
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
