import { context, type Span, SpanKind, SpanStatusCode, trace } from '@opentelemetry/api';
import type { MiddlewareHandler } from 'hono';
import { isUntimedPath, uriTemplate } from '../metrics/http-timer.js';
import { requestHeader } from '../server/headers.js';
import { extractTraceContext } from './propagation.js';

/** The tracer name of everything this package starts. */
export const TRACER_NAME = '@event-observatory/service-kit';

/**
 * Hono middleware opening a SERVER span per request, parented on the request's `traceparent`,
 * named `METHOD /route/:template` and carrying the stable HTTP semantic attributes; handlers and
 * their log lines run inside it. Health, metrics and documentation routes are not traced.
 * Register it after `requireAuth`: the parent sampled flag of an incoming `traceparent` decides
 * sampling (`parentbased_*` samplers), so a request that fails authentication must not get that
 * far.
 *
 * @example
 * ```ts
 * app.use(httpServerTimer(registry));
 * app.use('/v1/*', requireAuth(verifier));
 * app.use(traceRequests());
 * ```
 */
export function traceRequests(opts: { exclude?: (path: string) => boolean } = {}): MiddlewareHandler {
  const tracer = trace.getTracer(TRACER_NAME);
  return async function traceRequestsMiddleware(c, next) {
    const path = c.req.path;
    if (isUntimedPath(path) || opts.exclude?.(path)) return next();
    // Only the two W3C headers matter; copying every header cost more than the span itself.
    const carrier: Record<string, string> = {};
    const traceparent = requestHeader(c, 'traceparent');
    if (traceparent !== undefined) {
      carrier.traceparent = traceparent;
      const tracestate = requestHeader(c, 'tracestate');
      if (tracestate !== undefined) carrier.tracestate = tracestate;
    }
    const parent = extractTraceContext(carrier);
    const span = tracer.startSpan(
      c.req.method,
      { kind: SpanKind.SERVER, attributes: { 'http.request.method': c.req.method, 'url.path': path } },
      parent,
    );
    let status = 500;
    try {
      await context.with(trace.setSpan(parent, span), next);
      status = c.res.status;
    } catch (err) {
      span.recordException(err as Error);
      throw err;
    } finally {
      endServerSpan(span, c.req.method, uriTemplate(c, status), status);
    }
  };
}

function endServerSpan(span: Span, method: string, route: string, status: number): void {
  span.updateName(`${method} ${route}`);
  span.setAttribute('http.route', route);
  span.setAttribute('http.response.status_code', status);
  if (status >= 500) span.setStatus({ code: SpanStatusCode.ERROR });
  span.end();
}

/**
 * Runs `fn` inside a new active span, ending it after `fn` settles and marking it failed (with
 * the exception recorded) when `fn` throws.
 *
 * @example
 * ```ts
 * await inSpan('events.cloud_event insert', { kind: SpanKind.CLIENT, attributes: { 'db.system': 'postgresql' } },
 *   () => db.insert(rows));
 * ```
 */
export async function inSpan<T>(
  name: string,
  opts: {
    kind?: SpanKind;
    attributes?: Record<string, string | number | boolean>;
    parent?: import('@opentelemetry/api').Context;
  },
  fn: (span: Span) => Promise<T> | T,
): Promise<T> {
  const tracer = trace.getTracer(TRACER_NAME);
  const parent = opts.parent ?? context.active();
  const span = tracer.startSpan(
    name,
    { kind: opts.kind ?? SpanKind.INTERNAL, attributes: opts.attributes ?? {} },
    parent,
  );
  try {
    return await context.with(trace.setSpan(parent, span), () => fn(span));
  } catch (err) {
    span.recordException(err as Error);
    span.setStatus({ code: SpanStatusCode.ERROR, message: err instanceof Error ? err.message : String(err) });
    throw err;
  } finally {
    span.end();
  }
}
