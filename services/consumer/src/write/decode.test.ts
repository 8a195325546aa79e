import { type CloudEvent, encodeProducer, PRODUCER_HEADER, toKafkaRecord } from '@event-observatory/events';
import { TAG_SEPARATOR } from '@event-observatory/store';
import { describe, expect, it } from 'vitest';
import { decodeRecord } from './decode.js';
import type { ConsumedRecord } from './record.js';

const event: CloudEvent = {
  specversion: '1.0',
  id: 'e-1',
  source: 'urn:s',
  type: 't.reading',
  time: '2026-11-21T10:00:00Z',
  subject: 'pump',
  datacontenttype: 'application/json',
  extensions: { tags: 'x,y' },
  data: Buffer.from('  {"deviceId":"pump-1","n":12345678901234567890}'),
};

/** The consumer's clock in these tests: the event's day. */
const NOW = Date.parse('2026-11-21T12:00:00Z');

function record(e: CloudEvent, patch: Partial<ConsumedRecord> = {}): ConsumedRecord {
  const r = toKafkaRecord(e);
  return {
    topic: 't',
    partition: 2,
    offset: '17',
    key: Buffer.from(r.key),
    value: r.value,
    headers: r.headers,
    timestamp: '0',
    ...patch,
  };
}

describe('decodeRecord', () => {
  it('maps a binary-mode record to a row, keeping the JSON payload verbatim and deriving device and tags', () => {
    const d = decodeRecord(record(event), NOW);
    expect(d.ok).toBe(true);
    if (!d.ok) return;
    expect(d.row).toMatchObject({
      occurredAt: '2026-11-21T10:00:00Z',
      source: 'urn:s',
      id: 'e-1',
      partitionKey: 'urn:s#pump',
      deviceId: 'pump-1',
      tags: ['x', 'y'].join(TAG_SEPARATOR),
      partition: 2,
      offset: '17',
    });
    expect(d.row.data).toContain('12345678901234567890');
    expect(JSON.parse(d.row.raw)).toMatchObject({ id: 'e-1', tags: 'x,y', data: { deviceId: 'pump-1' } });
  });

  it('reads the observatory-producer header into producer, and null (not poison) without a readable one', () => {
    const who = encodeProducer({ authtype: 'unknown', authid: 'dev' });
    const withHeader = (value: string) => {
      const r = record(event);
      return { ...r, headers: { ...r.headers, [PRODUCER_HEADER]: Buffer.from(value) } };
    };
    expect(decodeRecord(withHeader(who), NOW)).toMatchObject({ ok: true, row: { producer: who } });
    expect(decodeRecord(record(event), NOW)).toMatchObject({ ok: true, row: { producer: null } });
    expect(decodeRecord(withHeader('not json'), NOW)).toMatchObject({ ok: true, row: { producer: null } });
  });

  it('refuses a record without time as invalid-attributes', () => {
    const { time: _omit, ...rest } = event;
    expect(decodeRecord(record(rest as CloudEvent), NOW)).toMatchObject({
      ok: false,
      reason: 'invalid-attributes',
    });
  });

  it('refuses a record without an id header as malformed', () => {
    const r = record(event);
    delete r.headers.ce_id;
    expect(decodeRecord(r, NOW)).toMatchObject({ ok: false, reason: 'malformed' });
  });

  it('refuses a JSON content type whose value is not JSON as invalid-payload', () => {
    expect(decodeRecord(record({ ...event, data: Buffer.from('{oops') }), NOW)).toMatchObject({
      ok: false,
      reason: 'invalid-payload',
    });
  });

  it('refuses a JSON payload PostgreSQL jsonb cannot hold (U+0000) as invalid-payload, before any write', () => {
    const d = decodeRecord(record({ ...event, data: Buffer.from('{"note":"a\\u0000b"}') }), NOW);
    expect(d).toMatchObject({ ok: false, reason: 'invalid-payload' });
    expect(!d.ok && d.detail).toMatch(/U\+0000/);
  });

  it('stores no data column for a binary payload', () => {
    const d = decodeRecord(
      record({ ...event, datacontenttype: 'application/octet-stream', data: Buffer.from([0, 1]) }),
      NOW,
    );
    expect(d.ok && d.row.data).toBeNull();
  });

  it('refuses a time outside the plausible window (1970 to 7 days after the clock) as invalid-attributes', () => {
    for (const time of [
      '0050-01-01T00:00:00Z',
      '1969-12-31T23:59:59Z',
      '2026-11-28T12:00:00.001Z',
      '9999-12-31T00:00:00Z',
    ]) {
      const d = decodeRecord(record({ ...event, time }), NOW);
      expect(d, time).toMatchObject({ ok: false, reason: 'invalid-attributes' });
      expect(!d.ok && d.detail, time).toMatch(/outside the plausible window: (before|after) /);
    }
    for (const time of ['1970-01-01T00:00:00Z', '2026-11-28T12:00:00Z'])
      expect(decodeRecord(record({ ...event, time }), NOW).ok, time).toBe(true);
  });
});
