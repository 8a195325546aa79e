import { Hono } from 'hono';
import { describe, expect, it } from 'vitest';
import { healthRoutes } from '../health/index.js';
import {
  cappedLabel,
  createDistribution,
  createMetrics,
  createTimer,
  httpServerTimer,
  ladders,
  METRICS_CONTENT_TYPE,
  metricsHandler,
  outcomeOf,
  WindowMax,
} from './index.js';

/** `uri` values of http_server_requests_seconds_count series, with their counts. */
async function timedUris(registry: import('prom-client').Registry): Promise<Record<string, number>> {
  const text = await registry.getSingleMetricAsString('http_server_requests_seconds');
  const out: Record<string, number> = {};
  for (const line of text.split('\n')) {
    const m = /^http_server_requests_seconds_count\{.*uri="([^"]*)".*\} (\d+)$/.exec(line);
    if (m) out[m[1]!] = (out[m[1]!] ?? 0) + Number(m[2]);
  }
  return out;
}

function appWithTimer(maxUris?: number) {
  const { registry } = createMetrics({ service: 'test', version: '1.2.3', defaultMetrics: false });
  const app = new Hono();
  app.use(httpServerTimer(registry, maxUris === undefined ? {} : { maxUris }));
  app.get('/metrics', metricsHandler(registry));
  app.route('/', healthRoutes());
  app.get('/openapi.json', (c) => c.json({}));
  app.get('/openapi.yaml', (c) => c.text(''));
  app.get('/docs', (c) => c.html('<html></html>'));
  return { app, registry };
}

describe('registry', () => {
  it('serves every meter with the service and version tags and the exact content type', async () => {
    const { registry } = createMetrics({ service: 'ingest', version: '2.0.1' });
    const app = new Hono();
    app.get('/metrics', metricsHandler(registry));
    const res = await app.request('/metrics');
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/plain; version=0.0.4; charset=utf-8');
    expect(METRICS_CONTENT_TYPE).toBe('text/plain; version=0.0.4; charset=utf-8');
    const body = await res.text();
    expect(body).toMatch(/^process_cpu_user_seconds_total\{service="ingest",version="2.0.1"\} /m);
    expect(body).toMatch(/^nodejs_heap_size_used_bytes\{service="ingest",version="2.0.1"\} /m);
  });

  it('tags version 0.0.0-unknown when no version is given', async () => {
    const { registry, version } = createMetrics({ service: 'ingest', version: '' });
    expect(version).toBe('0.0.0-unknown');
    expect(await registry.metrics()).toContain('version="0.0.0-unknown"');
  });
});

