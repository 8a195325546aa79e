/**
 * Property tests of the codecs (hostile input): every valid event survives every
 * encoding (HTTP binary, structured, batch, Kafka binary) unchanged; any header bytes, any body
 * bytes and any JSON document either decode to an event the rules accept or are refused with the
 * codec's own `EventRejection`, never another exception; and an event broken in one rule is
 * refused in every mode.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  BATCH_MEDIA_TYPE,
  decodeBinary,
  decodeHttpEvent,
  decodeJsonEvent,
  decodeStructured,
  STRUCTURED_MEDIA_TYPE,
  splitBatch,
} from './http.js';
import { encodeStructured, fromKafkaRecord, orderedAttributes, toKafkaRecord } from './kafka.js';
import { type CloudEvent, isContextAttribute } from './model.js';
import { EventRejection, REJECTION_REASONS } from './rejection.js';
import { buildEvent, type EventFields, EXTENSION_NAME, isCloudEventsString } from './validate.js';

const RUNS = { numRuns: 300 };

/** Text the rules accept as a CloudEvents String: no controls, no unpaired surrogates. */
const ceString = fc
  .string({ unit: 'grapheme', minLength: 1, maxLength: 40 })
  .filter((s) => s.length > 0 && isCloudEventsString(s));
const uriChar = fc.constantFrom(..."abcXYZ019-._~:/?#[]@!$&'()*+,;=".split(''), '%41', '%c3%a9');
const uriReference = fc.array(uriChar, { minLength: 1, maxLength: 30 }).map((cs) => cs.join(''));
const rfc3339 = fc
  .date({ min: new Date('1970-01-01T00:00:00Z'), max: new Date('2999-12-31T23:59:59Z'), noInvalidDate: true })
  .chain((d) =>
    fc.constantFrom(
      d.toISOString(),
      d.toISOString().replace('Z', '+00:00'),
      `${d.toISOString().slice(0, 19)}Z`,
    ),
  );
const extensionName = fc
  .stringMatching(/^[a-z0-9]{1,20}$/)
  .filter((n) => n !== 'data' && !isContextAttribute(n));
const utf8 = (s: string) => new Uint8Array(Buffer.from(s, 'utf8'));
const bytes = fc.uint8Array({ minLength: 1, maxLength: 200 });

/** Media type and payload that fit together (a JSON type carries JSON, a text type UTF-8). */
const payload: fc.Arbitrary<{ datacontenttype?: string; data?: Uint8Array }> = fc.oneof(
  fc.constant({}),
  fc
    .tuple(
      fc.constantFrom('application/json', 'application/vnd.acme+json; charset=utf-8', undefined),
      fc.json(),
    )
    .map(([ct, json]) => ({ ...(ct ? { datacontenttype: ct } : {}), data: utf8(json) })),
  fc
    .tuple(fc.constantFrom('text/plain', 'text/csv; charset=utf-8', 'application/xml'), ceString)
    .map(([ct, text]) => ({ datacontenttype: ct, data: utf8(text) })),
  bytes.map((data) => ({ datacontenttype: 'application/octet-stream', data })),
);

const validFields: fc.Arbitrary<EventFields> = fc
  .record(
    {
      id: ceString,
      source: uriReference,
      type: ceString,
      time: rfc3339,
      subject: ceString,
      dataschema: uriReference.map((r) => `https:${r}`),
      extensions: fc.dictionary(extensionName, ceString, { maxKeys: 4 }),
      payload,
    },
    { requiredKeys: ['id', 'source', 'type', 'time', 'extensions', 'payload'] },
  )
  .map(({ payload: p, ...f }) => ({ specversion: '1.0', ...f, ...p }));

const validEvent = validFields.map(buildEvent);

