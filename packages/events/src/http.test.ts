import { describe, expect, it } from 'vitest';
import { decodeHttpEvent, decodeJsonEvent, percentDecodeHeader, selectMode, splitBatch } from './http.js';
import { memberSpan } from './json-scan.js';
import { toKafkaRecord } from './kafka.js';
import { EventRejection } from './rejection.js';

const TIME = '2025-01-02T03:04:05.678Z';

function binaryHeaders(extra: Record<string, string> = {}): [string, string][] {
  return Object.entries({
    'ce-specversion': '1.0',
    'ce-id': 'evt-1',
    'ce-source': 'https://example.com/sensors',
    'ce-type': 'com.example.reading',
    'ce-time': TIME,
    ...extra,
  });
}

function rejection(fn: () => unknown): EventRejection {
  try {
    fn();
  } catch (err) {
    if (err instanceof EventRejection) return err;
    throw err;
  }
  throw new Error('expected a rejection');
}

const bytes = (s: string) => new TextEncoder().encode(s);

describe('mode selection', () => {
  it('treats application/cloudevents with a +json suffix and parameters as structured', () => {
    expect(selectMode('application/cloudevents+json; charset=UTF-8')).toBe('structured');
    expect(selectMode('Application/CloudEvents')).toBe('structured');
  });
  it('recognises the batch media type', () => {
    expect(selectMode('application/cloudevents-batch+json')).toBe('batch');
  });
  it('falls back to binary for any other or absent content-type', () => {
    expect(selectMode('application/json')).toBe('binary');
    expect(selectMode(undefined)).toBe('binary');
  });
  it('refuses the batch media type on the single-event decoder', () => {
    const r = rejection(() =>
      decodeHttpEvent([['content-type', 'application/cloudevents-batch+json']], bytes('[]')),
    );
    expect(r.reason).toBe('malformed');
  });
  it('refuses a structured format other than JSON and a non-UTF-8 charset', () => {
    const doc = bytes('{}');
    expect(
      rejection(() => decodeHttpEvent([['content-type', 'application/cloudevents+xml']], doc)).reason,
    ).toBe('malformed');
    expect(
      rejection(() =>
        decodeHttpEvent([['content-type', 'application/cloudevents+json; charset=latin1']], doc),
      ).reason,
    ).toBe('malformed');
  });
});

describe('binary mode', () => {
  it('reads attributes from ce- headers case-insensitively and keeps the payload bytes', () => {
    const payload = Uint8Array.from([0, 1, 2, 255]);
    const headers = binaryHeaders({ 'CE-Subject': 'dev-7', 'content-type': 'application/octet-stream' }).map(
      ([k, v]) => [k.toUpperCase(), v] as [string, string],
    );
    const { mode, event } = decodeHttpEvent(headers, payload);
    expect(mode).toBe('binary');
    expect(event.subject).toBe('dev-7');
    expect(event.datacontenttype).toBe('application/octet-stream');
    expect(Buffer.from(event.data!)).toEqual(Buffer.from(payload));
  });
  it('requires specversion, id, source and type', () => {
    const r = rejection(() =>
      decodeHttpEvent(
        binaryHeaders().filter(([k]) => k !== 'ce-type'),
        bytes('x'),
      ),
    );
    expect(r.reason).toBe('malformed');
    expect(r.metadata.missing).toBe('type');
  });
  it('percent-decodes header values exactly once', () => {
    expect(percentDecodeHeader('caf%C3%A9%2541', 'ce-x')).toBe('café%41');
  });
  it('rejects percent-encodings that are not valid UTF-8 or not two hex digits', () => {
    expect(rejection(() => percentDecodeHeader('%C3%28', 'ce-x')).reason).toBe('malformed');
    expect(rejection(() => percentDecodeHeader('%G1', 'ce-x')).reason).toBe('malformed');
  });
  it('accepts extension names of [a-z0-9]{1,20} only', () => {
    expect(
      decodeHttpEvent(binaryHeaders({ 'ce-abcdefghij0123456789': 'v' }), bytes('')).event.extensions,
    ).toEqual({
      abcdefghij0123456789: 'v',
    });
    expect(
      rejection(() => decodeHttpEvent(binaryHeaders({ 'ce-abcdefghij01234567890': 'v' }), bytes(''))).reason,
    ).toBe('invalid-attributes');
    expect(rejection(() => decodeHttpEvent(binaryHeaders({ 'ce-my_ext': 'v' }), bytes(''))).reason).toBe(
      'invalid-attributes',
    );
  });
  it('rejects a JSON content-type whose payload is not JSON', () => {
    const r = rejection(() =>
      decodeHttpEvent(binaryHeaders({ 'content-type': 'application/json' }), bytes('{no')),
    );
    expect(r.reason).toBe('invalid-payload');
  });
  it('rejects an unsupported specversion and a non-RFC 3339 time', () => {
    expect(
      rejection(() => decodeHttpEvent(binaryHeaders({ 'ce-specversion': '0.3' }), bytes(''))).reason,
    ).toBe('invalid-attributes');
    expect(
      rejection(() => decodeHttpEvent(binaryHeaders({ 'ce-time': 'yesterday' }), bytes(''))).reason,
    ).toBe('invalid-attributes');
  });
});

