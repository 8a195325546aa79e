import { hostname } from 'node:os';
import { CompositePropagator, W3CBaggagePropagator, W3CTraceContextPropagator } from '@opentelemetry/core';
import { NodeSDK, resources } from '@opentelemetry/sdk-node';
import { NoopSpanProcessor } from '@opentelemetry/sdk-trace';

/** `OTEL_*` values of the spec (Document 2 section 8) applied when the variable is unset. */
export const OTEL_SPEC_DEFAULTS = {
  OTEL_TRACES_SAMPLER: 'parentbased_traceidratio',
  OTEL_TRACES_SAMPLER_ARG: '0.1',
} as const;

/** Endpoint and protocol of the spec, applied together only when neither is set. */
export const OTEL_SPEC_EXPORTER = {
  OTEL_EXPORTER_OTLP_ENDPOINT: 'http://otel-collector:4317',
  OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc',
} as const;

export interface TracingOptions {
  /** `service.name` (unless `OTEL_SERVICE_NAME` says otherwise). */
  service: string;
  /** `service.version`; default `0.0.0-unknown`. */
  version?: string;
  /**
   * The environment the SDK reads. The SDK reads `process.env` itself, so the spec's defaults are
   * written into this object for unset variables; default `process.env`.
   */
  env?: Record<string, string | undefined>;
}

export interface Tracing {
  /** False when `OTEL_SDK_DISABLED=true`. */
  readonly enabled: boolean;
  /** Flushes and stops the exporters; safe to call twice. */
  shutdown(): Promise<void>;
}

/**
 * Starts OpenTelemetry tracing with `@opentelemetry/sdk-node`, configured by the standard `OTEL_*`
 * variables (exporter, endpoint, sampler, resource attributes, `OTEL_SDK_DISABLED`,
 * `OTEL_TRACES_EXPORTER=none`), with the spec's defaults where unset (sampler
 * `parentbased_traceidratio` 0.1; OTLP gRPC to `http://otel-collector:4317`). The SDK's metrics
 * and logs exporters are always off (metrics are served at `/metrics` only); propagation is W3C
 * `traceparent`/`tracestate` plus baggage. No auto-instrumentation is loaded: HTTP server spans
 * come from `traceRequests()`, broker spans from `injectTraceContext`/`extractTraceContext`.
 *
 * @example
 * ```ts
 * const tracing = startTracing({ service: 'ingest', version: process.env.SERVICE_VERSION });
 * installShutdown({ steps: [..., { name: 'telemetry', run: tracing.shutdown }], timeoutMs, logger });
 * ```
 */
export function startTracing(opts: TracingOptions): Tracing {
  const env = opts.env ?? process.env;
  for (const [name, value] of Object.entries(OTEL_SPEC_DEFAULTS)) if (!env[name]?.trim()) env[name] = value;
  if (!env.OTEL_EXPORTER_OTLP_ENDPOINT?.trim() && !env.OTEL_EXPORTER_OTLP_PROTOCOL?.trim()) {
    Object.assign(env, OTEL_SPEC_EXPORTER);
  }
  const enabled = (env.OTEL_SDK_DISABLED ?? '').trim().toLowerCase() !== 'true';
  if (!enabled) return { enabled, shutdown: async () => {} };
  const sdk = new NodeSDK({
    ...exportNothing(env),
    resource: resources.defaultResource().merge(
      resources.resourceFromAttributes({
        'service.name': opts.service,
        'service.version': opts.version?.trim() || '0.0.0-unknown',
        'service.instance.id': env.HOSTNAME?.trim() || hostname(),
      }),
    ),
    metricReaders: [],
    logRecordProcessors: [],
    instrumentations: [],
    textMapPropagator: new CompositePropagator({
      propagators: [new W3CTraceContextPropagator(), new W3CBaggagePropagator()],
    }),
  });
  sdk.start();
  let stopped: Promise<void> | undefined;
  return {
    enabled,
    shutdown: () => {
      stopped ??= sdk.shutdown();
      return stopped;
    },
  };
}

/**
 * With `OTEL_TRACES_EXPORTER=none` the SDK registers no tracer provider at all, so no span would
 * be opened and no `traceparent` injected. A processor that drops every span keeps spans,
 * sampling and propagation working while exporting nothing; only `OTEL_SDK_DISABLED` turns them off.
 */
function exportNothing(env: Record<string, string | undefined>): { spanProcessors?: NoopSpanProcessor[] } {
  const exporters = (env.OTEL_TRACES_EXPORTER ?? '').split(',').map((s) => s.trim().toLowerCase());
  return exporters[0] === 'none' ? { spanProcessors: [new NoopSpanProcessor()] } : {};
}
