import { connect } from 'node:net';
import { REJECTION_REASONS } from '@event-observatory/events';
import { signDevToken } from '@event-observatory/service-kit/auth';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import type { z } from 'zod';
import type { BatchCreateResponse } from '../src/batch.js';
import type { EventResource } from '../src/ingest.js';
import type { ErrorResponseSchema, ValidateResponseSchema } from '../src/routes.js';
import {
  ceHeaders,
  createTopic,
  type Harness,
  readRecords,
  SECRET,
  startHarness,
  uniqueTopic,
} from './harness.js';

const { bootstrapServers } = inject('kafka');
const NOW = Date.parse('2025-06-01T12:00:00.000Z');
const iso = (ms: number) => new Date(ms).toISOString();
const T = iso(NOW - 60_000);
const DAY = 86_400_000;

let h: Harness;
const auth = () => ({ authorization: `Bearer ${h.token}` });

beforeAll(async () => {
  const topic = uniqueTopic('ingest-api');
  await createTopic(bootstrapServers, topic);
  h = await startHarness({ bootstrapServers, topic, now: () => NOW, knownTypes: ['com.example.*'] });
});
afterAll(async () => {
  await h?.close();
});

/** A published event's resource: unlike validate's, it says where the event landed. */
type Published = EventResource & Required<Pick<EventResource, 'destination'>>;
/** A batch's answer; its created events were published. */
type BatchAnswer = Omit<BatchCreateResponse, 'events'> & { events: Published[] };
/** The answers the routes declare (the OpenAPI document's ValidateResponse and ErrorResponse). */
type ValidateAnswer = z.infer<typeof ValidateResponseSchema>;
type ErrorAnswer = z.infer<typeof ErrorResponseSchema>;

/** `T` is the answer the call expects; a test that reads none leaves it `unknown`. */
async function post<T = unknown>(path: string, headers: Record<string, string>, body?: RequestInit['body']) {
  const res = await fetch(`${h.url}${path}`, { method: 'POST', headers: { ...auth(), ...headers }, body });
  return { status: res.status, headers: res.headers, json: (await res.json()) as T };
}

const structured = (doc: object) => JSON.stringify(doc);
const baseDoc = (id: string, extra: object = {}) => ({
  specversion: '1.0',
  id,
  source: 'https://example.com/sensors',
  type: 'com.example.reading',
  time: T,
  ...extra,
});

const BATCH = { 'content-type': 'application/cloudevents-batch+json' };

/** The ids of the records on the test topic, once `present` are all there. */
async function idsOnTopic(present: string[]): Promise<string[]> {
  const records = await readRecords(bootstrapServers, h.topic, (rs) => {
    const ids = new Set(rs.map((x) => x.headers.ce_id?.toString()));
    return present.every((id) => ids.has(id));
  });
  return records.map((x) => x.headers.ce_id?.toString() ?? '');
}

/** One sample of the metrics text: the value of the first series of `name` with `labels`. */
async function metricValue(name: string, labels: Record<string, string>): Promise<number> {
  const text = await (await fetch(`${h.metricsUrl}/metrics`)).text();
  const line = text
    .split('\n')
    .find(
      (l) => l.startsWith(`${name}{`) && Object.entries(labels).every(([k, v]) => l.includes(`${k}="${v}"`)),
    );
  return Number(line?.slice(line.lastIndexOf(' ') + 1) ?? 0);
}

