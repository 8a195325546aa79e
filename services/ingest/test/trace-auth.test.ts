/**
 * Sampling follows authentication: the `parentbased_*` samplers obey the sampled flag of an
 * incoming `traceparent`, so a caller that cannot authenticate must not reach the tracer.
 */
import { trace } from '@opentelemetry/api';
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  ParentBasedSampler,
  SimpleSpanProcessor,
  TraceIdRatioBasedSampler,
} from '@opentelemetry/sdk-trace-base';
import { afterAll, beforeAll, expect, inject, it } from 'vitest';
import { ceHeaders, createTopic, type Harness, startHarness, uniqueTopic } from './harness.js';

const { bootstrapServers } = inject('kafka');
const exporter = new InMemorySpanExporter();
// Roots are never sampled: a recorded span proves the caller's sampled flag was obeyed.
const provider = new BasicTracerProvider({
  sampler: new ParentBasedSampler({ root: new TraceIdRatioBasedSampler(0) }),
  spanProcessors: [new SimpleSpanProcessor(exporter)],
});
let h: Harness;

beforeAll(async () => {
  trace.setGlobalTracerProvider(provider);
  const topic = uniqueTopic('ingest-trace-auth');
  await createTopic(bootstrapServers, topic);
  h = await startHarness({ bootstrapServers, topic });
});
afterAll(async () => {
  await h?.close();
  await provider.shutdown();
  trace.disable();
});

const traceIds = () => new Set(exporter.getFinishedSpans().map((s) => s.spanContext().traceId));

function send(traceId: string, authorization: string | undefined): Promise<Response> {
  return fetch(`${h.url}/v1/events`, {
    method: 'POST',
    headers: {
      traceparent: `00-${traceId}-00f067aa0ba902b7-01`,
      ...(authorization === undefined ? {} : { authorization }),
      ...ceHeaders(`trace-auth-${traceId}`, new Date().toISOString()),
    },
    body: 'payload',
  });
}

it('records no span for requests that fail authentication, whatever their traceparent asks', async () => {
  const absent = '11111111111111111111111111111111';
  const forged = '22222222222222222222222222222222';
  expect((await send(absent, undefined)).status).toBe(401);
  expect((await send(forged, `Bearer ${h.token.slice(0, -4)}AAAA`)).status).toBe(401);
  expect(traceIds().has(absent)).toBe(false);
  expect(traceIds().has(forged)).toBe(false);
});

it("samples an authenticated request as its caller's traceparent asks (control)", async () => {
  const accepted = '33333333333333333333333333333333';
  expect((await send(accepted, `Bearer ${h.token}`)).status).toBe(200);
  expect(traceIds().has(accepted)).toBe(true);
});
