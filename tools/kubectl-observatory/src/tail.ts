/**
 * `kubectl observatory tail`: the search service's live tail (`GET /events/tail`, server-sent
 * events) printed one event a line until interrupted. The server ends every stream after a while
 * (15 minutes, or when its pod stops) and expects its clients back: the tail reconnects after the
 * `retry` it was given, with the last event's id as `Last-Event-ID`, so no event is lost or
 * printed twice. A failed connection, a 429 or a 5xx is tried again after a growing pause (up to
 * 30 s, said on stderr); a refusal (400, 401, 403, 404) ends it. The server also ends a stream when
 * its token expires: the token is read again for each connection.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { SseParser } from './sse.js';

interface TailedEvent {
  time: string;
  severity: string | null;
  type: string;
  source: string;
  subject: string | null;
}

export function formatEvent(data: string): string {
  const e = JSON.parse(data) as TailedEvent;
  return [e.time, (e.severity ?? '-').padEnd(7), e.type, e.source, e.subject ?? ''].join('  ').trimEnd();
}

export interface TailOptions {
  searchUrl: string;
  /** The search page's filters, e.g. `q=boiler&severity=error`. */
  query: string;
  /**
   * The bearer token of each connection (the identity provider's, or a service-account token), asked
   * again before every one: a token file rotated meanwhile (a projected service-account token)
   * carries the tail past the old token's expiry, at which the server ends the stream. Never printed.
   */
  token?: () => string | undefined;
  write: (line: string) => void;
  /** Where a failed connection is reported before the next try. */
  warn: (line: string) => void;
  signal: AbortSignal;
  /** The pause before the n-th try in a row after failures (tests shorten it). */
  backoffMs?: (failures: number) => number;
}

/** Answers that trying again would not change. */
const FINAL = new Set([400, 401, 403, 404]);
const RECONNECT_MS = 1000;
const backoff = (failures: number) => Math.min(30_000, 1000 * 2 ** (failures - 1));

class Refused extends Error {}

export async function tail(o: TailOptions): Promise<void> {
  const url = `${o.searchUrl}/events/tail${o.query ? `?${o.query}` : ''}`;
  let lastId: string | undefined;
  let retryMs = RECONNECT_MS;
  let failures = 0;
  while (!o.signal.aborted) {
    const headers: Record<string, string> = { accept: 'text/event-stream' };
    const token = o.token?.();
    if (token) headers.authorization = `Bearer ${token}`;
    if (lastId) headers['last-event-id'] = lastId;
    // One parser a connection: an event cut off by a dropped connection is sent again after it.
    const parser = new SseParser();
    try {
      const response = await fetch(url, { headers, signal: o.signal });
      if (!response.ok || !response.body) {
        const error = `GET ${url} answered ${response.status}: ${(await response.text()).slice(0, 300)}`;
        throw FINAL.has(response.status) ? new Refused(error) : new Error(error);
      }
      failures = 0;
      const decoder = new TextDecoder();
      for await (const chunk of response.body) {
        for (const event of parser.push(decoder.decode(chunk, { stream: true }))) {
          if (event.event === 'event') o.write(formatEvent(event.data));
          if (event.id) lastId = event.id;
        }
      }
      retryMs = parser.retryMs ?? retryMs;
      await sleep(retryMs, undefined, { signal: o.signal });
    } catch (error) {
      if (o.signal.aborted) return;
      if (error instanceof Refused) throw error;
      failures++;
      const pause = (o.backoffMs ?? backoff)(failures);
      o.warn(`kubectl observatory: tail: ${(error as Error).message}; trying again in ${pause} ms`);
      await sleep(pause, undefined, { signal: o.signal }).catch(() => {});
    }
  }
}
