/**
 * OpenTelemetry tracing: SDK start from `OTEL_*`, HTTP server spans, W3C trace context in
 * broker record headers.
 * @module
 */
export { inSpan, TRACER_NAME, traceRequests } from './http.js';
export { extractTraceContext, type HeaderRecord, injectTraceContext } from './propagation.js';
export {
  OTEL_SPEC_DEFAULTS,
  OTEL_SPEC_EXPORTER,
  startTracing,
  type Tracing,
  type TracingOptions,
} from './sdk.js';