describe('structured mode', () => {
  const base = {
    specversion: '1.0',
    id: 'evt-1',
    source: 'https://example.com/sensors',
    type: 'com.example.reading',
    time: TIME,
  };
  it('keeps a JSON data member verbatim, big integers included', () => {
    const text = `{"specversion":"1.0","id":"a","source":"s","type":"t","data":{"n":12345678901234567890}}`;
    expect(new TextDecoder().decode(decodeJsonEvent(bytes(text)).data)).toBe('{"n":12345678901234567890}');
  });
  it('finds the data member by its decoded name (escaped, repeated, or a longer name sharing its prefix)', () => {
    const escaped = `{"specversion":"1.0","id":"a","source":"s","type":"t","d\\u0061ta":[1, 2]}`;
    expect(new TextDecoder().decode(decodeJsonEvent(bytes(escaped)).data)).toBe('[1, 2]');
    const repeated = `{"specversion":"1.0","id":"a","source":"s","type":"t","data":1,"data":{"last":true}}`;
    expect(new TextDecoder().decode(decodeJsonEvent(bytes(repeated)).data)).toBe('{"last":true}');
    const prefixed = `{"specversion":"1.0","id":"a","source":"s","type":"t","dat":"no","data":"yes"}`;
    expect(new TextDecoder().decode(decodeJsonEvent(bytes(prefixed)).data)).toBe('"yes"');
  });
  it('rejects a JSON datacontenttype whose data_base64 is not JSON, as binary mode does', () => {
    const notJson = Buffer.from('not json').toString('base64');
    const structured = { ...base, datacontenttype: 'application/json', data_base64: notJson };
    expect(rejection(() => decodeJsonEvent(bytes(JSON.stringify(structured)))).reason).toBe(
      'invalid-payload',
    );
    const json = Buffer.from('{"a":1}').toString('base64');
    const ok = decodeJsonEvent(bytes(JSON.stringify({ ...structured, data_base64: json })));
    expect(Buffer.from(ok.data!).toString()).toBe('{"a":1}');
  });

  it('decodes data_base64 into bytes and rejects data together with data_base64', () => {
    const ev = decodeJsonEvent(bytes(JSON.stringify({ ...base, data_base64: 'AAEC/w==' })));
    expect([...ev.data!]).toEqual([0, 1, 2, 255]);
    expect(
      rejection(() => decodeJsonEvent(bytes(JSON.stringify({ ...base, data: 1, data_base64: 'AA==' }))))
        .reason,
    ).toBe('invalid-payload');
  });
  it('takes a string data member as text for non-JSON media types and refuses other JSON types', () => {
    const ev = decodeJsonEvent(
      bytes(JSON.stringify({ ...base, datacontenttype: 'text/plain', data: 'héllo' })),
    );
    expect(Buffer.from(ev.data!).toString('utf8')).toBe('héllo');
    const r = rejection(() =>
      decodeJsonEvent(bytes(JSON.stringify({ ...base, datacontenttype: 'text/plain', data: 5 }))),
    );
    expect(r.reason).toBe('invalid-payload');
  });
  it('refuses a payload the store cannot hold (U+0000, an unpaired surrogate) as invalid-payload, in any mode', () => {
    const event = (data: string, datacontenttype = 'application/json') =>
      `{"specversion":"1.0","id":"a","source":"s","type":"t","datacontenttype":"${datacontenttype}","data":${data}}`;
    for (const data of [
      '"\\u0000"',
      '{"k":["x\\u0000"]}',
      '{"\\u0000":1}',
      '"\\ud800"',
      '"\\uDC00x"',
      '"\\ud800\\ud800"',
      '"\\\\\\u0000"',
      '{"a":"\\u0000","a":"x"}',
    ]) {
      const r = rejection(() => decodeJsonEvent(bytes(event(data))));
      expect([r.reason, r.message], data).toEqual([
        'invalid-payload',
        expect.stringMatching(/U\+0000 or an unpaired surrogate/),
      ]);
      expect(
        rejection(() => decodeHttpEvent(binaryHeaders({ 'content-type': 'application/json' }), bytes(data)))
          .reason,
        data,
      ).toBe('invalid-payload');
    }
    // An escaped backslash before u0000, a surrogate pair and U+0001 are held.
    for (const data of [
      '"a\\\\u0000"',
      '"\\ud83d\\ude00"',
      '"\\u0001"',
      '{"n":1}',
      '"\\\\\\\\u0000 \\"\\\\"',
    ]) {
      expect(decodeJsonEvent(bytes(event(data))).data, data).toBeDefined();
    }
    // Text is stored as a JSON string, where a NUL would be \u0000; bytes are stored as base64.
    const text = { ...base, datacontenttype: 'text/plain', data: 'a\u0000b' };
    expect(rejection(() => decodeJsonEvent(bytes(JSON.stringify(text)))).reason).toBe('invalid-payload');
    const binary = { ...base, datacontenttype: 'application/octet-stream', data_base64: 'AAEC' };
    expect([...decodeJsonEvent(bytes(JSON.stringify(binary))).data!]).toEqual([0, 1, 2]);
    // Text that is not UTF-8 is stored as base64 too, NUL and all.
    const notUtf8 = {
      ...base,
      datacontenttype: 'text/plain',
      data_base64: Buffer.from([0x61, 0, 0xff]).toString('base64'),
    };
    expect([...decodeJsonEvent(bytes(JSON.stringify(notUtf8))).data!]).toEqual([0x61, 0, 0xff]);
  });
  it('reports invalid JSON as malformed and wrong attribute types as invalid-attributes', () => {
    expect(rejection(() => decodeJsonEvent(bytes('{"id":'))).reason).toBe('malformed');
    expect(rejection(() => decodeJsonEvent(bytes('[1]'))).reason).toBe('malformed');
    expect(rejection(() => decodeJsonEvent(bytes(JSON.stringify({ ...base, id: 7 })))).reason).toBe(
      'invalid-attributes',
    );
    expect(rejection(() => decodeJsonEvent(bytes(JSON.stringify({ ...base, subject: null })))).reason).toBe(
      'invalid-attributes',
    );
  });
  it('canonicalises boolean and integer extensions to strings', () => {
    const ev = decodeJsonEvent(bytes(JSON.stringify({ ...base, flag: true, count: 42 })));
    expect(ev.extensions).toEqual({ flag: 'true', count: '42' });
  });
  it('gives the same broker record as the binary mode for the same event', () => {
    const structured = decodeHttpEvent(
      [['content-type', 'application/cloudevents+json']],
      bytes(
        JSON.stringify({
          ...base,
          subject: 'dev-7',
          datacontenttype: 'application/json',
          tier: 'gold',
          data: { t: 21.5 },
        }),
      ),
    ).event;
    const binary = decodeHttpEvent(
      binaryHeaders({ 'ce-subject': 'dev-7', 'content-type': 'application/json', 'ce-tier': 'gold' }),
      bytes('{"t":21.5}'),
    ).event;
    expect(toKafkaRecord(structured)).toEqual(toKafkaRecord(binary));
  });
});

