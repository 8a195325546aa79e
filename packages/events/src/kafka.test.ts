import { describe, expect, it } from 'vitest';
import { decodeJsonEvent } from './http.js';
import {
  decodeKafkaRecord,
  encodeStructured,
  encodeStructuredWithData,
  fromKafkaRecord,
  toKafkaRecord,
  toStructuredJson,
} from './kafka.js';
import { buildEvent } from './validate.js';

const base = { specversion: '1.0', id: 'e1', source: '/src', type: 't.x', time: '2025-01-01T00:00:00Z' };

describe('Kafka binary mode', () => {
  it('writes ce_ headers in a fixed order, content-type, the partition key and the payload', () => {
    const ev = buildEvent({
      ...base,
      subject: 'sub',
      datacontenttype: 'application/octet-stream',
      extensions: { zeta: '1', alpha: '2' },
      data: Uint8Array.from([1, 2, 3]),
    });
    const rec = toKafkaRecord(ev);
    expect(Object.keys(rec.headers)).toEqual([
      'ce_specversion',
      'ce_id',
      'ce_source',
      'ce_type',
      'ce_time',
      'ce_subject',
      'content-type',
      'ce_alpha',
      'ce_zeta',
    ]);
    expect(rec.key).toBe('/src#sub');
    expect([...rec.value!]).toEqual([1, 2, 3]);
  });
  it('round-trips a record through the decoder', () => {
    const ev = buildEvent({ ...base, extensions: { ext: 'v' }, data: Uint8Array.from([9]) });
    const rec = toKafkaRecord(ev);
    const headers = Object.fromEntries(Object.entries(rec.headers).map(([k, v]) => [k, Buffer.from(v)]));
    const back = fromKafkaRecord({ key: Buffer.from(rec.key), value: rec.value, headers });
    expect(back).toEqual({ ...ev, data: Buffer.from([9]) });
  });
  it('hands out the JSON payload it parsed to check it, and only for a JSON content type', () => {
    const json = toKafkaRecord(
      buildEvent({
        ...base,
        extensions: {},
        datacontenttype: 'application/json',
        data: Buffer.from(' {"a": [1, 2]} '),
      }),
    );
    const decoded = decodeKafkaRecord({
      key: Buffer.from(json.key),
      value: json.value,
      headers: json.headers,
    });
    expect(decoded.json).toEqual({ text: ' {"a": [1, 2]} ', value: { a: [1, 2] } });
    expect(decoded.event).toEqual(fromKafkaRecord({ key: null, value: json.value, headers: json.headers }));
    const text = toKafkaRecord(
      buildEvent({ ...base, extensions: {}, datacontenttype: 'text/plain', data: Buffer.from('hi') }),
    );
    expect(decodeKafkaRecord({ key: null, value: text.value, headers: text.headers }).json).toBeUndefined();
  });
  it('renders the same structured document from an already rendered payload', () => {
    const ev = buildEvent({
      ...base,
      extensions: {},
      datacontenttype: 'application/json',
      data: Buffer.from('{"big":1e400}'),
    });
    expect(encodeStructuredWithData(ev, '{"big":1e400}')).toBe(encodeStructured(ev));
  });
  it('classifies broken records with the closed reasons', () => {
    expect(() => fromKafkaRecord({ value: null, headers: { ce_id: 'x' } })).toThrow(/missing/);
    expect(() =>
      fromKafkaRecord({
        value: Buffer.from('nope'),
        headers: { ...headersOf(base), 'content-type': 'application/json' },
      }),
    ).toThrow(expect.objectContaining({ reason: 'invalid-payload' }));
  });
  it('gives no value for an event without data', () => {
    expect(toKafkaRecord(buildEvent({ ...base, extensions: {} })).value).toBeNull();
  });
});

function headersOf(o: Record<string, string>): Record<string, Buffer> {
  return Object.fromEntries(Object.entries(o).map(([k, v]) => [`ce_${k}`, Buffer.from(v)]));
}

describe('structured JSON rendering', () => {
  it('renders JSON payloads as data, verbatim', () => {
    const ev = decodeJsonEvent(
      Buffer.from(JSON.stringify(base).replace(/}$/, ',"data":{"big":123456789012345678901}}')),
    );
    expect(encodeStructured(ev)).toContain('"data":{"big":123456789012345678901}');
  });
  it('renders text payloads as a data string and binary payloads as data_base64', () => {
    const text = buildEvent({
      ...base,
      datacontenttype: 'text/plain',
      extensions: {},
      data: Buffer.from('hi'),
    });
    expect(toStructuredJson(text).data).toBe('hi');
    const bin = buildEvent({
      ...base,
      datacontenttype: 'image/png',
      extensions: {},
      data: Uint8Array.from([0, 255]),
    });
    expect(toStructuredJson(bin).data_base64).toBe('AP8=');
    const unknown = buildEvent({ ...base, extensions: {}, data: Uint8Array.from([0xff]) });
    expect(toStructuredJson(unknown).data_base64).toBe('/w==');
  });
  it('re-decodes its own rendering to the same event', () => {
    const bin = buildEvent({
      ...base,
      datacontenttype: 'image/png',
      extensions: { e: 'x' },
      data: Uint8Array.from([0, 255]),
    });
    expect(toKafkaRecord(decodeJsonEvent(Buffer.from(encodeStructured(bin))))).toEqual(toKafkaRecord(bin));
  });
});
