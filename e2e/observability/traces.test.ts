/**
 * Traces end to end: ingest and consumer run as their own processes from `main.ts`, so
 * the spans are sent by the service kit's real OTLP exporter under the spec's sampler defaults
 * (`parentbased_traceidratio`, 0.1), to a small OTLP/HTTP receiver standing in for the collector.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { rmSync } from 'node:fs';
import { type ServiceProcess, startServiceProcess, tempDataDir } from '@event-observatory/devstack';
import { signDevToken } from '@event-observatory/service-kit';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createPipelineTopics, createSuiteDatabase } from '../support/services.js';
import { KIND, type OtlpReceiver, startOtlpReceiver } from './otlp-receiver.js';
import { until } from './stack.js';

const SECRET = 'e2e-traces-secret-0123456789abcdef0123';

interface TracedStack {
  receiver: OtlpReceiver;
  ingest: ServiceProcess;
  search?: ServiceProcess;
  db: pg.Pool;
  /** Posts one binary-mode event with the given `traceparent`; returns its `ce-id`. */
  post(traceparent: string): Promise<string>;
  /** Waits until the event with this id is stored. */
  stored(id: string): Promise<void>;
  /** Stops every process gracefully (their tracing flushes last), then the receiver. */
  stop(): Promise<void>;
}

