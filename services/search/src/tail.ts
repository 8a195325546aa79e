/**
 * The live tail: `GET /events/tail` with the search page's filters streams matching events as
 * server-sent events (`event: event`, JSON data). Each stream polls the store every second for rows
 * after the last one sent in keyset order (occurred_at, event_uid), starting at the newest match.
 * So an event stored after a newer one was sent, with an older time, is never sent: the tail can
 * miss late events (the spec's limitation). Each SSE id is a signed cursor, so a reconnecting
 * EventSource (Last-Event-ID) resumes where it stopped.
 */
import { ApiError } from '@event-observatory/service-kit/errors';
import {
  type DatabasePool,
  type EventKey,
  newestEventKey,
  severityName,
  tailEvents,
} from '@event-observatory/store';
import type { Context } from 'hono';
import { streamSSE } from 'hono/streaming';
import type { CursorCodec } from './cursor.js';
import { parseSearch } from './filters.js';
import type { SearchMeters } from './metrics.js';
import { utc } from './views/layout.js';
import { eventHref } from './views/search.js';

export const TAIL_POLL_MS = 1_000;
const TAIL_BATCH = 100;

export interface TailDeps {
  pool: DatabasePool;
  meters: SearchMeters;
  cursors: CursorCodec;
  /** Aborted when the service shuts down: every stream ends. */
  shutdown: AbortSignal;
  pollMs?: number;
}

export function tailHandler(deps: TailDeps) {
  const pollMs = deps.pollMs ?? TAIL_POLL_MS;
  return (c: Context) => {
    const parsed = parseSearch(new URL(c.req.url).searchParams);
    if (parsed.problems.length > 0) {
      throw new ApiError('InvalidArgument', parsed.problems.join('; '), { reason: 'invalid-filter' });
    }
    // A relative range ends now when the stream opens; the tail goes on past that.
    const filter = parsed.range === undefined ? parsed.filter : { ...parsed.filter, to: undefined };
    const resumeFrom = deps.cursors.decode(c.req.header('last-event-id') ?? '')?.key;
    return streamSSE(c, async (stream) => {
      deps.meters.tailOpened();
      const ended = () => stream.aborted || stream.closed || deps.shutdown.aborted;
      try {
        let since: EventKey | undefined = resumeFrom;
        while (!since && !ended()) {
          try {
            since = (await newestEventKey(deps.pool, filter)) ?? {
              occurredAt: '-infinity',
              uid: '00000000-0000-0000-0000-000000000000',
            };
          } catch {
            await stream.sleep(pollMs);
          }
        }
        while (!ended()) {
          const rows = await tailEvents(deps.pool, filter, since, TAIL_BATCH).catch(() => []);
          for (const r of rows) {
            await stream.writeSSE({
              event: 'event',
              id: deps.cursors.encode({ key: r.key, direction: 'older' }),
              data: JSON.stringify({
                href: eventHref(r),
                time: utc(r.occurredAt),
                id: r.id,
                type: r.type,
                source: r.source,
                subject: r.subject,
                severity: r.severityRank === null ? null : (severityName(r.severityRank) ?? null),
              }),
            });
            since = r.key;
          }
          if (rows.length) deps.meters.delivered(rows.length);
          if (rows.length < TAIL_BATCH) await stream.sleep(pollMs);
        }
      } finally {
        deps.meters.tailClosed();
      }
    });
  };
}
