import { once } from 'node:events';
/**
 * Overload control refuses before the body: with the event limit full (a producer that holds every
 * publish), a client sends a request's headers and holds its body; the 503 `overloaded` with
 * `retry-after` arrives while the body is still unsent, and a client that asked for `100 Continue`
 * gets the 503 instead, on a connection that closes after it. No broker: the producer is a stand-in, as
 * in `bench/ingest/cost.ts`.
 */
import { connect, type Socket } from 'node:net';
import { EVENT_MAX_MESSAGE_BYTES, type PublishReceipt, producerConfig } from '@event-observatory/broker';
import { authConfigFromEnv, signDevToken } from '@event-observatory/service-kit/auth';
import { createLogger } from '@event-observatory/service-kit/logger';
import { createMetrics } from '@event-observatory/service-kit/metrics';
import { type RunningServer, serveApp } from '@event-observatory/service-kit/server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createIngestService, type IngestService, readIngestConfig } from '../src/index.js';
import { ceHeaders, SECRET, waitFor } from './harness.js';

/** The producer's queue capacity, so the event limit's ceiling. */
const CAPACITY = 4;

interface Answer {
  status: number;
  head: string;
  body: string;
}

/** Sends only the request head on a fresh connection; resolves with the answer, the body unsent. */
function headOnly(port: number, head: string): { socket: Socket; answer: Promise<Answer> } {
  const socket = connect({ host: '127.0.0.1', port });
  const answer = new Promise<Answer>((resolve, reject) => {
    let buf = Buffer.alloc(0);
    socket.on('data', (chunk: Buffer) => {
      buf = Buffer.concat([buf, chunk]);
      const end = buf.indexOf('\r\n\r\n');
      if (end < 0) return;
      const headText = buf.toString('latin1', 0, end);
      const length = Number(/\r\ncontent-length: (\d+)/i.exec(headText)?.[1] ?? 0);
      if (buf.length < end + 4 + length) return;
      resolve({
        status: Number(headText.slice(9, 12)),
        head: headText.toLowerCase(),
        body: buf.toString('utf8', end + 4, end + 4 + length),
      });
    });
    socket.on('error', reject);
  });
  socket.write(`${head}\r\n\r\n`);
  return { socket, answer };
}

describe('overload control: a refused request is answered before its body is read', () => {
  const held: Array<() => void> = [];
  let service: IngestService;
  let server: RunningServer;
  let token: string;
  let port: number;

  beforeAll(async () => {
    let offset = 0;
    service = await createIngestService({
      // The limit stays the queue's capacity: no cap for the test process's own (busy) event loop.
      config: {
        ...readIngestConfig({ SERVICE_VERSION: 'test' }),
        minInflightEvents: 1,
        queueDelayTargetMs: Number.POSITIVE_INFINITY,
      },
      broker: producerConfig({ bootstrapServers: ['127.0.0.1:9'], queueCapacity: CAPACITY }),
      auth: authConfigFromEnv({ AUTH_SECRET: SECRET }, { defaultScope: 'events:write' }),
      registry: createMetrics({ service: 'ingest', version: 'test' }).registry,
      logger: createLogger({ service: 'ingest', level: 'silent' }),
      // A producer that acknowledges only when the test lets it.
      brokerClients: {
        producer: (onOutcome) => ({
          publish: (record) =>
            new Promise<PublishReceipt>((resolve) =>
              held.push(() =>
                resolve({ topic: 't', partition: 0, offset: String(offset++), key: record.key }),
              ),
            ),
          probe: async () => {
            onOutcome(true);
            return true;
          },
          startProbing: () => {},
          close: async () => {},
        }),
        messageLimit: { read: async () => EVENT_MAX_MESSAGE_BYTES, close: async () => {} },
      },
    });
    server = await serveApp(service.app, {
      host: '127.0.0.1',
      port: 0,
      drainMs: 1000,
      preempt: service.preempt,
    });
    port = Number(new URL(server.url).port);
    token = await signDevToken({ secret: SECRET, scopes: ['events:write'] });
  });
  afterAll(async () => {
    for (const release of held) release();
    await server?.close();
    await service?.close();
  });

  it('answers 503 overloaded with retry-after to a single event and to a batch whose bodies never came, then admits again once the held events are acknowledged', async () => {
    const time = new Date().toISOString();
    const headers = (id: string) => ({
      authorization: `Bearer ${token}`,
      'content-type': 'application/octet-stream',
      ...ceHeaders(id, time),
    });
    const filling = Array.from({ length: CAPACITY }, (_, i) =>
      fetch(`${server.url}/v1/events`, { method: 'POST', headers: headers(`held-${i}`), body: 'x' }),
    );
    await waitFor(async () => (held.length === CAPACITY ? true : undefined), 10_000);

    const single = headOnly(
      port,
      [
        'POST /v1/events HTTP/1.1',
        `host: 127.0.0.1:${port}`,
        `authorization: Bearer ${token}`,
        'content-type: application/octet-stream',
        ...Object.entries(ceHeaders('refused', time)).map(([k, v]) => `${k}: ${v}`),
        'content-length: 1024',
      ].join('\r\n'),
    );
    const batchHead = [
      'POST /v1/events:batchCreate HTTP/1.1',
      `host: 127.0.0.1:${port}`,
      `authorization: Bearer ${token}`,
      'content-type: application/cloudevents-batch+json',
      'content-length: 100000',
    ];
    const batch = headOnly(port, batchHead.join('\r\n'));
    // A client that waits for `100 Continue` is refused instead, and never sends its body at all.
    const expecting = headOnly(port, [...batchHead, 'expect: 100-continue'].join('\r\n'));
    const expectingClosed = once(expecting.socket, 'end');
    expect((await expecting.answer).head).toContain('\r\nconnection: close');
    // The server ends the connection itself: a body sent anyway is never read as a next request.
    await expectingClosed;
    for (const { socket, answer } of [single, batch, expecting]) {
      const a = await answer;
      expect(a.status).toBe(503);
      expect(a.head).toContain('\r\nretry-after: 1');
      expect(JSON.parse(a.body).error).toMatchObject({
        code: 503,
        status: 'UNAVAILABLE',
        details: [
          { reason: 'unpersistable', metadata: { failure: 'overloaded', limitEvents: String(CAPACITY) } },
        ],
      });
      socket.destroy();
    }
    // Nothing of theirs reached the producer.
    expect(held.length).toBe(CAPACITY);

    for (const release of held.splice(0)) release();
    expect((await Promise.all(filling)).map((r) => r.status)).toEqual(Array(CAPACITY).fill(200));
    const after = fetch(`${server.url}/v1/events`, { method: 'POST', headers: headers('after'), body: 'x' });
    await waitFor(async () => (held.length === 1 ? true : undefined), 10_000);
    held.shift()?.();
    expect((await after).status).toBe(200);
  });
});
