import { context, trace } from '@opentelemetry/api';
import { describe, expect, it } from 'vitest';
import { injectTraceContext, startTracing } from './index.js';

// Its own file: the global tracer provider can be registered once per process.
describe('startTracing with OTEL_TRACES_EXPORTER=none', () => {
  it('opens spans and propagates their own context while exporting nothing', async () => {
    process.env.OTEL_TRACES_EXPORTER = 'none';
    const tracing = startTracing({ service: 'none-spans', env: process.env });
    const tracer = trace.getTracer('test');
    const parent = trace.setSpanContext(context.active(), {
      traceId: '4bf92f3577b34da6a3ce929d0e0e4736',
      spanId: '00f067aa0ba902b7',
      traceFlags: 1,
    });
    // A server span under the caller's context: same trace, a span id of its own.
    const child = tracer.startSpan('server', {}, parent);
    expect(child.isRecording()).toBe(true);
    expect(child.spanContext().traceId).toBe('4bf92f3577b34da6a3ce929d0e0e4736');
    expect(child.spanContext().spanId).not.toBe('00f067aa0ba902b7');
    const headers = injectTraceContext({}, trace.setSpan(context.active(), child));
    expect(headers.traceparent).toBe(`00-4bf92f3577b34da6a3ce929d0e0e4736-${child.spanContext().spanId}-01`);
    child.end();
    // A request without a caller's context still starts a trace whose context is propagated.
    const root = tracer.startSpan('root');
    expect(trace.isSpanContextValid(root.spanContext())).toBe(true);
    expect(injectTraceContext({}, trace.setSpan(context.active(), root)).traceparent).toMatch(
      new RegExp(`^00-${root.spanContext().traceId}-${root.spanContext().spanId}-0[01]$`),
    );
    root.end();
    await tracing.shutdown();
  });
});