describe('POST /v1/events', () => {
  it('publishes a binary event whose record (headers, key, value bytes, partition, offset) matches the response', async () => {
    const payload = Buffer.from([0, 1, 2, 0xfe, 0xff, 10, 13]);
    const r = await post<Published>(
      '/v1/events',
      {
        ...ceHeaders('bin-1', T, { 'ce-subject': 'dev%2F7', 'ce-region': 'eu' }),
        'content-type': 'application/octet-stream',
      },
      payload,
    );
    expect(r.status).toBe(200);
    expect(r.json).toMatchObject({
      name: 'events/https%3A%2F%2Fexample.com%2Fsensors,bin-1',
      id: 'bin-1',
      source: 'https://example.com/sensors',
      eventType: 'com.example.reading',
      time: T,
      partitionKey: 'https://example.com/sensors#dev/7',
      destination: { topic: h.topic },
    });
    const records = await readRecords(bootstrapServers, h.topic, (rs) =>
      rs.some((x) => x.headers.ce_id?.toString() === 'bin-1'),
    );
    const rec = records.find((x) => x.headers.ce_id?.toString() === 'bin-1')!;
    expect(rec.partition).toBe(r.json.destination.partition);
    expect(Number(rec.offset)).toBe(r.json.destination.offset);
    expect(rec.key?.toString()).toBe('https://example.com/sensors#dev/7');
    expect(Buffer.compare(rec.value!, payload)).toBe(0);
    const headers = Object.fromEntries(Object.entries(rec.headers).map(([k, v]) => [k, v?.toString()]));
    expect(headers).toEqual({
      ce_specversion: '1.0',
      ce_id: 'bin-1',
      ce_source: 'https://example.com/sensors',
      ce_type: 'com.example.reading',
      ce_time: T,
      ce_subject: 'dev/7',
      'content-type': 'application/octet-stream',
      ce_region: 'eu',
      'observatory-producer': '{"authtype":"unknown","authid":"dev"}',
    });
  });

  it('gives the same record and the same response body in binary and structured mode', async () => {
    const bin = await post<Published>(
      '/v1/events',
      {
        ...ceHeaders('same-1', T, { 'ce-subject': 's', 'ce-tier': 'gold' }),
        'content-type': 'application/json',
      },
      '{"t":21.5,"big":123456789012345678901}',
    );
    const str = await post<Published>(
      '/v1/events',
      { 'content-type': 'application/cloudevents+json; charset=utf-8' },
      structured(
        baseDoc('same-1', { subject: 's', tier: 'gold', datacontenttype: 'application/json' }),
      ).replace(/}$/, ',"data":{"t":21.5,"big":123456789012345678901}}'),
    );
    expect(bin.status).toBe(200);
    expect(str.status).toBe(200);
    const { destination: d1, ...b1 } = bin.json;
    const { destination: d2, ...b2 } = str.json;
    expect(b1).toEqual(b2);
    expect(d1.partition).toBe(d2.partition);
    const records = await readRecords(
      bootstrapServers,
      h.topic,
      (rs) => rs.filter((x) => x.headers.ce_id?.toString() === 'same-1').length >= 2,
    );
    const [a, b] = records.filter((x) => x.headers.ce_id?.toString() === 'same-1');
    expect(Buffer.compare(a!.value!, b!.value!)).toBe(0);
    expect(Object.keys(a!.headers)).toEqual(Object.keys(b!.headers));
    for (const k of Object.keys(a!.headers))
      expect(a!.headers[k]?.toString()).toBe(b!.headers[k]?.toString());
  });

  const errorRows: [string, Record<string, string>, string, number, string, string][] = [
    [
      'invalid JSON document',
      { 'content-type': 'application/cloudevents+json' },
      '{"id": ',
      400,
      'INVALID_ARGUMENT',
      'malformed',
    ],
    ['missing ce-type', { ...ceHeaders('e1', T), 'ce-type': '' }, 'x', 400, 'INVALID_ARGUMENT', 'malformed'],
    [
      'bad extension name',
      ceHeaders('e2', T, { 'ce-bad_name': 'x' }),
      'x',
      400,
      'INVALID_ARGUMENT',
      'invalid-attributes',
    ],
    [
      'invalid UTF-8 in a header',
      ceHeaders('e3', T, { 'ce-subject': '%C3%28' }),
      'x',
      400,
      'INVALID_ARGUMENT',
      'malformed',
    ],
    [
      'JSON content-type with a non-JSON payload',
      { ...ceHeaders('e4', T), 'content-type': 'application/json' },
      'not json',
      400,
      'INVALID_ARGUMENT',
      'invalid-payload',
    ],
    [
      'a JSON payload the store cannot hold (U+0000)',
      { ...ceHeaders('e4b', T), 'content-type': 'application/json' },
      '{"note":"a\\u0000b"}',
      400,
      'INVALID_ARGUMENT',
      'invalid-payload',
    ],
    [
      'absent time',
      { ...ceHeaders('e5', T), 'ce-time': '' },
      'x',
      400,
      'INVALID_ARGUMENT',
      'invalid-attributes',
    ],
    [
      'time too far ahead',
      ceHeaders('e6', iso(NOW + DAY + 1)),
      'x',
      400,
      'OUT_OF_RANGE',
      'invalid-attributes',
    ],
    [
      'time too far back',
      ceHeaders('e7', iso(NOW - 90 * DAY - 1)),
      'x',
      400,
      'OUT_OF_RANGE',
      'invalid-attributes',
    ],
    [
      'batch media type',
      { 'content-type': 'application/cloudevents-batch+json' },
      '[]',
      400,
      'INVALID_ARGUMENT',
      'malformed',
    ],
  ];
  for (const [name, headers, body, code, status, reason] of errorRows) {
    it(`answers ${code} ${status} ${reason} for ${name}`, async () => {
      const cleaned = Object.fromEntries(Object.entries(headers).filter(([, v]) => v !== ''));
      const r = await post<ErrorAnswer>('/v1/events', cleaned, body);
      expect(r.status).toBe(code);
      expect(r.json.error).toMatchObject({ code, status, details: [{ reason, domain: expect.any(String) }] });
    });
  }

  it('reports the window that was missed', async () => {
    const r = await post<ErrorAnswer>('/v1/events', ceHeaders('w1', iso(NOW + DAY + 1000)), 'x');
    expect(r.json.error.details[0]?.metadata).toMatchObject({ direction: 'future', maxSkewSeconds: '86400' });
  });

  it('accepts time exactly on both edges of the window', async () => {
    expect((await post('/v1/events', ceHeaders('edge-f', iso(NOW + DAY)), 'x')).status).toBe(200);
    expect((await post('/v1/events', ceHeaders('edge-p', iso(NOW - 90 * DAY)), 'x')).status).toBe(200);
  });

  it('observes ingest_time_skew{direction="future"} with the distance of a future-dated event', async () => {
    const future = { direction: 'future' };
    const [count, sum] = [
      await metricValue('ingest_time_skew_count', future),
      await metricValue('ingest_time_skew_sum', future),
    ];
    expect((await post('/v1/events', ceHeaders('skew-f', iso(NOW + 3_600_000)), 'x')).status).toBe(200);
    expect(await metricValue('ingest_time_skew_count', future)).toBe(count + 1);
    expect(await metricValue('ingest_time_skew_sum', future)).toBeCloseTo(sum + 3600, 3);
  });

  it('answers 401 UNAUTHENTICATED with the error body without a token, 403 without the scope', async () => {
    const res = await fetch(`${h.url}/v1/events`, { method: 'POST', headers: ceHeaders('a1', T), body: 'x' });
    expect(res.status).toBe(401);
    expect(res.headers.get('www-authenticate')).toMatch(/^Bearer/);
    expect(((await res.json()) as ErrorAnswer).error).toMatchObject({ code: 401, status: 'UNAUTHENTICATED' });
    const weak = await signDevToken({ secret: SECRET, scopes: ['events:read'] });
    const res2 = await fetch(`${h.url}/v1/events`, {
      method: 'POST',
      headers: { ...ceHeaders('a2', T), authorization: `Bearer ${weak}` },
      body: 'x',
    });
    expect(res2.status).toBe(403);
    expect(res2.headers.get('www-authenticate')).toMatch(/^Bearer .*error="insufficient_scope"/);
    expect(((await res2.json()) as ErrorAnswer).error).toMatchObject({
      code: 403,
      status: 'PERMISSION_DENIED',
    });
  });
});