describe('http_server_requests_seconds', () => {
  it('never times /metrics, /health/*, /openapi.json, /openapi.yaml or /docs', async () => {
    const { app, registry } = appWithTimer();
    for (const path of [
      '/metrics',
      '/health/live',
      '/health/ready',
      '/openapi.json',
      '/openapi.yaml',
      '/docs',
    ]) {
      expect((await app.request(path)).status).toBe(200);
    }
    expect(await timedUris(registry)).toEqual({});
  });

  it('tags the matched route template, never the raw path', async () => {
    const { app, registry } = appWithTimer();
    const v1 = new Hono();
    v1.get('/events/:event', (c) => c.json({ id: c.req.param('event') }));
    app.route('/v1', v1);
    app.post('/v1/events:batchCreate', (c) => c.json({}));
    await app.request('/v1/events/a%2Fb');
    await app.request('/v1/events/another-id');
    await app.request('/v1/events:batchCreate', { method: 'POST' });
    expect(await timedUris(registry)).toEqual({ '/v1/events/:event': 2, '/v1/events:batchCreate': 1 });
  });

  it('uses the most specific matched route even when middleware answered first', async () => {
    const { app, registry } = appWithTimer();
    app.use('/v1/*', async (c, next) => (c.req.header('authorization') ? next() : c.json({}, 401)));
    app.get('/v1/things/:id', (c) => c.json({}));
    await app.request('/v1/things/42');
    const text = await registry.getSingleMetricAsString('http_server_requests_seconds');
    expect(text).toMatch(/_count\{.*method="GET",uri="\/v1\/things\/:id",status="401",outcome="failure"\} 1/);
  });

  it('tags unmatched requests NOT_FOUND instead of their path', async () => {
    const { app, registry } = appWithTimer();
    for (let i = 0; i < 5; i++) expect((await app.request(`/no/such/path/${i}`)).status).toBe(404);
    expect(await timedUris(registry)).toEqual({ NOT_FOUND: 5 });
  });

  it('tags status and the spec outcome, including thrown errors as status 500 failure', async () => {
    const { app, registry } = appWithTimer();
    app.get('/boom', () => {
      throw new Error('boom');
    });
    app.get('/moved', (c) => c.redirect('/elsewhere'));
    await app.request('/boom');
    await app.request('/moved');
    const text = await registry.getSingleMetricAsString('http_server_requests_seconds');
    expect(text).toMatch(/_count\{.*uri="\/boom",status="500",outcome="failure"\} 1/);
    expect(text).toMatch(/_count\{.*uri="\/moved",status="302",outcome="success"\} 1/);
    expect(await registry.metrics()).toMatch(/^http_server_requests_seconds_max\{.*uri="\/boom".*\} \d/m);
  });

  it('keeps at most 100 distinct uri values and drops later ones silently', async () => {
    const { app, registry } = appWithTimer();
    for (let i = 0; i < 120; i++) app.get(`/r${i}/:id`, (c) => c.text('ok'));
    for (let i = 0; i < 120; i++) expect((await app.request(`/r${i}/x`)).status).toBe(200);
    await app.request('/r0/again'); // an admitted value keeps working
    await app.request('/r110/again'); // a refused one stays refused
    const uris = await timedUris(registry);
    expect(Object.keys(uris)).toHaveLength(100);
    expect(uris['/r0/:id']).toBe(2);
    expect(uris['/r99/:id']).toBe(1);
    expect(uris['/r100/:id']).toBeUndefined();
  });

  it('uses the 5 ms to 10 s ladder', async () => {
    const { app, registry } = appWithTimer();
    app.get('/x', (c) => c.text('ok'));
    await app.request('/x');
    const text = await registry.getSingleMetricAsString('http_server_requests_seconds');
    const les = [...text.matchAll(/_bucket\{le="([^"]+)"/g)].map((m) => m[1]);
    expect(les).toEqual([...ladders.httpServer.map(String), '+Inf']);
    expect(ladders.httpServer[0]).toBe(0.005);
    expect(ladders.httpServer.at(-1)).toBe(10);
  });

  it('maps statuses to the spec outcome set: success below 400, failure otherwise', () => {
    expect([101, 204, 304, 399, 400, 429, 503, 0, 600].map(outcomeOf)).toEqual([
      'success',
      'success',
      'success',
      'success',
      'failure',
      'failure',
      'failure',
      'failure',
      'failure',
    ]);
  });
});

describe('cappedLabel', () => {
  it('admits 50 distinct values by default, denies new ones later, keeps admitted ones working', () => {
    const tag = cappedLabel();
    for (let i = 0; i < 50; i++) expect(tag.admit(`type-${i}`)).toBe(true);
    expect(tag.admit('type-50')).toBe(false);
    expect(tag.admit('type-7')).toBe(true);
    expect(tag.size).toBe(50);
    expect(tag.max).toBe(50);
  });

  it('refuses a cap that is not a positive integer at construction', () => {
    expect(() => cappedLabel(0)).toThrow(RangeError);
  });
});

describe('ladders', () => {
  it('start and end at the bounds of the spec table and increase strictly', () => {
    const bounds: Record<keyof typeof ladders, [number, number]> = {
      httpServer: [0.005, 10],
      searchQuery: [0.01, 10],
      brokerProduce: [0.001, 2.5],
      consumeBatchLatency: [0.005, 5],
      decode: [0.00005, 0.05],
      maintenanceJob: [0.1, 900],
      batchSize: [1, 1000],
      payloadBytes: [256, 1048576],
      batchEvents: [1, 256],
      timeSkew: [1, 90 * 86400],
      searchResults: [1, 250],
      reconcile: [0.01, 60],
    };
    for (const [name, [first, last]] of Object.entries(bounds)) {
      const ladder: readonly number[] = ladders[name as keyof typeof ladders];
      expect([name, ladder[0], ladder.at(-1)]).toEqual([name, first, last]);
      expect(ladder.every((v, i) => i === 0 || v > ladder[i - 1]!)).toBe(true);
    }
  });
});

describe('timers and distributions', () => {
  it('publish _bucket, _count, _sum and _max with a ladder', async () => {
    const { registry } = createMetrics({ service: 't', defaultMetrics: false });
    const produce = createTimer(registry, {
      name: 'broker_produce_latency_seconds',
      help: 'h',
      labelNames: ['topic', 'outcome'],
      buckets: ladders.brokerProduce,
    });
    produce.observe({ topic: 'a', outcome: 'success' }, 0.003);
    produce.observe({ topic: 'a', outcome: 'success' }, 0.2);
    const stop = produce.start({ topic: 'a' });
    expect(stop({ outcome: 'failure' })).toBeGreaterThanOrEqual(0);
    const text = await registry.metrics();
    expect(text).toMatch(
      /broker_produce_latency_seconds_bucket\{le="0.005",.*topic="a",outcome="success"\} 1/,
    );
    expect(text).toMatch(/broker_produce_latency_seconds_count\{.*topic="a",outcome="success"\} 2/);
    expect(text).toMatch(/broker_produce_latency_seconds_max\{topic="a",outcome="success".*\} 0.2/);
    expect(text).toMatch(/broker_produce_latency_seconds_count\{.*topic="a",outcome="failure"\} 1/);
  });

  it('publish only _count, _sum and _max without a ladder', async () => {
    const { registry } = createMetrics({ service: 't', defaultMetrics: false });
    const d = createDistribution(registry, { name: 'some_size', help: 'h' });
    d.observe({}, 7);
    const text = await registry.metrics();
    expect(text).not.toContain('_bucket');
    expect(text).toMatch(/^some_size_count\{.*\} 1$/m);
    expect(text).toMatch(/^some_size_sum\{.*\} 7$/m);
    expect(text).toMatch(/^some_size_max\{.*\} 7$/m);
  });

  it('forget a maximum after the 2-minute window, like Micrometer', () => {
    let now = 0;
    const max = new WindowMax(() => now);
    max.record(5);
    now = 60_000;
    max.record(3);
    expect(max.poll()).toBe(5);
    now = 121_000;
    expect(max.poll()).toBe(3);
    now = 1_000_000;
    expect(max.poll()).toBe(0);
  });
});
