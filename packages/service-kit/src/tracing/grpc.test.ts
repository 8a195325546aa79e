import { Server, ServerCredentials, type UntypedServiceImplementation } from '@grpc/grpc-js';
import { trace } from '@opentelemetry/api';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTracing, type Tracing } from './index.js';

// Its own file: the global tracer provider can be registered once per process.
const EXPORT = '/opentelemetry.proto.collector.trace.v1.TraceService/Export';

describe('startTracing exporting over OTLP gRPC (the spec default protocol)', () => {
  const requests: Buffer[] = [];
  const collector = new Server();
  let tracing: Tracing;

  beforeAll(async () => {
    // A real gRPC server taking the raw ExportTraceServiceRequest bytes; an empty response is a
    // valid (default) ExportTraceServiceResponse.
    const handler: UntypedServiceImplementation = {
      Export: (call: { request: Buffer }, done: (err: null, res: Buffer) => void) => {
        requests.push(call.request);
        done(null, Buffer.alloc(0));
      },
    };
    collector.addService(
      {
        Export: {
          path: EXPORT,
          requestStream: false,
          responseStream: false,
          requestSerialize: (b: Buffer) => b,
          requestDeserialize: (b: Buffer) => b,
          responseSerialize: (b: Buffer) => b,
          responseDeserialize: (b: Buffer) => b,
        },
      },
      handler,
    );
    const port = await new Promise<number>((resolve, reject) =>
      collector.bindAsync('127.0.0.1:0', ServerCredentials.createInsecure(), (err, p) =>
        err ? reject(err) : resolve(p),
      ),
    );
    Object.assign(process.env, {
      OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${port}`,
      OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc',
      OTEL_TRACES_SAMPLER: 'always_on',
      OTEL_TRACES_EXPORTER: 'otlp',
    });
    tracing = startTracing({ service: 'grpc-test', version: '7.7.7', env: process.env });
  });

  afterAll(async () => {
    await tracing.shutdown();
    await new Promise<void>((resolve) => collector.tryShutdown(() => resolve()));
  });

  it('sends the spans with the service resource to TraceService/Export on shutdown', async () => {
    const span = trace.getTracer('test').startSpan('grpc exported span');
    const traceId = span.spanContext().traceId;
    span.end();
    await tracing.shutdown(); // flushes the batch processor
    const payload = Buffer.concat(requests);
    expect(payload.includes('grpc exported span')).toBe(true);
    expect(payload.includes('grpc-test')).toBe(true);
    expect(payload.includes('7.7.7')).toBe(true);
    expect(payload.includes(Buffer.from(traceId, 'hex'))).toBe(true);
  });
});