/** The event as an HTTP binary-mode request: percent-encoded `ce-*` headers and the payload. */
function binaryRequest(event: CloudEvent): { headers: [string, string][]; body: Uint8Array } {
  const headers: [string, string][] = orderedAttributes(event).map(([name, value]) =>
    name === 'datacontenttype' ? ['content-type', value] : [`ce-${name}`, encodeURIComponent(value)],
  );
  return { headers, body: event.data ?? new Uint8Array() };
}

/** The event with its payload as plain bytes: decoders hand back Buffers or views of the body. */
function comparable(event: CloudEvent): object {
  return event.data === undefined ? event : { ...event, data: [...event.data] };
}

function asBuffers(record: ReturnType<typeof toKafkaRecord>) {
  return {
    key: Buffer.from(record.key),
    value: record.value,
    headers: Object.fromEntries(Object.entries(record.headers).map(([k, v]) => [k, Buffer.from(v)])),
  };
}

/** Runs `decode`; passes when it returns or throws an `EventRejection` with a closed-set reason. */
function decodesOrRejects<T>(decode: () => T): T | EventRejection {
  try {
    return decode();
  } catch (err) {
    expect(err).toBeInstanceOf(EventRejection);
    expect(REJECTION_REASONS).toContain((err as EventRejection).reason);
    return err as EventRejection;
  }
}

/** An accepted event obeys every rule: building it again from its own fields gives it back. */
function expectAcceptable(event: CloudEvent): void {
  const { specversion, id, source, type, time, subject, datacontenttype, dataschema, extensions, data } =
    event;
  const fields: EventFields = { specversion, id, source, type, extensions: { ...extensions } };
  Object.assign(fields, { time, subject, datacontenttype, dataschema, data });
  for (const key of Object.keys(fields) as (keyof EventFields)[]) {
    if (fields[key] === undefined) delete fields[key];
  }
  expect(buildEvent(fields)).toEqual(event);
  for (const name of Object.keys(extensions)) expect(name).toMatch(EXTENSION_NAME);
  expect(id.length).toBeGreaterThan(0);
  expect(isCloudEventsString(id) && isCloudEventsString(type)).toBe(true);
}

describe('every valid event survives every encoding unchanged', () => {
  it('Kafka binary mode: record headers and value decode back to the same event', () => {
    fc.assert(
      fc.property(validEvent, (event) => {
        expect(comparable(fromKafkaRecord(asBuffers(toKafkaRecord(event))))).toEqual(comparable(event));
      }),
      RUNS,
    );
  });

  it('HTTP binary mode: percent-encoded ce-* headers and the raw body decode back to the same event', () => {
    fc.assert(
      fc.property(validEvent, (event) => {
        const { headers, body } = binaryRequest(event);
        expect(comparable(decodeBinary(headers, body))).toEqual(comparable(event));
      }),
      RUNS,
    );
  });

  it('HTTP structured mode: the JSON event format decodes back to the same event', () => {
    fc.assert(
      fc.property(validEvent, (event) => {
        const decoded = decodeStructured(STRUCTURED_MEDIA_TYPE, utf8(encodeStructured(event)));
        expect(comparable(decoded)).toEqual(comparable(event));
      }),
      RUNS,
    );
  });

  it('JSON batch: every element of the array decodes back to its event, in order', () => {
    fc.assert(
      fc.property(fc.array(validEvent, { maxLength: 8 }), (events) => {
        const body = utf8(`[${events.map(encodeStructured).join(',')}]`);
        const decoded = splitBatch(BATCH_MEDIA_TYPE, body).map(decodeJsonEvent);
        expect(decoded.map(comparable)).toEqual(events.map(comparable));
      }),
      { numRuns: 100 },
    );
  });

  it('binary and structured requests of one event give byte-identical Kafka records', () => {
    fc.assert(
      fc.property(validEvent, (event) => {
        const { headers, body } = binaryRequest(event);
        const binary = toKafkaRecord(decodeHttpEvent(headers, body).event);
        const structuredHeaders: [string, string][] = [['content-type', STRUCTURED_MEDIA_TYPE]];
        const structured = toKafkaRecord(
          decodeHttpEvent(structuredHeaders, utf8(encodeStructured(event))).event,
        );
        expect(binary.headers).toEqual(structured.headers);
        expect(binary.key).toBe(structured.key);
        expect(binary.value && Buffer.from(binary.value)).toEqual(
          structured.value && Buffer.from(structured.value),
        );
      }),
      RUNS,
    );
  });
});

