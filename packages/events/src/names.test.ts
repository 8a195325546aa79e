import { describe, expect, it } from 'vitest';
import { eventName, parseEventName, partitionKey } from './names.js';

describe('partition key', () => {
  it('is source#subject, or the source alone without a subject', () => {
    expect(partitionKey({ source: 's', subject: 'x' })).toBe('s#x');
    expect(partitionKey({ source: 's' })).toBe('s');
  });
});

describe('resource name', () => {
  it('percent-encodes the (source, id) pair so it parses back exactly', () => {
    const pair = { source: 'https://ex.com/a,b?c=d#e', id: "it's ~ 100% (ok), café" };
    const name = eventName(pair);
    expect(name).toMatch(/^events\/[A-Za-z0-9\-._~%]+,[A-Za-z0-9\-._~%]+$/);
    expect(parseEventName(name)).toEqual(pair);
  });
  it('refuses names it did not make', () => {
    expect(parseEventName('events/a')).toBeUndefined();
    expect(parseEventName('events/a,b,c')).toBeUndefined();
    expect(parseEventName('events/%C3%28,b')).toBeUndefined();
    expect(parseEventName('things/a,b')).toBeUndefined();
  });
});