describe('batch', () => {
  it('splits a batch into raw element spans and leaves a broken element to itself', () => {
    const parts = splitBatch('application/cloudevents-batch+json', bytes(' [ {"a":"]"} , {"b": } ,3 ] '));
    expect(parts.map((p) => new TextDecoder().decode(p))).toEqual(['{"a":"]"}', '{"b": }', '3']);
  });
  it('finds where strings end at any length, with escaped quotes and backslash runs anywhere in them', () => {
    // Raw JSON string contents: an escaped quote, a backslash, and both in runs.
    const escapes = ['\\"', '\\\\', '\\\\\\"', '\\\\\\\\'];
    const docs: string[] = [];
    for (let at = 0; at < 160; at += 7) {
      for (const escaped of escapes) {
        for (const tail of ['', 'y'.repeat(at % 53)]) {
          const text = `${'x'.repeat(at)}${escaped}${tail}`;
          docs.push(`{"id":"${text}","data":{"v":"${text}","w":[1,"${text}"]},"n":"${text}"}`);
        }
      }
    }
    for (const doc of docs) JSON.parse(doc);
    const parts = splitBatch('application/cloudevents-batch+json', bytes(`[${docs.join(' ,')}]`));
    expect(parts.map((p) => new TextDecoder().decode(p))).toEqual(docs);
    for (const [i, part] of parts.entries()) {
      const data = new TextDecoder().decode(memberSpan(part, 'data'));
      expect(JSON.parse(data)).toEqual(JSON.parse(docs[i]!).data);
    }
    expect(
      rejection(() => splitBatch('application/cloudevents-batch+json', bytes(`["${'x'.repeat(100)}\\"]`)))
        .reason,
    ).toBe('malformed');
  });
  it('refuses a document that is not an array or the wrong media type', () => {
    expect(rejection(() => splitBatch('application/cloudevents-batch+json', bytes('{}'))).reason).toBe(
      'malformed',
    );
    expect(rejection(() => splitBatch('application/cloudevents-batch+json', bytes('[1,'))).reason).toBe(
      'malformed',
    );
    expect(rejection(() => splitBatch('application/json', bytes('[]'))).reason).toBe('malformed');
  });
  it('accepts an empty batch', () => {
    expect(splitBatch('application/cloudevents-batch+json', bytes('[]'))).toEqual([]);
  });
  it('stops one element past its limit, leaving the rest of the body unread', () => {
    const many = bytes(`[${Array.from({ length: 100_000 }, () => '0').join(',')}`);
    // No closing bracket: reading to the end would throw.
    const parts = splitBatch('application/cloudevents-batch+json', many, 256);
    expect(parts).toHaveLength(257);
    expect(splitBatch('application/cloudevents-batch+json', bytes('[1,2,3]'), 3)).toHaveLength(3);
  });
});