/** Header names a client may send: `ce-` ones of any spelling, the content type, anything else. */
const headerName = fc.oneof(
  fc.constantFrom('ce-specversion', 'ce-id', 'ce-source', 'ce-type', 'ce-time', 'CE-Subject', 'content-type'),
  fc.string({ maxLength: 24 }).map((s) => `ce-${s}`),
  fc.string({ maxLength: 24 }),
);
/** Header values as Node hands them over: one character per byte read (Latin-1), `%` sequences. */
const headerValue = fc.oneof(
  fc.string({ unit: fc.integer({ min: 0, max: 255 }).map((c) => String.fromCharCode(c)), maxLength: 40 }),
  fc
    .array(fc.constantFrom('%', '%c3', '%a9', '%zz', '%00', 'a', '1.0', '/', 'application/json'), {
      maxLength: 8,
    })
    .map((parts) => parts.join('')),
  fc.string({ maxLength: 20 }),
);
const anyHeaders = fc.array(fc.tuple(headerName, headerValue), { maxLength: 12 });
const requiredHeaders: [string, string][] = [
  ['ce-specversion', '1.0'],
  ['ce-id', 'x'],
  ['ce-source', '/s'],
  ['ce-type', 't'],
];

describe('any header bytes and any body bytes', () => {
  it('a single-event request decodes to an acceptable event or is refused with a closed-set reason', () => {
    fc.assert(
      fc.property(anyHeaders, fc.boolean(), fc.uint8Array({ maxLength: 64 }), (headers, required, body) => {
        const all = required ? [...requiredHeaders, ...headers] : headers;
        const result = decodesOrRejects(() => decodeHttpEvent(all, body));
        if (!(result instanceof EventRejection)) expectAcceptable(result.event);
      }),
      { numRuns: 1000 },
    );
  });

  it('a Kafka record with any header bytes and any value decodes to an acceptable event or is refused', () => {
    const recordHeaders = fc.dictionary(
      fc.oneof(
        fc.constantFrom('ce_specversion', 'ce_id', 'ce_source', 'ce_type', 'content-type'),
        fc.string(),
      ),
      fc.oneof(
        fc.uint8Array({ maxLength: 24 }).map((b) => Buffer.from(b)),
        fc.string(),
      ),
    );
    fc.assert(
      fc.property(recordHeaders, fc.option(fc.uint8Array({ maxLength: 64 })), (headers, value) => {
        const withRequired = { ce_specversion: '1.0', ce_id: 'i', ce_source: '/s', ce_type: 't', ...headers };
        const result = decodesOrRejects(() =>
          fromKafkaRecord({ headers: withRequired, value: value === null ? null : Buffer.from(value) }),
        );
        if (!(result instanceof EventRejection)) expectAcceptable(result);
      }),
      { numRuns: 1000 },
    );
  });

  it('any bytes as a structured body or a batch body are refused with the codec rejection only', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 128 }), (body) => {
        decodesOrRejects(() => decodeStructured(STRUCTURED_MEDIA_TYPE, body));
        const elements = decodesOrRejects(() => splitBatch(BATCH_MEDIA_TYPE, body));
        if (!(elements instanceof EventRejection))
          for (const e of elements) decodesOrRejects(() => decodeJsonEvent(e));
      }),
      { numRuns: 1000 },
    );
  });
});

