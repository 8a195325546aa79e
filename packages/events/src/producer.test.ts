import { describe, expect, it } from 'vitest';
import { fromKafkaRecord, toKafkaRecord, toKafkaRecordFrom } from './kafka.js';
import { encodeProducer, PRODUCER_HEADER, producerOf, readProducer, UNAUTHENTICATED } from './producer.js';
import { buildEvent } from './validate.js';

const event = buildEvent({ specversion: '1.0', id: 'e1', source: '/src', type: 't.x', extensions: {} });
const withHeader = (value: string | Buffer | Buffer[] | undefined) => ({
  value: null,
  headers: {
    ce_specversion: '1.0',
    ce_id: 'e1',
    ce_source: '/src',
    ce_type: 't.x',
    [PRODUCER_HEADER]: value,
  },
});

describe('the producer header', () => {
  it('names a service account with its namespace, any other subject as unknown', () => {
    expect(producerOf({ subject: 'system:serviceaccount:payments:exporter', issuer: 'https://k8s' })).toEqual(
      {
        authtype: 'service_account',
        authid: 'system:serviceaccount:payments:exporter',
        issuer: 'https://k8s',
        namespace: 'payments',
      },
    );
    expect(producerOf({ subject: 'dev' })).toEqual({ authtype: 'unknown', authid: 'dev' });
    expect(producerOf({ subject: 'system:serviceaccount:payments' }).authtype).toBe('unknown');
  });

  it('travels as the last header, outside the ce_ attributes, and leaves the event as it was', () => {
    const header = encodeProducer(producerOf({ subject: 'dev', issuer: 'iss' }));
    const record = toKafkaRecordFrom(event, header);
    expect(Object.keys(record.headers).at(-1)).toBe(PRODUCER_HEADER);
    expect(toKafkaRecord(event).headers).not.toHaveProperty(PRODUCER_HEADER);
    expect(fromKafkaRecord(record)).toEqual(event);
    expect(readProducer(record)).toBe(header);
    expect(readProducer(withHeader(Buffer.from(encodeProducer(UNAUTHENTICATED))))).toBe(
      '{"authtype":"unauthenticated"}',
    );
  });

  it('reads a missing or malformed header as null, and keeps only the known members', () => {
    for (const bad of [
      undefined,
      'not json',
      '"text"',
      'null',
      '[]',
      '{}',
      '{"authtype":""}',
      '{"authtype":7}',
      '{"authtype":"user","authid":{"x":1}}',
      [Buffer.from('{"authtype":"user"}'), Buffer.from('{"authtype":"user"}')],
    ]) {
      expect(readProducer(withHeader(bad as string | undefined))).toBeNull();
    }
    expect(readProducer({ value: null })).toBeNull();
    expect(readProducer(withHeader('{"authtype":"user","authid":"ann","extra":"x"}'))).toBe(
      '{"authtype":"user","authid":"ann"}',
    );
  });
});
