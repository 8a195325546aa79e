import { context, trace } from '@opentelemetry/api';
import { describe, expect, it } from 'vitest';
import { startTracing } from './index.js';

describe('startTracing switched off', () => {
  it('does nothing with OTEL_SDK_DISABLED=true and shuts down cleanly', async () => {
    const env: Record<string, string | undefined> = { OTEL_SDK_DISABLED: 'true' };
    const tracing = startTracing({ service: 'off', env });
    expect(tracing.enabled).toBe(false);
    await tracing.shutdown();
    await tracing.shutdown();
    expect(trace.getTracer('x').startSpan('s').isRecording()).toBe(false);
  });

  it('starts without exporting anything with OTEL_TRACES_EXPORTER=none, and applies the spec defaults', async () => {
    process.env.OTEL_TRACES_EXPORTER = 'none';
    delete process.env.OTEL_EXPORTER_OTLP_ENDPOINT;
    delete process.env.OTEL_EXPORTER_OTLP_PROTOCOL;
    delete process.env.OTEL_TRACES_SAMPLER;
    const tracing = startTracing({ service: 'none', env: process.env });
    expect(tracing.enabled).toBe(true);
    expect(process.env.OTEL_TRACES_SAMPLER).toBe('parentbased_traceidratio');
    expect(process.env.OTEL_TRACES_SAMPLER_ARG).toBe('0.1');
    expect(process.env.OTEL_EXPORTER_OTLP_ENDPOINT).toBe('http://otel-collector:4317');
    expect(process.env.OTEL_EXPORTER_OTLP_PROTOCOL).toBe('grpc');
    // The context manager is installed, so a remote parent is visible to log lines.
    const parent = trace.setSpanContext(context.active(), {
      traceId: '4bf92f3577b34da6a3ce929d0e0e4736',
      spanId: '00f067aa0ba902b7',
      traceFlags: 1,
    });
    context.with(parent, () => {
      expect(trace.getSpanContext(context.active())?.traceId).toBe('4bf92f3577b34da6a3ce929d0e0e4736');
    });
    await tracing.shutdown();
  });
});
