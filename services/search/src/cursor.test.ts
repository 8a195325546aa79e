import { createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { cursorCodec } from './cursor.js';

const SECRET = 'cursor-test-secret-0123456789abcdef';
const key = { occurredAt: '2026-11-24 08:00:00.123456+00', uid: '0f8fad5b-d9cb-469f-a165-70867728950e' };

describe('search cursor', () => {
  const codec = cursorCodec(SECRET);

  it('decodes what it encoded, in both directions and both orders (no order: newest first)', () => {
    for (const direction of ['older', 'newer'] as const) {
      expect(codec.decode(codec.encode({ key, direction }))).toEqual({ key, direction, order: 'newest' });
      for (const order of ['newest', 'oldest'] as const)
        expect(codec.decode(codec.encode({ key, direction, order }))).toEqual({ key, direction, order });
    }
  });

  it('refuses a signed cursor whose tag names no direction and order', () => {
    for (const tag of ['x', 'a', 'oo', 'constructor']) {
      const payload = Buffer.from(JSON.stringify([tag, key.occurredAt, key.uid])).toString('base64url');
      const signature = createHmac('sha256', SECRET).update(payload).digest('base64url');
      expect(codec.decode(`${payload}.${signature}`)).toBeUndefined();
    }
  });

  it('refuses a cursor whose payload was changed, even by one character', () => {
    const token = codec.encode({ key, direction: 'older' });
    const [payload, signature] = token.split('.') as [string, string];
    const changed = Buffer.from(
      Buffer.from(payload, 'base64url').toString().replace('08:00', '09:00'),
    ).toString('base64url');
    expect(codec.decode(`${changed}.${signature}`)).toBeUndefined();
    expect(codec.decode(`${payload}.${signature.slice(0, -2)}AA`)).toBeUndefined();
    expect(codec.decode(`${payload}`)).toBeUndefined();
    expect(codec.decode(`${token}.extra`)).toBeUndefined();
  });

  it('refuses a cursor signed with another secret', () => {
    const other = cursorCodec('another-secret-0123456789abcdefghij');
    expect(codec.decode(other.encode({ key, direction: 'older' }))).toBeUndefined();
  });

  it('refuses a correctly signed payload whose values are not a time and a uuid (SQL never sees them)', () => {
    const payload = Buffer.from(
      JSON.stringify(['o', "2026-01-01'; DROP TABLE events.cloud_event; --", key.uid]),
    ).toString('base64url');
    const signature = createHmac('sha256', SECRET).update(payload).digest('base64url');
    expect(codec.decode(`${payload}.${signature}`)).toBeUndefined();
  });

  it('refuses an oversized token without verifying it', () => {
    expect(codec.decode('a'.repeat(10_000))).toBeUndefined();
  });

  it('keeps tail positions and search cursors apart: neither is read as the other', () => {
    const position = { ingestedAt: key.occurredAt, occurredAt: key.occurredAt, uid: key.uid };
    const tail = codec.encodeTail(position);
    expect(codec.decodeTail(tail)).toEqual(position);
    expect(codec.decode(tail)).toBeUndefined();
    expect(codec.decodeTail(codec.encode({ key, direction: 'older' }))).toBeUndefined();
  });
});
