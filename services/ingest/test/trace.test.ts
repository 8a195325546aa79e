import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { startTracing, type Tracing } from '@event-observatory/service-kit/tracing';
import { afterAll, beforeAll, expect, inject, it } from 'vitest';
import { ceHeaders, createTopic, type Harness, readRecords, startHarness, uniqueTopic } from './harness.js';

const { bootstrapServers } = inject('kafka');
let h: Harness;
let tracing: Tracing;
let collector: Server;

beforeAll(async () => {
  // A real SDK with recording spans, exporting to a local sink that accepts and drops everything
  // (with OTEL_TRACES_EXPORTER=none the SDK registers no tracer provider and spans do not record).
  collector = createServer((req, res) => {
    req.resume();
    req.on('end', () => res.writeHead(200, { 'content-type': 'application/x-protobuf' }).end());
  });
  await new Promise<void>((resolve) => collector.listen(0, '127.0.0.1', resolve));
  Object.assign(process.env, {
    OTEL_TRACES_EXPORTER: 'otlp',
    OTEL_EXPORTER_OTLP_PROTOCOL: 'http/protobuf',
    OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${(collector.address() as AddressInfo).port}`,
  });
  tracing = startTracing({ service: 'ingest-test', version: 'test' });
  const topic = uniqueTopic('ingest-trace');
  await createTopic(bootstrapServers, topic);
  h = await startHarness({ bootstrapServers, topic });
});
afterAll(async () => {
  await h?.close();
  await tracing?.shutdown();
  collector?.close();
});

it("puts the calling request's trace into the record's traceparent header", async () => {
  const traceId = '4bf92f3577b34da6a3ce929d0e0e4736';
  const res = await fetch(`${h.url}/v1/events`, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${h.token}`,
      traceparent: `00-${traceId}-00f067aa0ba902b7-01`,
      ...ceHeaders('traced', new Date().toISOString()),
    },
    body: 'payload',
  });
  expect(res.status).toBe(200);
  const [record] = await readRecords(bootstrapServers, h.topic, (rs) => rs.length >= 1);
  const header = record?.headers.traceparent?.toString() ?? '';
  // Same trace, a new span (the server span of the request), sampled as the caller asked.
  expect(header).toMatch(new RegExp(`^00-${traceId}-[0-9a-f]{16}-01$`));
  expect(header).not.toContain('00f067aa0ba902b7');
});
