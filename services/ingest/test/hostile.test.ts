/**
 * Hostile input a new user tries against the running service: pipelined bytes that are not HTTP, the OpenAPI description as the only guide, and
 * methods the API does not declare. Real service, real broker, real sockets.
 */
import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { ceHeaders, createTopic, type Harness, readRecords, startHarness, uniqueTopic } from './harness.js';

const { bootstrapServers } = inject('kafka');

let h: Harness;
beforeAll(async () => {
  const topic = uniqueTopic('ingest-hostile');
  await createTopic(bootstrapServers, topic);
  h = await startHarness({ bootstrapServers, topic });
});
afterAll(async () => {
  await h?.close();
});

/** Writes `bytes` in one write and collects every response until the service closes the connection. */
function rawExchange(bytes: string): Promise<Array<{ status: number; body: string }>> {
  return new Promise((resolve, reject) => {
    const socket = connect(Number(new URL(h.url).port), '127.0.0.1');
    let text = '';
    socket.on('data', (d) => {
      text += d.toString();
    });
    socket.on('close', () => {
      const out: Array<{ status: number; body: string }> = [];
      while (text.startsWith('HTTP/1.1 ')) {
        const headEnd = text.indexOf('\r\n\r\n');
        const length = Number(/\r\ncontent-length: (\d+)/i.exec(text.slice(0, headEnd))?.[1] ?? 0);
        out.push({ status: Number(text.slice(9, 12)), body: text.slice(headEnd + 4, headEnd + 4 + length) });
        text = text.slice(headEnd + 4 + length);
      }
      resolve(out);
    });
    socket.on('error', reject);
    socket.write(bytes);
  });
}

describe('a valid request followed in the same write by bytes that are not HTTP', () => {
  it('is answered 200 with the published event before the garbage is refused with 400', async () => {
    const time = new Date().toISOString();
    const head = Object.entries({
      authorization: `Bearer ${h.token}`,
      ...ceHeaders('pipelined-1', time),
      'content-type': 'text/plain',
      'content-length': '5',
    })
      .map(([k, v]) => `${k}: ${v}\r\n`)
      .join('');
    const [first, second, ...rest] = await rawExchange(
      `POST /v1/events HTTP/1.1\r\nhost: x\r\n${head}\r\nhello\x00\x01 not http at all\r\n\r\n`,
    );
    expect(first?.status).toBe(200);
    const event = JSON.parse(first!.body);
    expect(event).toMatchObject({ id: 'pipelined-1', time, destination: { topic: h.topic } });
    expect(second?.status).toBe(400);
    expect(JSON.parse(second!.body).error).toMatchObject({ code: 400, status: 'INVALID_ARGUMENT' });
    expect(rest).toEqual([]);
    const records = await readRecords(bootstrapServers, h.topic, (rs) =>
      rs.some((r) => r.headers.ce_id?.toString() === 'pipelined-1'),
    );
    const record = records.find((r) => r.headers.ce_id?.toString() === 'pipelined-1')!;
    expect(record.value?.toString()).toBe('hello');
    expect(Number(record.offset)).toBe(event.destination.offset);
  });
});

interface Parameter {
  name: string;
  in: string;
  required?: boolean;
  schema: { type?: string; format?: string; enum?: string[]; example?: string };
  example?: string;
}

/** A value for a parameter from the document alone: its example, or `now` for a date-time. */
function valueFor(p: Parameter): string {
  if (p.schema.format === 'date-time') return new Date().toISOString();
  const value = p.example ?? p.schema.example ?? p.schema.enum?.[0];
  if (value === undefined) throw new Error(`the document gives no value for ${p.name}`);
  return value;
}

/** The parts of an OpenAPI operation read here. */
interface Operation {
  parameters: Parameter[];
  requestBody: { required?: boolean; content: Record<string, { schema: unknown }> };
  security?: unknown;
}

