import { type Context, context, ROOT_CONTEXT, type TextMapGetter } from '@opentelemetry/api';
import { W3CTraceContextPropagator } from '@opentelemetry/core';

/** Headers as kafkajs has them on a record: strings or bytes, possibly repeated. */
export type HeaderRecord = Record<string, string | Buffer | (string | Buffer)[] | undefined>;

const w3c = new W3CTraceContextPropagator();

const getter: TextMapGetter<HeaderRecord> = {
  keys: (carrier) => Object.keys(carrier),
  get(carrier, key) {
    const found = Object.keys(carrier).find((k) => k.toLowerCase() === key);
    const value = found === undefined ? undefined : carrier[found];
    if (value === undefined) return undefined;
    const first = Array.isArray(value) ? value[0] : value;
    return first === undefined ? undefined : first.toString();
  },
};

/**
 * Writes the W3C `traceparent` (and `tracestate`) of `ctx` (default: the active context) into
 * `headers` and returns them. Uses the W3C propagator directly, whatever the global one is.
 * Writes nothing when there is no valid span.
 *
 * @example
 * ```ts
 * await producer.send({ topic, messages: [{ key, value, headers: injectTraceContext({ ce_id: id }) }] });
 * ```
 */
export function injectTraceContext<H extends Record<string, unknown>>(
  headers: H,
  ctx: Context = context.active(),
): H & { traceparent?: string; tracestate?: string } {
  w3c.inject(ctx, headers, {
    set(carrier, key, value) {
      (carrier as Record<string, unknown>)[key] = value;
    },
  });
  return headers;
}

/**
 * The context carried by a record's `traceparent` header, on top of `base` (default the root
 * context, so a consumer's span parents on the producer's, not on whatever was active).
 *
 * @example
 * ```ts
 * const parent = extractTraceContext(message.headers ?? {});
 * await tracer.startActiveSpan(`${topic} process`, { kind: SpanKind.CONSUMER }, parent, run);
 * ```
 */
export function extractTraceContext(headers: HeaderRecord, base: Context = ROOT_CONTEXT): Context {
  return w3c.extract(base, headers, getter);
}
