import { describe, expect, it } from 'vitest';
import { CompactedLog, compactionKey } from './compaction.js';

const at = (partition: number, offset: number) => ({ partition, offset: String(offset) });

describe('dead-letter compaction', () => {
  it('keeps the latest record of a key', () => {
    const log = new CompactedLog<string>();
    log.keep('t/0/7', 'first', at(0, 1));
    log.keep('t/0/7', 'redelivered', at(0, 5));
    expect(log.first(10)).toEqual({ items: ['redelivered'], more: false });
  });

  it('drops a key whose latest record is a tombstone', () => {
    const log = new CompactedLog<string>();
    log.keep('t/0/7', 'letter', at(0, 1));
    log.keep('t/0/8', 'other', at(0, 2));
    log.remove('t/0/7');
    log.remove('t/0/9'); // a tombstone of a key never seen is harmless
    expect(log.first(10).items).toEqual(['other']);
  });

  it('lists survivors in (partition, offset) order, offsets compared as numbers', () => {
    const log = new CompactedLog<string>();
    log.keep('c', 'p1@3', at(1, 3));
    log.keep('a', 'p0@10', at(0, 10));
    log.keep('b', 'p0@9', at(0, 9));
    log.keep('d', 'p0@18446744073709551615', { partition: 0, offset: '18446744073709551615' });
    expect(log.first(10).items).toEqual(['p0@9', 'p0@10', 'p0@18446744073709551615', 'p1@3']);
  });

  it('returns the first n survivors and says when more were left out', () => {
    const log = new CompactedLog<number>();
    for (let i = 0; i < 5; i++) log.keep(`k${i}`, i, at(0, i));
    expect(log.first(3)).toEqual({ items: [0, 1, 2], more: true });
    expect(log.first(5)).toEqual({ items: [0, 1, 2, 3, 4], more: false });
  });

  it('counts the bytes of the survivors only', () => {
    const log = new CompactedLog<string>();
    log.keep('a', 'x', at(0, 1), 100);
    log.keep('b', 'y', at(0, 2), 50);
    log.keep('a', 'x2', at(0, 3), 30);
    expect(log.heldBytes).toBe(80);
    log.remove('b');
    expect(log.heldBytes).toBe(30);
  });

  it('keys a record by its key, or by its coordinates when it has none', () => {
    expect(compactionKey(Buffer.from('origin-topic/3/1207'), 0, '5')).toBe('origin-topic/3/1207');
    expect(compactionKey(null, 2, '41')).toBe('2/41');
  });
});
