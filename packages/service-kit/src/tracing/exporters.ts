import { diag } from '@opentelemetry/api';
import { getStringFromEnv, getStringListFromEnv } from '@opentelemetry/core';
import { OTLPTraceExporter as GrpcExporter } from '@opentelemetry/exporter-trace-otlp-grpc';
import { OTLPTraceExporter as JsonExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { OTLPTraceExporter as ProtobufExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import {
  BatchSpanProcessor,
  ConsoleSpanExporter,
  NoopSpanProcessor,
  SimpleSpanProcessor,
  type SpanExporter,
  type SpanProcessor,
} from '@opentelemetry/sdk-trace-base';

const OTLP_EXPORTERS: Record<string, () => SpanExporter> = {
  grpc: () => new GrpcExporter(),
  'http/json': () => new JsonExporter(),
  'http/protobuf': () => new ProtobufExporter(),
};

/**
 * The span processors `OTEL_TRACES_EXPORTER` asks for, as `@opentelemetry/sdk-node` builds them:
 * `otlp` (the default) over `OTEL_EXPORTER_OTLP_TRACES_PROTOCOL` / `OTEL_EXPORTER_OTLP_PROTOCOL`
 * (`grpc`, `http/json`, `http/protobuf`; default and fallback `http/protobuf`) behind a batch
 * processor (`OTEL_BSP_*`), `console` behind a simple one. The exporters read their own
 * `OTEL_EXPORTER_OTLP_*` variables (endpoint, headers, timeout, compression, certificates).
 *
 * Unlike sdk-node, `none` (or nothing usable, such as `zipkin`, which is not shipped) still yields
 * a processor that drops every span: spans are opened, sampled and propagated, nothing leaves.
 */
export function spanProcessorsFromEnv(): SpanProcessor[] {
  let names = [...new Set(getStringListFromEnv('OTEL_TRACES_EXPORTER') ?? [])].filter((n) => n !== 'null');
  if (names[0] === 'none') return [new NoopSpanProcessor()];
  if (names.length === 0 || names.includes('none')) names = ['otlp'];
  const processors = names.flatMap((name): SpanProcessor[] => {
    if (name === 'otlp') return [new BatchSpanProcessor(otlpExporter())];
    if (name === 'console') return [new SimpleSpanProcessor(new ConsoleSpanExporter())];
    diag.warn(`Unsupported OTEL_TRACES_EXPORTER value: ${name}. Supported values are: otlp, console, none.`);
    return [];
  });
  return processors.length > 0 ? processors : [new NoopSpanProcessor()];
}

function otlpExporter(): SpanExporter {
  const protocol =
    getStringFromEnv('OTEL_EXPORTER_OTLP_TRACES_PROTOCOL') ??
    getStringFromEnv('OTEL_EXPORTER_OTLP_PROTOCOL') ??
    'http/protobuf';
  const create = OTLP_EXPORTERS[protocol];
  if (create) return create();
  diag.warn(`Unsupported OTLP traces protocol: ${protocol}. Using http/protobuf.`);
  return new ProtobufExporter();
}
