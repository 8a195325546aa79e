/** A row to insert, as the consumer's decoder makes it, for the store's tests. */
import { type EventInsertRow, TAG_SEPARATOR } from '../src/index.js';

export function row(id: string, overrides: Partial<EventInsertRow> = {}): EventInsertRow {
  const raw = { specversion: '1.0', id, source: '/s', type: 'io.t.a', time: '2026-01-02T03:04:05Z' };
  return {
    occurredAt: raw.time,
    source: raw.source,
    id,
    type: raw.type,
    specversion: '1.0',
    subject: null,
    datacontenttype: 'application/json',
    dataschema: null,
    partitionKey: 'k',
    raw: JSON.stringify(raw),
    data: '{"deviceId":"d-1"}',
    extensions: '{}',
    deviceId: 'd-1',
    tags: ['a', 'b'].join(TAG_SEPARATOR),
    topic: 'events',
    partition: 0,
    offset: '0',
    producer: '{"authtype":"unknown","authid":"dev"}',
    ...overrides,
  };
}