describe('authentication of the custom methods', () => {
  const requests: [string, Record<string, string>, string][] = [
    ['/v1/events:batchCreate', BATCH, JSON.stringify([baseDoc('auth-batch')])],
    ['/v1/events:validate', ceHeaders('auth-validate', T), 'x'],
  ];
  for (const [path, headers, body] of requests) {
    it(`answers ${path} with 401 UNAUTHENTICATED without a token and 403 PERMISSION_DENIED without the scope`, async () => {
      const anonymous = await fetch(`${h.url}${path}`, { method: 'POST', headers, body });
      expect(anonymous.status).toBe(401);
      expect(anonymous.headers.get('www-authenticate')).toMatch(/^Bearer/);
      expect(((await anonymous.json()) as ErrorAnswer).error).toMatchObject({
        code: 401,
        status: 'UNAUTHENTICATED',
      });
      const weak = await signDevToken({ secret: SECRET, scopes: ['events:read'] });
      const unscoped = await fetch(`${h.url}${path}`, {
        method: 'POST',
        headers: { ...headers, authorization: `Bearer ${weak}` },
        body,
      });
      expect(unscoped.status).toBe(403);
      expect(((await unscoped.json()) as ErrorAnswer).error).toMatchObject({
        code: 403,
        status: 'PERMISSION_DENIED',
      });
    });
  }
});

