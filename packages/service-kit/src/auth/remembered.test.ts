import { describe, expect, it } from 'vitest';
import { Remembered } from './remembered.js';

describe('Remembered', () => {
  it('returns a value while it holds and forgets it once it does not', () => {
    const cache = new Remembered<{ expiresAt: number }>(4);
    cache.set('a', { expiresAt: 10 });
    expect(cache.get('a', (v) => v.expiresAt > 5)).toEqual({ expiresAt: 10 });
    expect(cache.get('a', (v) => v.expiresAt > 20)).toBeUndefined();
    // Forgotten: even a check that would pass finds nothing now.
    expect(cache.get('a', () => true)).toBeUndefined();
  });

  it('drops the least recently used first when full', () => {
    const cache = new Remembered<number>(2);
    cache.set('a', 1);
    cache.set('b', 2);
    expect(cache.get('a', () => true)).toBe(1); // a is now the most recent
    cache.set('c', 3);
    expect(cache.get('b', () => true)).toBeUndefined();
    expect(cache.get('a', () => true)).toBe(1);
    expect(cache.get('c', () => true)).toBe(3);
  });

  it('remembers nothing with size 0', () => {
    const cache = new Remembered<number>(0);
    cache.set('a', 1);
    expect(cache.get('a', () => true)).toBeUndefined();
  });
});
