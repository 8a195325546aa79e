import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Writable } from 'node:stream';
import { ROOT_CONTEXT, TraceFlags, trace } from '@opentelemetry/api';
import { Hono } from 'hono';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '../logger/index.js';
import {
  extractTraceContext,
  injectTraceContext,
  startTracing,
  type Tracing,
  traceRequests,
} from './index.js';

const TRACE_ID = '4bf92f3577b34da6a3ce929d0e0e4736';
const PARENT_SPAN = '00f067aa0ba902b7';

describe('trace context in record headers', () => {
  it('injects traceparent from a context and extracts it back from string or Buffer headers', () => {
    const ctx = trace.setSpanContext(ROOT_CONTEXT, {
      traceId: TRACE_ID,
      spanId: PARENT_SPAN,
      traceFlags: TraceFlags.SAMPLED,
    });
    const headers = injectTraceContext({ ce_id: 'x' }, ctx);
    expect(headers).toEqual({ ce_id: 'x', traceparent: `00-${TRACE_ID}-${PARENT_SPAN}-01` });
    for (const carrier of [headers, { traceparent: Buffer.from(headers.traceparent as string) }]) {
      const sc = trace.getSpanContext(extractTraceContext(carrier));
      expect(sc).toMatchObject({ traceId: TRACE_ID, spanId: PARENT_SPAN, traceFlags: 1, isRemote: true });
    }
  });

  it('writes nothing without a valid span and extracts nothing from garbage', () => {
    expect(injectTraceContext({}, ROOT_CONTEXT)).toEqual({});
    expect(trace.getSpanContext(extractTraceContext({ traceparent: 'garbage' }))).toBeUndefined();
  });
});

describe('startTracing exporting to an OTLP endpoint', () => {
  const received: Array<{ path: string; body: Buffer }> = [];
  let collector: Server;
  let tracing: Tracing;

  beforeAll(async () => {
    collector = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        received.push({ path: req.url ?? '', body: Buffer.concat(chunks) });
        res.writeHead(200, { 'content-type': 'application/x-protobuf' }).end();
      });
    });
    await new Promise<void>((resolve) => collector.listen(0, '127.0.0.1', resolve));
    const { port } = collector.address() as AddressInfo;
    Object.assign(process.env, {
      OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${port}`,
      OTEL_EXPORTER_OTLP_PROTOCOL: 'http/protobuf',
      OTEL_TRACES_SAMPLER: 'always_on',
      OTEL_TRACES_EXPORTER: 'otlp',
      OTEL_METRICS_EXPORTER: 'otlp', // forced off by startTracing all the same
      OTEL_LOGS_EXPORTER: 'otlp',
    });
    tracing = startTracing({ service: 'tracing-test', version: '9.9.9', env: process.env });
  });

  afterAll(async () => {
    await tracing.shutdown();
    await new Promise((resolve) => collector.close(resolve));
  });

  it('opens a server span per request, continues the caller trace, and logs its ids', async () => {
    expect(tracing.enabled).toBe(true);
    const lines: Record<string, string>[] = [];
    const destination = new Writable({
      write(chunk, _e, done) {
        lines.push(JSON.parse(String(chunk)));
        done();
      },
    });
    const logger = createLogger({ service: 'tracing-test', destination });
    const app = new Hono();
    app.use(traceRequests());
    app.get('/items/:id', (c) => {
      logger.info('handling');
      return c.json({ ok: true });
    });
    app.get('/health/live', (c) => {
      logger.info('probe');
      return c.json({ status: 'UP' });
    });
    const res = await app.request('/items/42', {
      headers: { traceparent: `00-${TRACE_ID}-${PARENT_SPAN}-01` },
    });
    expect(res.status).toBe(200);
    await app.request('/health/live');
    expect(lines[0]).toMatchObject({ msg: 'handling', trace_id: TRACE_ID });
    expect(lines[0]!.span_id).toMatch(/^[0-9a-f]{16}$/);
    expect(lines[0]!.span_id).not.toBe(PARENT_SPAN);
    expect(lines[1]).toMatchObject({ msg: 'probe' });
    expect(lines[1]).not.toHaveProperty('trace_id'); // probes are not traced

    await tracing.shutdown(); // flushes the batch processor
    const traces = received.filter((r) => r.path === '/v1/traces');
    expect(traces.length).toBeGreaterThan(0);
    const payload = Buffer.concat(traces.map((t) => t.body));
    expect(payload.includes('GET /items/:id')).toBe(true);
    expect(payload.includes('tracing-test')).toBe(true);
    expect(payload.includes('9.9.9')).toBe(true);
    expect(payload.includes(Buffer.from(TRACE_ID, 'hex'))).toBe(true);
    expect(payload.includes('/health/live')).toBe(false);
    expect(received.filter((r) => r.path !== '/v1/traces')).toEqual([]); // no metrics, no logs
  });
});
