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
  /**
   * The fields of a token `seal` made with this secret: a tag, then times and a uid last, each
   * checked; else undefined.
   */
  const open = (token: string): string[] | undefined => {
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
    if (!Array.isArray(parsed) || parsed.length < 3 || parsed.length > 4) return undefined;
    if (!parsed.every((f): f is string => typeof f === 'string')) return undefined;
    const times = parsed.slice(1, -1);
    return times.every((t) => TIME.test(t)) && UUID.test(parsed.at(-1)!) ? parsed : undefined;
  };
  return {
    encode(cursor: Cursor): string {
      return seal([cursor.direction === 'older' ? 'o' : 'n', cursor.key.occurredAt, cursor.key.uid]);
    },
    /** The cursor, or undefined when the token was not made by `encode` with this secret. */
    decode(token: string): Cursor | undefined {
      const [d, occurredAt, uid, extra] = open(token) ?? [];
      if ((d !== 'o' && d !== 'n') || !occurredAt || !uid || extra !== undefined) return undefined;
      return { key: { occurredAt, uid }, direction: d === 'o' ? 'older' : 'newer' };
    },
    /** A live tail's position, as its SSE id. */
    encodeTail(key: IngestKey): string {
      return seal(['t', key.ingestedAt, key.occurredAt, key.uid]);
    },
    /** The position, or undefined when the token was not made by `encodeTail` with this secret. */
    decodeTail(token: string): IngestKey | undefined {
      const [tag, ingestedAt, occurredAt, uid] = open(token) ?? [];
      return tag === 't' && ingestedAt && occurredAt && uid ? { ingestedAt, occurredAt, uid } : undefined;
    },
  };
}

export type CursorCodec = ReturnType<typeof cursorCodec>;