describe('oversized bodies', () => {
  const big = Buffer.alloc(1_048_577, 0x61);
  it('refuses a declared content-length over the ceiling with 413 RESOURCE_EXHAUSTED too-large', async () => {
    const r = await post<ErrorAnswer>('/v1/events', ceHeaders('big-1', T), big);
    expect(r.status).toBe(413);
    expect(r.json.error).toMatchObject({
      code: 413,
      status: 'RESOURCE_EXHAUSTED',
      details: [{ reason: 'too-large', metadata: { limitBytes: '1048576' } }],
    });
  });
  it("refuses an event under the ceiling whose Kafka record would outgrow the topic's guarantee, and publishes the next", async () => {
    // The key repeats source and subject, which also travel as headers: the record is about
    // twice the body, past the 1 MiB + 64 KiB the topic is checked to hold.
    const doc = baseDoc('big-key', { source: `urn:${'s'.repeat(520_000)}`, subject: 'x'.repeat(520_000) });
    const body = structured(doc);
    expect(body.length).toBeLessThan(1_048_576);
    const limit = { reason: 'too-large', metadata: { limitBytes: String(1_048_576 + 65_536) } };
    const created = await post<ErrorAnswer>(
      '/v1/events',
      { 'content-type': 'application/cloudevents+json' },
      body,
    );
    expect(created.status).toBe(413);
    expect(created.json.error).toMatchObject({ code: 413, details: [limit] });
    const validated = await post<ValidateAnswer>(
      '/v1/events:validate',
      { 'content-type': 'application/cloudevents+json' },
      body,
    );
    expect(validated.json).toMatchObject({ valid: false, error: { code: 413, details: [limit] } });
    const batch = await post<BatchAnswer>(
      '/v1/events:batchCreate',
      BATCH,
      `[${body},${structured(baseDoc('after-big-key'))}]`,
    );
    expect(batch.status).toBe(200);
    expect(batch.json).toMatchObject({ created: 1, failed: 1 });
    expect(batch.json.entries[0]).toMatchObject({ error: { code: 413, details: [limit] } });
  });
  it('accepts a body of exactly the ceiling', async () => {
    const r = await post('/v1/events', ceHeaders('big-ok', T), big.subarray(0, 1_048_576));
    expect(r.status).toBe(200);
  });
  it('refuses a chunked body while it streams', async () => {
    let sent = 0;
    const stream = new ReadableStream<Uint8Array>({
      pull(controller) {
        if (sent >= 4 * 1_048_576) return controller.close();
        sent += 65_536;
        controller.enqueue(new Uint8Array(65_536));
      },
    });
    const res = await fetch(`${h.url}/v1/events`, {
      method: 'POST',
      headers: { ...auth(), ...ceHeaders('chunked', T) },
      body: stream,
      duplex: 'half',
    } as RequestInit);
    expect(res.status).toBe(413);
    expect(((await res.json()) as ErrorAnswer).error.details[0]?.reason).toBe('too-large');
  });
  it('refuses a body that lies about its length (content-length small, body large)', async () => {
    const stream = new ReadableStream<Uint8Array>({
      start(controller) {
        for (let i = 0; i < 20; i++) controller.enqueue(new Uint8Array(100_000));
        controller.close();
      },
    });
    const res = await h.app.request('/v1/events', {
      method: 'POST',
      headers: { ...auth(), ...ceHeaders('liar', T), 'content-length': '10' },
      body: stream,
      duplex: 'half',
    } as RequestInit);
    expect(res.status).toBe(413);
  });
  it('over a real socket, answers the bytes past a lying content-length with the spec error body', async () => {
    const head = Object.entries({ ...auth(), ...ceHeaders('liar-socket', T), 'content-length': '10' })
      .map(([k, v]) => `${k}: ${v}\r\n`)
      .join('');
    const raw = await rawExchange(`POST /v1/events HTTP/1.1\r\nhost: x\r\n${head}\r\n${'a'.repeat(5000)}`);
    const last = raw.slice(raw.lastIndexOf('HTTP/1.1 '));
    expect(last).toMatch(/^HTTP\/1\.1 400 /);
    expect(JSON.parse(last.slice(last.indexOf('\r\n\r\n') + 4)).error).toMatchObject({
      code: 400,
      status: 'INVALID_ARGUMENT',
    });
  });
  it('gives back the admission of clients gone before their body was read, their tokens still being verified', async () => {
    // Each token is new, so its signature is checked on the thread pool: the client's close is
    // handled before the body is read.
    for (let i = 0; i < 20; i++) {
      const token = await signDevToken({ secret: SECRET, scopes: ['events:write'], subject: `gone-${i}` });
      const head = Object.entries({ authorization: `Bearer ${token}`, ...ceHeaders(`gone-${i}`, T) })
        .map(([k, v]) => `${k}: ${v}\r\n`)
        .join('');
      await new Promise<void>((resolve) => {
        const socket = connect(Number(new URL(h.url).port), '127.0.0.1', () => {
          socket.write(
            `POST /v1/events HTTP/1.1\r\nhost: x\r\ncontent-length: 100\r\n${head}\r\n${'a'.repeat(50)}`,
          );
          socket.destroy();
          resolve();
        });
        socket.on('error', () => {});
      });
      await new Promise((r) => setTimeout(r, 20));
    }
    await new Promise((r) => setTimeout(r, 500));
    const text = await (await fetch(`${h.metricsUrl}/metrics`)).text();
    expect(text).toMatch(/^ingest_inflight_events\{[^}]*\} 0$/m);
  });

  it('counts a client that goes away mid-body as 499, never as a server error', async () => {
    const head = Object.entries({ ...auth(), ...ceHeaders('gone', T), 'content-length': '100000' })
      .map(([k, v]) => `${k}: ${v}\r\n`)
      .join('');
    await new Promise<void>((resolve, reject) => {
      const socket = connect(Number(new URL(h.url).port), '127.0.0.1');
      socket.on('error', reject);
      socket.write(`POST /v1/events HTTP/1.1\r\nhost: x\r\n${head}\r\n${'a'.repeat(1000)}`, () => {
        setTimeout(() => {
          socket.destroy();
          resolve();
        }, 100);
      });
    });
    await new Promise((r) => setTimeout(r, 200));
    const text = await (await fetch(`${h.metricsUrl}/metrics`)).text();
    expect(text).toMatch(/http_server_requests_seconds_count\{[^}]*uri="\/v1\/events",status="499"/);
    expect(text).not.toMatch(/http_server_requests_seconds_count\{[^}]*status="500"/);
  });
});

