import { context, propagation, trace } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  SimpleSpanProcessor,
} from '@opentelemetry/sdk-trace-base';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Harness, startHarness, testEvent, waitFor } from './harness.js';

const exporter = new InMemorySpanExporter();
let h: Harness;

beforeAll(async () => {
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  propagation.setGlobalPropagator(new W3CTraceContextPropagator());
  trace.setGlobalTracerProvider(
    new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] }),
  );
  h = await startHarness('tracing');
});

afterAll(async () => {
  await h?.close();
  trace.disable();
  propagation.disable();
  context.disable();
});

describe('trace context', () => {
  it('continues the producer trace from the traceparent header into the batch span and the INSERT', async () => {
    const traceId = '4bf92f3577b34da6a3ce929d0e0e4736';
    const parentSpanId = '00f067aa0ba902b7';
    const event = testEvent(1, { source: 'urn:test:trace' });
    await h.publish([event], [{ headers: { traceparent: `00-${traceId}-${parentSpanId}-01` } }]);
    await waitFor('the row', async () => (await h.count(`ce_source = 'urn:test:trace'`)) === 1);
    await waitFor('spans', () =>
      exporter.getFinishedSpans().some((s) => s.spanContext().traceId === traceId),
    );
    const spans = exporter.getFinishedSpans().filter((s) => s.spanContext().traceId === traceId);
    const batch = spans.find((s) => s.name.endsWith(' process'))!;
    const insert = spans.find((s) => s.name === 'INSERT events.cloud_event')!;
    expect(batch.parentSpanContext?.spanId).toBe(parentSpanId);
    expect(insert.parentSpanContext?.spanId).toBe(batch.spanContext().spanId);
  });
});
