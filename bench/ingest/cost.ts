/**
 * Cost breakdown of the ingest request path, without a broker: CPU microseconds per request of
 * (a) a bare `@hono/node-server` app answering a small JSON, and (b) the real ingest app
 * (`createIngestService`) with auth on, whose producer acknowledges at once (in-process stand-in; this is a
 * diagnostic, the real broker is measured by `run.ts`). The difference between the two is what
 * the ingest code adds on top of HTTP; `run.ts` minus (b) is what the broker client adds.
 *
 * Usage: `(cd bench/ingest && node --conditions=source --import tsx cost.ts)` (after `npx tsc -b`
 * it can import dist/ with plain node conditions: `node --import tsx cost.ts`).
 * (c) the same app refusing every request: its producer never acknowledges and its event limit is
 * one event (`BROKER_QUEUE_CAPACITY=1`), so after the first request each is answered 503
 * `overloaded` before its body is read, by the service's `preempt` as `main.ts` serves it: what a
 * refusal costs beside an acknowledgement.
 *
 * Env: COST_RATE (default 4000 req/s), COST_SECONDS (default 5), COST_SCENARIO (`bare`, `app`,
 * `refused`, comma-separated; default all three).
 */
import { EVENT_MAX_MESSAGE_BYTES, producerConfig } from '@event-observatory/broker';
import { createIngestService, readIngestConfig } from '@event-observatory/ingest';
import { authConfigFromEnv, signDevToken } from '@event-observatory/service-kit/auth';
import { createLogger } from '@event-observatory/service-kit/logger';
import { createMetrics } from '@event-observatory/service-kit/metrics';
import { type ServeOptions, serveApp } from '@event-observatory/service-kit/server';
import { Hono } from 'hono';
import { type LoadRequest, percentile, runLoad } from './loadgen.js';
import { requestShapes, SINGLE_PAYLOAD, singleEventHeaders } from './shapes.js';

const RATE = Number(process.env.COST_RATE ?? 4000);
const SECONDS = Number(process.env.COST_SECONDS ?? 5);
const SCENARIOS = new Set((process.env.COST_SCENARIO ?? 'bare,app,refused').split(','));
const SECRET = 'bench-secret-bench-secret-bench-secret!!';

async function measure(
  name: string,
  fetchApp: { fetch: (r: Request) => unknown },
  request: (i: number) => LoadRequest,
  preempt?: ServeOptions['preempt'],
) {
  const server = await serveApp(fetchApp as never, {
    host: '127.0.0.1',
    port: 0,
    drainMs: 1000,
    ...(preempt ? { preempt } : {}),
  });
  const { port } = server;
  // warm-up, then the measured run; CPU of this whole process (server + generator).
  await runLoad({
    host: '127.0.0.1',
    port,
    rate: RATE,
    seconds: 2,
    request,
  });
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  const r = await runLoad({
    host: '127.0.0.1',
    port,
    rate: RATE,
    seconds: SECONDS,
    request,
  });
  const cpu = process.cpuUsage(cpu0);
  const wall = (performance.now() - t0) / 1000;
  const total = (cpu.user + cpu.system) / 1e6;
  console.log(
    `${name}: ${r.sent} requests, statuses ${JSON.stringify(r.statuses)}, p50 ${percentile(r.latencies, 50).toFixed(2)} ms, p99 ${percentile(r.latencies, 99).toFixed(2)} ms, ` +
      `${(total / wall).toFixed(2)} cores, ${((total * 1e6) / r.sent).toFixed(0)} µs CPU per request (server and generator together)`,
  );
  await server.close();
}

const token = await signDevToken({ secret: SECRET, scopes: ['events:write'], subject: 'bench' });
const { single } = requestShapes('x', token);

if (SCENARIOS.has('bare')) {
  const bare = new Hono();
  bare.post('/v1/events', async (c) => {
    for await (const _ of (c.env as { incoming: AsyncIterable<Buffer> }).incoming);
    return c.json({ name: 'events/x', id: 'x', source: 'y', eventType: 'z', time: 't', partitionKey: 'k' });
  });
  await measure('bare hono', bare, single);
}

/** The ingest app without a broker; `acknowledge` false: a producer that never acknowledges. */
async function ingestApp(acknowledge: boolean) {
  let offset = 0;
  return createIngestService({
    // No cap from the event loop's delay: server and generator share this process's loop.
    config: { ...readIngestConfig({}), minInflightEvents: 1, queueDelayTargetMs: Number.POSITIVE_INFINITY },
    broker: producerConfig({
      bootstrapServers: ['127.0.0.1:9'],
      ...(acknowledge ? {} : { queueCapacity: 1 }),
    }),
    auth: authConfigFromEnv({ AUTH_SECRET: SECRET }, { defaultScope: 'events:write' }),
    registry: createMetrics({ service: 'ingest-cost', version: '0' }).registry,
    logger: createLogger({ service: 'ingest-cost', level: 'silent' }),
    brokerClients: {
      producer: (onOutcome) => ({
        publish: (record) =>
          acknowledge
            ? Promise.resolve({ topic: 't', partition: 0, offset: String(offset++), key: record.key })
            : new Promise(() => {}),
        probe: async () => {
          onOutcome(true);
          return true;
        },
        startProbing: () => {},
        close: async () => {},
      }),
      messageLimit: { read: async () => EVENT_MAX_MESSAGE_BYTES, close: async () => {} },
    },
  });
}

if (SCENARIOS.has('app')) {
  await measure('ingest app, instant producer', (await ingestApp(true)).app, single);
}
if (SCENARIOS.has('refused')) {
  const { app, preempt } = await ingestApp(false);
  // One event that is never acknowledged holds the whole limit.
  void app.request('/v1/events', {
    method: 'POST',
    headers: Object.fromEntries([...singleEventHeaders(0), ['authorization', `Bearer ${token}`]]),
    body: SINGLE_PAYLOAD,
  });
  await measure('ingest app, every request refused 503 overloaded', app, single, preempt);
}
process.exit(0);