/** Ingest, consumer and (optionally) search as processes sharing `env`, exporting to a receiver. */
async function startTracedStack(env: Record<string, string>, withSearch = false): Promise<TracedStack> {
  const id = randomUUID().slice(0, 8);
  const topic = `e2e.traces.${id}`;
  await createPipelineTopics(topic);
  const databaseUrl = await createSuiteDatabase(`e2e_traces_${id}`);
  const receiver = await startOtlpReceiver();
  const dataDir = tempDataDir('traces');
  const common = {
    BROKER_BOOTSTRAP_SERVERS: inject('stack').bootstrapServers,
    BROKER_TOPIC: topic,
    DATABASE_URL: databaseUrl,
    AUTH_SECRET: SECRET,
    ADMIN_AUTH_SECRET: `${SECRET}-admin`,
    LOG_LEVEL: 'warn',
    SERVICE_VERSION: 'e2e-traces',
    OTEL_EXPORTER_OTLP_ENDPOINT: receiver.endpoint,
    OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
    OTEL_TRACES_EXPORTER: 'otlp',
    OTEL_SDK_DISABLED: 'false',
    // Empty: the service kit applies the spec's sampler defaults.
    OTEL_TRACES_SAMPLER: '',
    OTEL_TRACES_SAMPLER_ARG: '',
    OTEL_BSP_SCHEDULE_DELAY: '200',
    ...env,
  };
  const processes = await Promise.all([
    startServiceProcess({ name: 'ingest', dataDir, env: common }),
    startServiceProcess({
      name: 'consumer',
      dataDir,
      env: { ...common, BROKER_GROUP_ID: `e2e-traces-${id}`, CONSUMER_BATCH_WINDOW: '50ms' },
    }),
    ...(withSearch
      ? [
          startServiceProcess({
            name: 'search',
            dataDir,
            env: { ...common, APPLICATION_SECRET: `${SECRET}-search`, SEARCH_AUTH_MODE: 'off' },
            listen: { host: 'PLAY_HTTP_ADDRESS', port: 'PLAY_HTTP_PORT' },
          }),
        ]
      : []),
  ]);
  const [ingest, , search] = processes as [ServiceProcess, ServiceProcess, ServiceProcess?];
  const token = await signDevToken({ secret: SECRET, scopes: ['events:write'] });
  const db = new pg.Pool({ connectionString: databaseUrl, max: 1 });
  return {
    receiver,
    ingest,
    search,
    db,
    async post(traceparent) {
      const ceId = randomUUID();
      const res = await fetch(`${ingest.url}/v1/events`, {
        method: 'POST',
        headers: {
          authorization: `Bearer ${token}`,
          'content-type': 'application/json',
          traceparent,
          'ce-specversion': '1.0',
          'ce-id': ceId,
          'ce-source': `urn:e2e:traces:${id}`,
          'ce-type': 'com.example.traces.reading',
          'ce-time': new Date().toISOString(),
        },
        body: JSON.stringify({ traced: true }),
      });
      expect(res.status).toBe(200);
      return ceId;
    },
    stored: (ceId) =>
      until(`event ${ceId} stored`, async () => {
        // sql-witness: checks that the traced event was stored, in its own SQL.
        const { rows } = await db.query('SELECT 1 FROM events.cloud_event WHERE ce_id = $1', [ceId]);
        return rows.length === 1;
      }),
    async stop() {
      await Promise.all(processes.map((p) => p.stop()));
      await db.end();
      await receiver.close();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

const traceId = () => randomBytes(16).toString('hex');
const CALLER_SPAN = '00f067aa0ba902b7';

describe('one request through ingest, Kafka, consumer and PostgreSQL', () => {
  let stack: TracedStack;
  const sampled = traceId();
  const unsampled = traceId();
  let unsampledId: string;

  beforeAll(async () => {
    stack = await startTracedStack({});
    await stack.post(`00-${sampled}-${CALLER_SPAN}-01`);
    unsampledId = await stack.post(`00-${unsampled}-${CALLER_SPAN}-00`);
    await stack.stored(unsampledId);
    await until('the INSERT span of the sampled request', async () =>
      stack.receiver.spans.some((s) => s.traceId === sampled && s.kind === KIND.client),
    );
    // A graceful stop flushes every span still batched, so an absent span was never recorded.
    await stack.stop();
  }, 300_000);

  afterAll(async () => {
    await stack?.stop().catch(() => {});
  });

  it('is one trace: HTTP server span -> produce span -> consume span -> insert span, each the parent of the next', () => {
    const spans = stack.receiver.spans.filter((s) => s.traceId === sampled);
    const one = (kind: number) => {
      const found = spans.filter((s) => s.kind === kind);
      expect(found, `spans of kind ${kind}`).toHaveLength(1);
      return found[0]!;
    };
    const server = one(KIND.server);
    const produce = one(KIND.producer);
    const consume = one(KIND.consumer);
    const insert = one(KIND.client);
    expect(server).toMatchObject({ service: 'ingest', name: 'POST /v1/events', parentSpanId: CALLER_SPAN });
    expect(produce).toMatchObject({
      service: 'ingest',
      parentSpanId: server.spanId,
      attributes: {
        'messaging.system': 'kafka',
        'messaging.destination.name': expect.stringMatching(/^e2e\.traces\./),
      },
    });
    expect(consume).toMatchObject({ service: 'consumer', parentSpanId: produce.spanId });
    expect(insert).toMatchObject({
      service: 'consumer',
      name: 'INSERT events.cloud_event',
      parentSpanId: consume.spanId,
      attributes: { 'db.system': 'postgresql' },
    });
    expect(spans).toHaveLength(4);
  });

  it('follows the caller: a request whose traceparent is not sampled records no span anywhere', () => {
    expect(stack.receiver.spans.filter((s) => s.traceId === unsampled)).toEqual([]);
  });

  it('exports traces only (no OTLP metrics or logs)', () => {
    expect(new Set(stack.receiver.requests)).toEqual(new Set(['POST /v1/traces']));
  });
});

describe('OTEL_SDK_DISABLED=true', () => {
  it('turns tracing off in ingest, consumer and search: nothing reaches the receiver while the pipeline works', async () => {
    const stack = await startTracedStack(
      { OTEL_SDK_DISABLED: 'true', OTEL_TRACES_SAMPLER: 'always_on' },
      true,
    );
    try {
      const id = await stack.post(`00-${traceId()}-${CALLER_SPAN}-01`);
      await stack.stored(id);
      const page = await fetch(`${stack.search!.url}/events?q=traced`, {
        headers: { traceparent: `00-${traceId()}-${CALLER_SPAN}-01` },
      });
      expect(page.status).toBe(200);
    } finally {
      await stack.stop();
    }
    expect(stack.receiver.requests).toEqual([]);
  }, 300_000);
});
