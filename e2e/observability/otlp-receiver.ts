/**
 * A small OTLP/HTTP trace receiver (JSON encoding, `POST /v1/traces`) standing in for the telemetry
 * collector, which is not available here: it keeps every span it is sent, with the
 * `service.name` of the resource that sent it.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

/** OTLP span kinds (opentelemetry-proto `Span.SpanKind`). */
export const KIND = { internal: 1, server: 2, client: 3, producer: 4, consumer: 5 } as const;

export interface ReceivedSpan {
  service: string;
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind: number;
  attributes: Record<string, unknown>;
}

export interface OtlpReceiver {
  /** The value for `OTEL_EXPORTER_OTLP_ENDPOINT`. */
  endpoint: string;
  spans: ReceivedSpan[];
  /** Every request received, whatever its path (traces, metrics, logs). */
  requests: string[];
  close(): Promise<void>;
}

interface KeyValue {
  key: string;
  value: Record<string, unknown>;
}
interface ExportRequest {
  resourceSpans?: {
    resource?: { attributes?: KeyValue[] };
    scopeSpans?: { spans?: (Omit<ReceivedSpan, 'service' | 'attributes'> & { attributes?: KeyValue[] })[] }[];
  }[];
}

function attributes(list: KeyValue[] = []): Record<string, unknown> {
  return Object.fromEntries(list.map(({ key, value }) => [key, Object.values(value)[0]]));
}

export async function startOtlpReceiver(): Promise<OtlpReceiver> {
  const spans: ReceivedSpan[] = [];
  const requests: string[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      requests.push(`${req.method} ${req.url}`);
      if (req.url === '/v1/traces') {
        const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as ExportRequest;
        for (const rs of body.resourceSpans ?? []) {
          const service = String(attributes(rs.resource?.attributes)['service.name']);
          for (const ss of rs.scopeSpans ?? [])
            for (const s of ss.spans ?? [])
              spans.push({
                service,
                traceId: s.traceId,
                spanId: s.spanId,
                parentSpanId: s.parentSpanId || undefined,
                name: s.name,
                kind: s.kind,
                attributes: attributes(s.attributes),
              });
        }
      }
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    endpoint: `http://127.0.0.1:${port}`,
    spans,
    requests,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}