describe('any JSON document', () => {
  /** JSON objects that look like events: valid attributes mixed with members of any JSON value. */
  const eventLike = fc
    .tuple(
      validEvent,
      fc.dictionary(
        fc.oneof(fc.constantFrom('id', 'time', 'data', 'data_base64', 'specversion'), fc.string()),
        fc.jsonValue(),
      ),
    )
    .map(([event, noise]) => ({ ...JSON.parse(encodeStructured(event)), ...noise }));

  it('decodes to an acceptable event or is refused with the codec rejection, alone and in a batch', () => {
    fc.assert(
      fc.property(fc.oneof(eventLike, fc.jsonValue()), (doc) => {
        const text = JSON.stringify(doc) ?? 'null';
        const single = decodesOrRejects(() => decodeStructured(STRUCTURED_MEDIA_TYPE, utf8(text)));
        if (!(single instanceof EventRejection)) expectAcceptable(single);
        const elements = decodesOrRejects(() => splitBatch(BATCH_MEDIA_TYPE, utf8(`[${text},${text}]`)));
        if (!(elements instanceof EventRejection)) {
          for (const e of elements) {
            const one = decodesOrRejects(() => decodeJsonEvent(e));
            if (!(one instanceof EventRejection)) expectAcceptable(one);
          }
        }
      }),
      { numRuns: 1000 },
    );
  });
});

/** One rule broken: the attribute to overwrite and the value that breaks it. */
const breakage = fc.constantFrom<[string, string, string]>(
  ['specversion', '0.3', 'invalid-attributes'],
  ['id', '', 'invalid-attributes'],
  ['id', 'a\u0007b', 'invalid-attributes'],
  ['type', '\u0085', 'invalid-attributes'],
  ['source', 'has space', 'invalid-attributes'],
  ['source', '%zz', 'invalid-attributes'],
  ['time', '2026-02-30T00:00:00Z', 'invalid-attributes'],
  ['time', '2026-01-01 00:00:00', 'invalid-attributes'],
  ['dataschema', 'relative/path', 'invalid-attributes'],
  ['subject', '', 'invalid-attributes'],
  ['Upper', 'x', 'invalid-attributes'],
  ['ext_underscore', 'x', 'invalid-attributes'],
  ['toolongextensionname21', 'x', 'invalid-attributes'],
);

describe('an event that breaks one rule', () => {
  it('is refused with the same reason in structured mode, in a batch, in binary mode and from Kafka', () => {
    fc.assert(
      fc.property(validEvent, breakage, (event, [name, value, reason]) => {
        const doc = { ...JSON.parse(encodeStructured(event)), [name]: value };
        const text = utf8(JSON.stringify(doc));
        const refusal = (decode: () => unknown) => {
          const result = decodesOrRejects(decode);
          expect(result).toBeInstanceOf(EventRejection);
          return (result as EventRejection).reason;
        };
        expect(refusal(() => decodeStructured(STRUCTURED_MEDIA_TYPE, text))).toBe(reason);
        expect(
          refusal(() => splitBatch(BATCH_MEDIA_TYPE, utf8(`[${JSON.stringify(doc)}]`)).map(decodeJsonEvent)),
        ).toBe(reason);
        const { headers, body } = binaryRequest(event);
        const broken = headers.filter(([n]) => n !== `ce-${name.toLowerCase()}`);
        broken.push([`ce-${name}`, encodeURIComponent(value)]);
        // A header name is case-insensitive, so `ce-Upper` is the valid extension `upper`.
        if (name !== 'Upper') expect(refusal(() => decodeBinary(broken, body))).toBe(reason);
        const record = asBuffers(toKafkaRecord(event));
        const kafkaName = name === 'Upper' ? 'ce_Upper' : `ce_${name}`;
        const kafkaHeaders = { ...record.headers, [kafkaName]: Buffer.from(value) };
        if (name !== 'Upper')
          expect(refusal(() => fromKafkaRecord({ ...record, headers: kafkaHeaders }))).toBe(reason);
      }),
      RUNS,
    );
  });
});
