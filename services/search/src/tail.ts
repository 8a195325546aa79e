/**
 * The live tail: `GET /events/tail` with the search page's filters streams matching events as
 * server-sent events (`event: event`, JSON data). Each stream polls the store every second for rows
 * ingested after the last one sent, in ingestion order (ingested_at, then occurred_at and event_uid
 * among the rows of one consumer transaction), starting at the
 * match ingested last. Ingestion order, not event time: one event dated minutes ahead (ingest
 * accepts 24 h of skew) would otherwise hold the position past every event stored after it, and
 * a late event would never be sent. An event whose time is ahead of its ingestion by more than
 * `FUTURE_TOLERANCE_MS` is sent with `future: true` (the page marks it "from the future"). Each
 * SSE id is a signed position, so a reconnecting EventSource (Last-Event-ID) resumes where it
 * stopped; a stream past its maximum age ends, and the browser reconnects after `RECONNECT_MS`
 * (sent as the stream's `retry`).
 */
import { ApiError } from '@event-observatory/service-kit/errors';
import {
  type DatabasePool,
  type IngestKey,
  newestIngestKey,
  type ReadScope,
  scopedPool,
  severityName,
  tailEvents,
} from '@event-observatory/store';
import type { Context } from 'hono';
import { streamSSE } from 'hono/streaming';
import type { CursorCodec } from './cursor.js';
import { parseSearch, searchFilters } from './filters.js';
import type { SearchMeters } from './metrics.js';
import { holderOf, streamSlots } from './stream-slots.js';
import type { SearchEnv } from './viewer.js';
import { utc } from './views/layout.js';
import { eventHref } from './views/results-table.js';

export const TAIL_POLL_MS = 1_000;
const TAIL_BATCH = 100;
/** The browser's wait before it reconnects a stream that ended (Chromium's own default is 3 s). */
export const RECONNECT_MS = 1_000;
/** An event time this far ahead of its ingestion is "from the future" (clocks of hosts differ by less). */
export const FUTURE_TOLERANCE_MS = 1_000;

/** What live tails may take, so that they cannot starve page views of the 8 read connections. */
export interface TailLimits {
  /** Open streams per pod; one more answers 429. */
  perPod: number;
  /**
   * Open streams per viewer (its subject) on this pod; one more answers 429. With login off,
   * everyone is one viewer, so the open viewer's streams count per client address instead.
   */
  perViewer: number;
  /** A stream ends after this long (the browser's EventSource reconnects and resumes). */
  maxAgeMs: number;
  /** Tail queries running at once, all streams together: their share of the read pool. */
  queries: number;
  /**
   * A quiet stream sends a comment line after this long without writing (30 s by default), so
   * proxies (an ingress closes an idle response after 60 s by default) and clients' idle timeouts
   * do not cut it.
   */
  keepAliveMs?: number;
}

export const TAIL_LIMITS: TailLimits = {
  perPod: 50,
  perViewer: 5,
  maxAgeMs: 15 * 60_000,
  queries: 2,
  keepAliveMs: 30_000,
};

/** Runs at most `n` tasks at once; the others wait their turn (first come, first served). */
function limiter(n: number) {
  let running = 0;
  const waiting: (() => void)[] = [];
  return async <T>(task: () => Promise<T>): Promise<T> => {
    if (running >= n) await new Promise<void>((go) => waiting.push(go));
    running++;
    try {
      return await task();
    } finally {
      running--;
      waiting.shift()?.();
    }
  };
}

export interface TailDeps {
  pool: DatabasePool;
  meters: SearchMeters;
  cursors: CursorCodec;
  /** What the request's viewer may see: the stream's reads run under it. */
  scopeOf: (c: Context<SearchEnv>) => ReadScope;
  /** Aborted when the service shuts down: every stream ends. */
  shutdown: AbortSignal;
  pollMs?: number;
  limits?: TailLimits;
}

