import { EVENT_TOPIC } from '@event-observatory/broker';
import { describe, expect, it } from 'vitest';
import type { ConsumedRecord } from '../write/record.js';
import { buildDeadLetter, DEAD_LETTER_TYPE, originalMessage, parseDeadLetter } from './dead-letter.js';

const record: ConsumedRecord = {
  topic: EVENT_TOPIC,
  partition: 4,
  offset: '1207',
  key: Buffer.from('urn:s#sub'),
  value: Buffer.from([0, 255, 1, 2]),
  headers: {
    ce_id: Buffer.from('1'),
    traceparent: Buffer.from('00-abc-def-01'),
    multi: [Buffer.from('a'), Buffer.from('b')],
  },
  timestamp: '1763769600000',
};

describe('dead letters', () => {
  it('are structured CloudEvents keyed by the origin coordinates with a closed-set reason', () => {
    const { letter, message } = buildDeadLetter(record, 'unpersistable', 'SQLSTATE 23514', 'g', new Date(0));
    expect(message.key).toBe(`${EVENT_TOPIC}/4/1207`);
    expect(message.headers).toEqual({ 'content-type': 'application/cloudevents+json' });
    expect(letter).toMatchObject({
      specversion: '1.0',
      id: `${EVENT_TOPIC}/4/1207`,
      type: DEAD_LETTER_TYPE,
      reason: 'unpersistable',
      data: {
        origin: { topic: EVENT_TOPIC, partition: 4, offset: '1207' },
        detail: 'SQLSTATE 23514',
      },
    });
  });

  it('give back the original key, value, headers and timestamp byte for byte', () => {
    const { message } = buildDeadLetter(record, 'malformed', 'x', 'g', new Date(0));
    const parsed = parseDeadLetter(Buffer.from(message.value as string));
    expect(parsed).toBeDefined();
    const original = originalMessage(parsed!);
    expect(original.key).toEqual(record.key);
    expect(original.value).toEqual(record.value);
    expect(original.headers).toEqual(record.headers);
    expect(original.timestamp).toBe(record.timestamp);
  });

  it('ignore values that are not dead letters', () => {
    expect(parseDeadLetter(Buffer.from('{"type":"other"}'))).toBeUndefined();
    expect(parseDeadLetter(Buffer.from('not json'))).toBeUndefined();
    expect(parseDeadLetter(null)).toBeUndefined();
  });
});
