/**
 * The opaque search cursor: a position in the keyset order (occurred_at, event_uid), a direction
 * and the order of the page it came from (newest or oldest first: a cursor of one order is refused
 * in the other); and the live tail's position in ingestion order (ingested_at, event_uid), its SSE id.
 * Both signed with HMAC-SHA256 under APPLICATION_SECRET, tagged so one is never read as the other. A cursor whose signature or shape
 * is wrong is refused before any query, so nothing a client writes in it reaches SQL (and the
 * values are bind parameters anyway).
 *
 * @example
 * const cursors = cursorCodec(secret);
 * const token = cursors.encode({ key, direction: 'older' });
 * cursors.decode(token); // { key, direction: 'older', order: 'newest' } or undefined
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import type { EventKey, EventOrder, IngestKey } from '@event-observatory/store';

export type Direction = 'older' | 'newer';

export interface Cursor {
  key: EventKey;
  direction: Direction;
  /** The order of the page it was made on; absent: newest first. */
  order?: EventOrder;
}

/** The tag of a cursor: `o`/`n` (its direction) alone in the newest order, so links made before the order existed stay valid. */
const TAGS: Record<string, { direction: Direction; order: EventOrder }> = {
  o: { direction: 'older', order: 'newest' },
  n: { direction: 'newer', order: 'newest' },
  oa: { direction: 'older', order: 'oldest' },
  na: { direction: 'newer', order: 'oldest' },
};

function tagOf(cursor: Cursor): string {
  return `${cursor.direction === 'older' ? 'o' : 'n'}${cursor.order === 'oldest' ? 'a' : ''}`;
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
      return seal([tagOf(cursor), cursor.key.occurredAt, cursor.key.uid]);
    },
    /** The cursor (with its order), or undefined when the token was not made by `encode` with this secret. */
    decode(token: string): Required<Cursor> | undefined {
      const [tag, occurredAt, uid, extra] = open(token) ?? [];
      const read = tag !== undefined && Object.hasOwn(TAGS, tag) ? TAGS[tag] : undefined;
      if (!read || !occurredAt || !uid || extra !== undefined) return undefined;
      return { key: { occurredAt, uid }, ...read };
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