export function tailHandler(deps: TailDeps) {
  const pollMs = deps.pollMs ?? TAIL_POLL_MS;
  const limits = deps.limits ?? TAIL_LIMITS;
  const query = limiter(limits.queries);
  const slots = streamSlots(limits.perPod, limits.perViewer);
  return (c: Context<SearchEnv>) => {
    const params = new URL(c.req.url).searchParams;
    const parsed = parseSearch(params);
    if (parsed.problems.length > 0) {
      throw new ApiError('InvalidArgument', parsed.problems.join('; '), { reason: 'invalid-filter' });
    }
    // A relative range ends now when the stream opens; the tail goes on past that.
    const filter = parsed.range === undefined ? parsed.filter : { ...parsed.filter, to: undefined };
    const resumeFrom = deps.cursors.decodeTail(c.req.header('last-event-id') ?? '');
    // Its statements are cancelled when the client leaves, the service shuts down or the stream
    // reaches its age: none runs on for a stream that has ended.
    const stop = new AbortController();
    const reads = scopedPool(
      deps.pool,
      deps.scopeOf(c),
      AbortSignal.any([c.req.raw.signal, deps.shutdown, stop.signal]),
    );
    // HEAD gets GET's answer without its body: nobody reads the stream, so it must hold no slot.
    if (c.req.method === 'HEAD') return c.body(null, 200, { 'content-type': 'text/event-stream' });
    // Each event's link keeps the search, as the result table's do (back to it, surrounding events).
    const search = searchFilters(params);
    const holder = holderOf(c);
    if (!slots.take(holder)) {
      throw new ApiError('TooManyRequests', 'too many live tails open; close one and try again', {
        reason: 'tail-limit',
      });
    }
    const openedAt = Date.now();
    return streamSSE(c, async (stream) => {
      deps.meters.tailOpened();
      const ended = () =>
        stream.aborted || stream.closed || deps.shutdown.aborted || Date.now() - openedAt >= limits.maxAgeMs;
      // A client that stops reading blocks a write until its socket gives way; the age limit ends
      // that wait too (aborting fails the pending write), so every slot comes back.
      stream.onAbort(() => stop.abort());
      const watchdog = setTimeout(() => stream.abort(), limits.maxAgeMs);
      const keepAliveMs = limits.keepAliveMs ?? TAIL_LIMITS.keepAliveMs!;
      let wroteAt = Date.now();
      try {
        await stream.write(`retry: ${RECONNECT_MS}\n\n`);
        let since: IngestKey | undefined = resumeFrom;
        while (!since && !ended()) {
          try {
            since = (await query(() => newestIngestKey(reads, filter))) ?? {
              ingestedAt: '-infinity',
              occurredAt: '-infinity',
              uid: '00000000-0000-0000-0000-000000000000',
            };
          } catch {
            await stream.sleep(pollMs);
          }
        }
        while (!ended()) {
          // A stream opened under a login ends with it (a logout, the session's or the token's expiry).
          if (c.var.loginHolds && !(await c.var.loginHolds())) break;
          const rows = await query(() => tailEvents(reads, filter, since, TAIL_BATCH)).catch(() => []);
          for (const r of rows) {
            await stream.writeSSE({
              event: 'event',
              id: deps.cursors.encodeTail(r.ingestKey),
              data: JSON.stringify({
                href: eventHref(r, search),
                time: utc(r.occurredAt),
                id: r.id,
                type: r.type,
                source: r.source,
                subject: r.subject,
                severity: r.severityRank === null ? null : (severityName(r.severityRank) ?? null),
                future: r.occurredAt.getTime() - r.ingestedAt.getTime() > FUTURE_TOLERANCE_MS,
              }),
            });
            since = r.ingestKey;
          }
          if (rows.length) {
            deps.meters.delivered(rows.length);
            wroteAt = Date.now();
          } else if (Date.now() - wroteAt >= keepAliveMs) {
            await stream.write(': keep-alive\n\n');
            wroteAt = Date.now();
          }
          if (rows.length < TAIL_BATCH) await stream.sleep(pollMs);
        }
      } finally {
        clearTimeout(watchdog);
        stop.abort();
        deps.meters.tailClosed();
        slots.give(holder);
      }
    });
  };
}