/** Writes raw bytes to the service and collects everything it answers until it closes. */
function rawExchange(bytes: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(Number(new URL(h.url).port), '127.0.0.1');
    let text = '';
    socket.on('data', (d) => {
      text += d.toString();
    });
    socket.on('end', () => resolve(text));
    socket.on('error', reject);
    socket.write(bytes);
  });
}

describe('POST /v1/events:batchCreate', () => {
  it('judges elements one by one and answers 200 with indexes and counts', async () => {
    const body = `[${structured(baseDoc('b-ok-1', { data: { n: 1 } }))}, {"id": }, ${structured(
      baseDoc('b-late', { time: iso(NOW - 91 * DAY) }),
    )}, ${structured(baseDoc('b-ok-2', { datacontenttype: 'text/plain', data: 'hi' }))}, 7]`;
    const r = await post<BatchAnswer>(
      '/v1/events:batchCreate',
      { 'content-type': 'application/cloudevents-batch+json' },
      body,
    );
    expect(r.status).toBe(200);
    expect(r.json.created).toBe(2);
    expect(r.json.failed).toBe(3);
    expect(r.json.events.map((e) => e.id)).toEqual(['b-ok-1', 'b-ok-2']);
    expect(
      r.json.entries.map((e) => [e.index, 'event' in e ? e.event.id : e.error.details[0]?.reason]),
    ).toEqual([
      [0, 'b-ok-1'],
      [1, 'malformed'],
      [2, 'invalid-attributes'],
      [3, 'b-ok-2'],
      [4, 'malformed'],
    ]);
    expect(r.json.entries[2]).toMatchObject({ error: { code: 400, status: 'OUT_OF_RANGE' } });
    const records = await readRecords(bootstrapServers, h.topic, (rs) =>
      rs.some((x) => x.headers.ce_id?.toString() === 'b-ok-2'),
    );
    const ok2 = records.find((x) => x.headers.ce_id?.toString() === 'b-ok-2')!;
    expect(ok2.value?.toString()).toBe('hi');
    expect(Number(ok2.offset)).toBe(r.json.events[1]?.destination.offset);
  });
  it('refuses a batch over INGEST_MAX_BATCH_EVENTS whole with 413', async () => {
    const docs = Array.from({ length: 257 }, (_, i) => baseDoc(`many-${i}`));
    const r = await post<ErrorAnswer>(
      '/v1/events:batchCreate',
      { 'content-type': 'application/cloudevents-batch+json' },
      JSON.stringify(docs),
    );
    expect(r.status).toBe(413);
    expect(r.json.error.message).toBe('the batch holds more than 256 events; at most 256 are accepted');
    expect(r.json.error.details[0]).toEqual({
      reason: 'too-large',
      domain: expect.any(String),
      metadata: { limitEvents: '256' },
    });
  });
  it('reads a chunked batch sent one byte a chunk whole', async () => {
    const text = 'x'.repeat(40_000);
    const body = JSON.stringify([
      baseDoc('b-bytewise-1', { datacontenttype: 'text/plain', data: text }),
      baseDoc('b-bytewise-2', { data: { n: 2 } }),
    ]);
    const chunks = [...Buffer.from(body)].map((b) => `1\r\n${String.fromCharCode(b)}\r\n`).join('');
    const answer = await rawExchange(
      `POST /v1/events:batchCreate HTTP/1.1\r\nhost: x\r\nauthorization: Bearer ${h.token}\r\n` +
        `content-type: application/cloudevents-batch+json\r\ntransfer-encoding: chunked\r\n` +
        `connection: close\r\n\r\n${chunks}0\r\n\r\n`,
    );
    expect(answer.split('\r\n')[0]).toBe('HTTP/1.1 200 OK');
    expect(JSON.parse(answer.slice(answer.indexOf('\r\n\r\n') + 4))).toMatchObject({ created: 2, failed: 0 });
    const records = await readRecords(bootstrapServers, h.topic, (rs) =>
      rs.some((x) => x.headers.ce_id?.toString() === 'b-bytewise-1'),
    );
    const first = records.find((x) => x.headers.ce_id?.toString() === 'b-bytewise-1')!;
    expect(first.value?.toString()).toBe(text);
  });
  it('refuses an element over INGEST_MAX_EVENT_BYTES as too-large and publishes the others', async () => {
    const big = baseDoc('b-big', { datacontenttype: 'text/plain', data: 'a'.repeat(1_048_576) });
    const body = JSON.stringify([baseDoc('b-small-1'), big, baseDoc('b-small-2')]);
    const r = await post<BatchAnswer>('/v1/events:batchCreate', BATCH, body);
    expect(r.status).toBe(200);
    expect(r.json).toMatchObject({ created: 2, failed: 1 });
    expect(r.json.entries.map((e) => ('event' in e ? e.event.id : e.error.details[0]?.reason))).toEqual([
      'b-small-1',
      'too-large',
      'b-small-2',
    ]);
    expect(r.json.entries[1]).toMatchObject({
      error: {
        code: 413,
        status: 'RESOURCE_EXHAUSTED',
        details: [{ reason: 'too-large', metadata: { limitBytes: '1048576' } }],
      },
    });
    const ids = await idsOnTopic(['b-small-1', 'b-small-2']);
    expect(ids).not.toContain('b-big');
  });
  it('refuses a batch body over INGEST_MAX_BATCH_BYTES whole with 413, before reading it', async () => {
    const r = await post<ErrorAnswer>('/v1/events:batchCreate', BATCH, Buffer.alloc(8_388_609, 0x20));
    expect(r.status).toBe(413);
    expect(r.json.error).toMatchObject({
      code: 413,
      status: 'RESOURCE_EXHAUSTED',
      details: [{ reason: 'too-large', metadata: { limitBytes: '8388608' } }],
    });
    expect(r.json.error.message).toMatch(/batch body/);
  });
  it('puts the events of one key on the topic in the order of the request', async () => {
    const ids = Array.from({ length: 20 }, (_, i) => `order-${i}`);
    const r = await post<BatchAnswer>(
      '/v1/events:batchCreate',
      BATCH,
      JSON.stringify(ids.map((id) => baseDoc(id, { subject: 'ordered' }))),
    );
    expect(r.status).toBe(200);
    expect(r.json.created).toBe(20);
    const offsets = r.json.events.map((e) => e.destination.offset);
    expect(new Set(r.json.events.map((e) => e.destination.partition)).size).toBe(1);
    expect(offsets).toEqual([...offsets].sort((a, b) => a - b));
    const onTopic = (await idsOnTopic(ids)).filter((id) => id.startsWith('order-'));
    expect(onTopic).toEqual(ids);
  });
  it('refuses a document that is not an array with 400', async () => {
    const r = await post<ErrorAnswer>(
      '/v1/events:batchCreate',
      { 'content-type': 'application/cloudevents-batch+json' },
      '{}',
    );
    expect(r.status).toBe(400);
    expect(r.json.error.details[0]?.reason).toBe('malformed');
  });
});