describe('the OpenAPI description', () => {
  let doc: { paths: Record<string, { post: Operation }> };
  beforeAll(async () => {
    doc = (await (await fetch(`${h.url}/openapi.json`)).json()) as typeof doc;
  });

  it('declares the binary-mode ce-* headers of /v1/events, required ones as this service requires them', () => {
    const headers = doc.paths['/v1/events']!.post.parameters.filter((p) => p.in === 'header');
    const required = headers.filter((p) => p.required).map((p) => p.name);
    expect(required).toEqual(['ce-specversion', 'ce-id', 'ce-source', 'ce-type', 'ce-time']);
    expect(headers.map((p) => p.name)).toEqual(expect.arrayContaining(['ce-subject', 'ce-dataschema']));
    expect(headers.find((p) => p.name === 'ce-specversion')?.schema.enum).toEqual(['1.0']);
  });

  it('declares the same ce-* headers on :validate, none required and none constrained: validate judges any request', async () => {
    const create = doc.paths['/v1/events']!.post.parameters.map((p) => p.name);
    const validate = doc.paths['/v1/events:validate']!.post.parameters;
    expect(validate.map((p) => p.name)).toEqual(create);
    for (const p of validate) {
      expect(p.required, p.name).toBe(false);
      expect(p.schema, p.name).toEqual({ type: 'string' });
    }
    // What the document lets through is answered 200 with the judgement, never a 4xx.
    const res = await fetch(`${h.url}/v1/events:validate`, {
      method: 'POST',
      headers: { authorization: `Bearer ${h.token}`, 'ce-specversion': '0.3', 'ce-subject': '' },
    });
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ valid: false, error: { code: 400 } });
  });

  it("gives no example the service would refuse: a request of the document's own examples is accepted", async () => {
    const headers: Record<string, string> = { authorization: `Bearer ${h.token}` };
    for (const p of doc.paths['/v1/events']!.post.parameters) {
      const example = p.example ?? p.schema.example;
      if (p.required) headers[p.name] = example ?? valueFor(p);
    }
    const res = await fetch(`${h.url}/v1/events`, { method: 'POST', headers });
    expect(res.status, await res.clone().text()).toBe(200);
  });

  it('lets an event have no data, and leaves the judgement of batch elements to the service', () => {
    expect(doc.paths['/v1/events']!.post.requestBody.required).toBe(false);
    expect(doc.paths['/v1/events:validate']!.post.requestBody.required).toBe(false);
    const batch =
      doc.paths['/v1/events:batchCreate']!.post.requestBody.content['application/cloudevents-batch+json'];
    expect(batch?.schema).toEqual({ type: 'array', items: {} });
  });

  it('is enough to build an accepted request: only the required parameters, a bearer token, no body', async () => {
    const operation = doc.paths['/v1/events']!.post;
    expect(operation.security).toEqual([{ bearerAuth: [] }]);
    const headers: Record<string, string> = { authorization: `Bearer ${h.token}` };
    for (const p of operation.parameters) if (p.required) headers[p.name] = valueFor(p);
    const res = await fetch(`${h.url}/v1/events`, { method: 'POST', headers });
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ id: headers['ce-id'], source: headers['ce-source'] });
  });
});

describe('undeclared methods on a declared path', () => {
  for (const [method, path] of [
    ['GET', '/v1/events'],
    ['DELETE', '/v1/events:batchCreate'],
    ['PUT', '/v1/events:validate'],
  ] as const) {
    it(`answers ${method} ${path} with 405 and Allow: POST in the error body shape`, async () => {
      const res = await fetch(`${h.url}${path}`, { method, headers: { authorization: `Bearer ${h.token}` } });
      expect(res.status).toBe(405);
      expect(res.headers.get('allow')).toBe('POST');
      expect(((await res.json()) as { error: unknown }).error).toMatchObject({
        code: 405,
        status: 'UNIMPLEMENTED',
        details: [],
      });
    });
  }

  it('still answers 404 for a path the API does not declare', async () => {
    const res = await fetch(`${h.url}/v1/nothing`, { headers: { authorization: `Bearer ${h.token}` } });
    expect(res.status).toBe(404);
  });
});
