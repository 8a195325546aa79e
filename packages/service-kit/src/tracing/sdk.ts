import { hostname } from 'node:os';
import { DiagConsoleLogger, diag } from '@opentelemetry/api';
import {
  CompositePropagator,
  diagLogLevelFromString,
  getStringFromEnv,
  W3CBaggagePropagator,
  W3CTraceContextPropagator,
} from '@opentelemetry/core';
import {
  defaultResource,
  detectResources,
  envDetector,
  hostDetector,
  processDetector,
  resourceFromAttributes,
} from '@opentelemetry/resources';
import { NodeTracerProvider } from '@opentelemetry/sdk-trace-node';
import { spanProcessorsFromEnv } from './exporters.js';

/** The platform's `OTEL_*` defaults (README, environment variables), applied when the variable is unset. */
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
   * The process environment, handed in by the service's `main.ts`: it must be `process.env`
   * itself. The OpenTelemetry exporters, processors and resource detectors read the process
   * environment on their own (the `OTEL_*` contract), so this function cannot hand them another
   * object; it writes the spec's defaults into this one for unset variables, where they will look.
   */
  env: NodeJS.ProcessEnv;
}

export interface Tracing {
  /** False when `OTEL_SDK_DISABLED=true`. */
  readonly enabled: boolean;
  /** Flushes and stops the exporters; safe to call twice. */
  shutdown(): Promise<void>;
}

/**
 * Starts OpenTelemetry tracing configured by the standard `OTEL_*` variables (exporter, protocol,
 * endpoint, sampler, batch processor, span limits, resource attributes, `OTEL_LOG_LEVEL`,
 * `OTEL_SDK_DISABLED`, `OTEL_TRACES_EXPORTER=none`), with the spec's defaults where unset
 * (sampler `parentbased_traceidratio` 0.1; OTLP gRPC to `http://otel-collector:4317`). It builds
 * what `@opentelemetry/sdk-node` would for traces from the narrow packages (tracer provider,
 * OTLP exporters, resource detectors), without sdk-node's metrics and logs pipelines, which are
 * off here anyway (metrics are served at `/metrics` only). Propagation is W3C
 * `traceparent`/`tracestate` plus baggage. No auto-instrumentation is loaded: HTTP server spans
 * come from `traceRequests()`, broker spans from `injectTraceContext`/`extractTraceContext`.
 *
 * @example
 * ```ts
 * const tracing = startTracing({ service: 'ingest', version: config.version, env: process.env });
 * installShutdown({ steps: [..., { name: 'telemetry', run: tracing.shutdown }], timeoutMs, logger });
 * ```
 */
export function startTracing(opts: TracingOptions): Tracing {
  const env = opts.env;
  for (const [name, value] of Object.entries(OTEL_SPEC_DEFAULTS)) if (!env[name]?.trim()) env[name] = value;
  if (!env.OTEL_EXPORTER_OTLP_ENDPOINT?.trim() && !env.OTEL_EXPORTER_OTLP_PROTOCOL?.trim()) {
    Object.assign(env, OTEL_SPEC_EXPORTER);
  }
  const enabled = (env.OTEL_SDK_DISABLED ?? '').trim().toLowerCase() !== 'true';
  if (!enabled) return { enabled, shutdown: async () => {} };
  const logLevel = getStringFromEnv('OTEL_LOG_LEVEL');
  if (logLevel !== undefined)
    diag.setLogger(new DiagConsoleLogger(), { logLevel: diagLogLevelFromString(logLevel) });
  const provider = new NodeTracerProvider({
    resource: serviceResource(opts, env),
    spanProcessors: spanProcessorsFromEnv(),
  });
  provider.register({
    propagator: new CompositePropagator({
      propagators: [new W3CTraceContextPropagator(), new W3CBaggagePropagator()],
    }),
  });
  let stopped: Promise<void> | undefined;
  return {
    enabled,
    shutdown: () => {
      stopped ??= provider.shutdown();
      return stopped;
    },
  };
}

/**
 * The SDK's default resource, then this service's name, version and instance, then what
 * sdk-node's default detectors find (`OTEL_SERVICE_NAME` and `OTEL_RESOURCE_ATTRIBUTES` win,
 * then the process and the host).
 */
function serviceResource(opts: TracingOptions, env: Record<string, string | undefined>) {
  return defaultResource()
    .merge(
      resourceFromAttributes({
        'service.name': opts.service,
        'service.version': opts.version?.trim() || '0.0.0-unknown',
        'service.instance.id': env.HOSTNAME?.trim() || hostname(),
      }),
    )
    .merge(detectResources({ detectors: [envDetector, processDetector, hostDetector] }));
}