describe('POST /v1/events:validate', () => {
  it('answers valid true with the event it would create and publishes nothing', async () => {
    const r = await post<ValidateAnswer>('/v1/events:validate', ceHeaders('v-1', T), 'x');
    expect(r.status).toBe(200);
    expect(r.json.valid).toBe(true);
    expect(r.json.event?.name).toBe('events/https%3A%2F%2Fexample.com%2Fsensors,v-1');
    expect(r.json.event?.destination).toBeUndefined();
  });
  it('writes nothing to the topic: the next event of the same key takes the very next offset', async () => {
    const key = { 'ce-subject': 'validate-probe' };
    const before = await post<Published>('/v1/events', ceHeaders('vp-before', T, key), 'x');
    const validated = await post<ValidateAnswer>(
      '/v1/events:validate',
      ceHeaders('vp-validated', T, key),
      'x',
    );
    const after = await post<Published>('/v1/events', ceHeaders('vp-after', T, key), 'x');
    expect(validated.json.valid).toBe(true);
    expect(after.json.destination.partition).toBe(before.json.destination.partition);
    expect(after.json.destination.offset).toBe(before.json.destination.offset + 1);
    expect(await idsOnTopic(['vp-before', 'vp-after'])).not.toContain('vp-validated');
  });
  it('answers valid false with the error body', async () => {
    const r = await post<ValidateAnswer>('/v1/events:validate', ceHeaders('v-2', iso(NOW + 2 * DAY)), 'x');
    expect(r.status).toBe(200);
    expect(r.json).toMatchObject({ valid: false, error: { code: 400, status: 'OUT_OF_RANGE' } });
  });
});

