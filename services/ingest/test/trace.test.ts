import { startTracing, type Tracing } from '@event-observatory/service-kit/tracing';
import { afterAll, beforeAll, expect, inject, it } from 'vitest';
import { ceHeaders, createTopic, type Harness, readRecords, startHarness, uniqueTopic } from './harness.js';

const { bootstrapServers } = inject('kafka');
let h: Harness;
let tracing: Tracing;

beforeAll(async () => {
  // `make dev`'s setting: spans and propagation must work although nothing is exported.
  process.env.OTEL_TRACES_EXPORTER = 'none';
  tracing = startTracing({ service: 'ingest-test', version: 'test', env: process.env });
  const topic = uniqueTopic('ingest-trace');
  await createTopic(bootstrapServers, topic);
  h = await startHarness({ bootstrapServers, topic });
});
afterAll(async () => {
  await h?.close();
  await tracing?.shutdown();
});

async function publish(id: string, extra: Record<string, string> = {}): Promise<string> {
  const res = await fetch(`${h.url}/v1/events`, {
    method: 'POST',
    headers: { authorization: `Bearer ${h.token}`, ...extra, ...ceHeaders(id, new Date().toISOString()) },
    body: 'payload',
  });
  expect(res.status).toBe(200);
  const records = await readRecords(bootstrapServers, h.topic, (rs) =>
    rs.some((r) => r.headers.ce_id?.toString() === id),
  );
  return records.find((r) => r.headers.ce_id?.toString() === id)?.headers.traceparent?.toString() ?? '';
}

it("puts a span of the request (its producer span), under the caller's trace, into the record's traceparent", async () => {
  const traceId = '4bf92f3577b34da6a3ce929d0e0e4736';
  const header = await publish('traced', { traceparent: `00-${traceId}-00f067aa0ba902b7-01` });
  // Same trace, a new span (the request's producer span), sampled as the caller asked.
  expect(header).toMatch(new RegExp(`^00-${traceId}-[0-9a-f]{16}-01$`));
  expect(header).not.toContain('00f067aa0ba902b7');
});

it('injects a traceparent into the record when the caller sent none', async () => {
  expect(await publish('untraced')).toMatch(/^00-[0-9a-f]{32}-[0-9a-f]{16}-0[01]$/);
});
