/**
 * The opaque search cursor: a position in the keyset order (occurred_at, event_uid) and a
 * direction; and the live tail's position in ingestion order (ingested_at, event_uid), its SSE id.
 * Both signed with HMAC-SHA256 under APPLICATION_SECRET, tagged so one is never read as the other. A cursor whose signature or shape
 * is wrong is refused before any query, so nothing a client writes in it reaches SQL (and the
 * values are bind parameters anyway).
 *
 * @example
 * const cursors = cursorCodec(secret);
 * const token = cursors.encode({ key, direction: 'older' });
 * cursors.decode(token); // { key, direction: 'older' } or undefined
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import type { EventKey, IngestKey } from '@event-observatory/store';

export type Direction = 'older' | 'newer';

export interface Cursor {
  key: EventKey;
  direction: Direction;
}

/** occurred_at (or ingested_at) as PostgreSQL prints a timestamptz in a UTC session. */
const TIME = /^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}(\.\d{1,6})?\+00$/;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
/** Longest token `encode` can produce, with room; longer input is refused unread. */
const MAX_TOKEN = 200;

export function cursorCodec(secret: string) {
  const sign = (payload: string) => createHmac('sha256', secret).update(payload).digest();
  const seal = (fields: string[]): string => {
    const payload = Buffer.from(JSON.stringify(fields)).toString('base64url');
    return `${payload}.${sign(payload).toString('base64url')}`;
  };
  /** The tag, time and uid of a token `seal` made with this secret, checked; else undefined. */
  const open = (token: string): [string, string, string] | undefined => {
    if (token.length > MAX_TOKEN) return undefined;
    const [payload, signature, extra] = token.split('.');
    if (!payload || !signature || extra !== undefined) return undefined;
    const expected = sign(payload);
    const given = Buffer.from(signature, 'base64url');
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) return undefined;
    let parsed: unknown;
    try {
      parsed = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8'));
    } catch {
      return undefined;
    }
    if (!Array.isArray(parsed) || parsed.length !== 3) return undefined;
    const [tag, time, uid] = parsed as unknown[];
    if (typeof tag !== 'string' || typeof time !== 'string' || typeof uid !== 'string') return undefined;
    return TIME.test(time) && UUID.test(uid) ? [tag, time, uid] : undefined;
  };
  return {
    encode(cursor: Cursor): string {
      return seal([cursor.direction === 'older' ? 'o' : 'n', cursor.key.occurredAt, cursor.key.uid]);
    },
    /** The cursor, or undefined when the token was not made by `encode` with this secret. */
    decode(token: string): Cursor | undefined {
      const fields = open(token);
      if (!fields || (fields[0] !== 'o' && fields[0] !== 'n')) return undefined;
      const [d, occurredAt, uid] = fields;
      return { key: { occurredAt, uid }, direction: d === 'o' ? 'older' : 'newer' };
    },
    /** A live tail's position, as its SSE id. */
    encodeTail(key: IngestKey): string {
      return seal(['t', key.ingestedAt, key.uid]);
    },
    /** The position, or undefined when the token was not made by `encodeTail` with this secret. */
    decodeTail(token: string): IngestKey | undefined {
      const fields = open(token);
      return fields?.[0] === 't' ? { ingestedAt: fields[1], uid: fields[2] } : undefined;
    },
  };
}

export type CursorCodec = ReturnType<typeof cursorCodec>;