describe('description, docs, health and metrics', () => {
  it('serves an OpenAPI document generated from the routes, as JSON and YAML', async () => {
    const doc = (await (await fetch(`${h.url}/openapi.json`)).json()) as {
      paths: { '/v1/events': { post: { requestBody: { content: object }; responses: object } } };
      components: { securitySchemes: { bearerAuth: unknown }; schemas: { ErrorBody: unknown } };
    };
    expect(Object.keys(doc.paths).sort()).toEqual([
      '/v1/events',
      '/v1/events:batchCreate',
      '/v1/events:validate',
    ]);
    expect(Object.keys(doc.paths['/v1/events'].post.requestBody.content)).toEqual([
      'application/octet-stream',
    ]);
    expect(Object.keys(doc.paths['/v1/events'].post.responses).sort()).toEqual([
      '200',
      '400',
      '401',
      '403',
      '413',
      '503',
    ]);
    expect(doc.components.securitySchemes.bearerAuth).toMatchObject({ type: 'http', scheme: 'bearer' });
    expect(doc.components.schemas.ErrorBody).toBeDefined();
    const yaml = parseYaml(await (await fetch(`${h.url}/openapi.yaml`)).text());
    expect(yaml).toEqual(doc);
  });
  it('serves the documentation page and its assets locally', async () => {
    const html = await (await fetch(`${h.url}/docs`)).text();
    expect(html).not.toMatch(/https?:\/\//);
    const js = await fetch(`${h.url}/docs/swagger-ui-bundle.js`);
    expect(js.status).toBe(200);
    expect((await js.arrayBuffer()).byteLength).toBeGreaterThan(100_000);
    const init = await (await fetch(`${h.url}/docs/init.js`)).text();
    expect(init).toContain('validatorUrl: null');
    expect(init).not.toMatch(/https?:\/\//);
    const schema = (await (await fetch(`${h.url}/openapi.json`)).json()) as {
      components: { schemas: { ErrorInfo: { properties: { reason: { enum?: string[] } } } } };
    };
    expect(schema.components.schemas.ErrorInfo.properties.reason.enum).toEqual([...REJECTION_REASONS]);
  });
  it('answers readiness UP with the broker reachable and the event ceiling fitting the topic, and liveness UP', async () => {
    const ready = await fetch(`${h.url}/health/ready`);
    expect(ready.status).toBe(200);
    expect(await ready.json()).toEqual({ status: 'UP', broker: 'reachable', eventCeiling: 'fits' });
    expect((await fetch(`${h.url}/health/live`)).status).toBe(200);
  });
  it('serves /metrics on the metrics listener only: the main port answers 404, the metrics port nothing else', async () => {
    const main = await fetch(`${h.url}/metrics`);
    expect(main.status).toBe(404);
    await main.body?.cancel();
    const metrics = await fetch(`${h.metricsUrl}/metrics`);
    expect(metrics.status).toBe(200);
    await metrics.body?.cancel();
    for (const path of ['/health/ready', '/v1/events', '/openapi.json', '/docs']) {
      const other = await fetch(`${h.metricsUrl}${path}`);
      expect(other.status, path).toBe(404);
      await other.body?.cancel();
    }
  });
  it('counts a recognised type whose payload the consumer cannot read as invalid-payload, not text or JSON', async () => {
    const unrecognised = async () => {
      const text = await (await fetch(`${h.metricsUrl}/metrics`)).text();
      const line = text
        .split('\n')
        .find((l) => l.startsWith('event_unrecognised_total{') && l.includes('type="com.example.blob"'));
      return Number(line?.slice(line.lastIndexOf(' ') + 1) ?? 0);
    };
    const blob = { 'ce-type': 'com.example.blob' };
    await post('/v1/events', { ...ceHeaders('p-1', T, blob), 'content-type': 'text/plain' }, 'hello');
    await post('/v1/events', ceHeaders('p-2', T, blob), structured({ a: 1 }));
    expect(await unrecognised()).toBe(0);
    await post(
      '/v1/events',
      { ...ceHeaders('p-3', T, blob), 'content-type': 'application/octet-stream' },
      'x',
    );
    expect(await unrecognised()).toBe(1);
  });
  it('exposes the ingest meters with their tags', async () => {
    await post('/v1/events', ceHeaders('m-1', T, { 'ce-type': 'org.other.thing' }), 'x');
    const text = await (await fetch(`${h.metricsUrl}/metrics`)).text();
    const series = (name: string, labels: Record<string, string>, value = /[0-9.e+-]+/) =>
      text
        .split('\n')
        .some(
          (line) =>
            line.startsWith(`${name}{`) &&
            Object.entries(labels).every(([k, v]) => line.includes(`${k}="${v}"`)) &&
            value.test(line.slice(line.lastIndexOf(' ') + 1)),
        );
    expect(
      series('ingest_events_received_total', {
        type: 'com.example.reading',
        mode: 'binary',
        service: 'ingest',
        version: 'test',
      }),
    ).toBe(true);
    expect(series('ingest_events_received_total', { type: 'com.example.reading', mode: 'structured' })).toBe(
      true,
    );
    expect(series('ingest_events_rejected_total', { reason: 'too-large' }, /^[1-9]/)).toBe(true);
    expect(
      series('event_unrecognised_total', { type: 'org.other.thing', reason: 'unknown-type' }, /^1$/),
    ).toBe(true);
    expect(series('ingest_payload_bytes_bucket', { le: '256', mode: 'binary' })).toBe(true);
    expect(series('ingest_batch_events_bucket', { le: '1' })).toBe(true);
    expect(series('ingest_time_skew_bucket', { le: '1', direction: 'past' })).toBe(true);
    expect(
      series('broker_produce_latency_seconds_bucket', { le: '0.001', topic: h.topic, outcome: 'success' }),
    ).toBe(true);
    expect(
      series('http_server_requests_seconds_count', {
        method: 'POST',
        uri: '/v1/events:batchCreate',
        status: '200',
        outcome: 'success',
      }),
    ).toBe(true);
    expect(series('auth_decisions_total', { reason: 'absent', outcome: 'failure' })).toBe(true);
    expect(text).not.toMatch(/uri="\/metrics"|uri="\/health/);
  });
});
