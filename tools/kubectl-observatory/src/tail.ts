/**
 * `kubectl observatory tail`: the search service's live tail (`GET /events/tail`, server-sent
 * events) printed one event a line until interrupted or the stream ends.
 */
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

/** Streams `searchUrl`'s tail with the search page's filters `query` (e.g. `q=boiler&severity=error`). */
export async function tail(
  searchUrl: string,
  query: string,
  write: (line: string) => void,
  signal: AbortSignal,
): Promise<void> {
  const url = `${searchUrl}/events/tail${query ? `?${query}` : ''}`;
  const response = await fetch(url, { headers: { accept: 'text/event-stream' }, signal });
  if (!response.ok || !response.body) {
    throw new Error(`GET ${url} answered ${response.status}: ${(await response.text()).slice(0, 300)}`);
  }
  const parser = new SseParser();
  const decoder = new TextDecoder();
  try {
    for await (const chunk of response.body) {
      for (const event of parser.push(decoder.decode(chunk, { stream: true })))
        if (event.event === 'event') write(formatEvent(event.data));
    }
  } catch (error) {
    if (!signal.aborted) throw error;
  }
}
