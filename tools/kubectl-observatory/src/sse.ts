/**
 * A server-sent events parser for `kubectl observatory tail`: feeds of text in, whole events out
 * (the `event`, `id` and joined `data` lines of each block; comments ignored). The last `retry`
 * the server sent is kept: how long to wait before reconnecting.
 */
export interface ServerSentEvent {
  event: string;
  id?: string;
  data: string;
}

export class SseParser {
  private buffer = '';
  /** Milliseconds the server asked a client to wait before it reconnects (`retry:`), if it did. */
  retryMs: number | undefined;

  /** The events completed by `chunk`. */
  push(chunk: string): ServerSentEvent[] {
    this.buffer += chunk.replace(/\r\n?/g, '\n');
    const events: ServerSentEvent[] = [];
    for (let end = this.buffer.indexOf('\n\n'); end >= 0; end = this.buffer.indexOf('\n\n')) {
      const block = this.buffer.slice(0, end);
      this.buffer = this.buffer.slice(end + 2);
      const event: ServerSentEvent = { event: 'message', data: '' };
      const data: string[] = [];
      for (const line of block.split('\n')) {
        if (line === '' || line.startsWith(':')) continue;
        const colon = line.indexOf(':');
        const field = colon < 0 ? line : line.slice(0, colon);
        const value = colon < 0 ? '' : line.slice(colon + 1).replace(/^ /, '');
        if (field === 'event') event.event = value;
        else if (field === 'id') event.id = value;
        else if (field === 'data') data.push(value);
        else if (field === 'retry' && /^\d+$/.test(value)) this.retryMs = Number(value);
      }
      if (data.length === 0) continue;
      event.data = data.join('\n');
      events.push(event);
    }
    return events;
  }
}
