/**
 * Partition key and resource name.
 *
 * Partition key: `source#subject`; an event without `subject` is keyed by its `source` alone
 * (no trailing `#`), so every subject-less event of one source keeps its order on one partition.
 *
 * Resource name: `events/{event}` where `{event}` is `enc(source) + ',' + enc(id)`; `enc`
 * percent-encodes (UTF-8) every character outside the RFC 3986 unreserved set
 * `A-Z a-z 0-9 - . _ ~`. The comma is always encoded inside either part, so the single unencoded
 * comma separates them and {@link parseEventName} recovers the exact pair.
 */
import type { CloudEvent } from './model.js';

/** The broker key of an event: `source#subject`, or `source` when the event has no subject. */
export function partitionKey(event: Pick<CloudEvent, 'source' | 'subject'>): string {
  return event.subject === undefined ? event.source : `${event.source}#${event.subject}`;
}

/** Percent-encodes everything outside the RFC 3986 unreserved characters. */
export function encodeNamePart(value: string): string {
  return encodeURIComponent(value).replace(
    /[!'()*]/g,
    (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`,
  );
}

/** `events/{enc(source)},{enc(id)}`. */
export function eventName(event: Pick<CloudEvent, 'source' | 'id'>): string {
  return `events/${encodeNamePart(event.source)},${encodeNamePart(event.id)}`;
}

const PART = /^(?:[A-Za-z0-9\-._~]|%[0-9A-Fa-f]{2})+$/;

/** Parses a name made by {@link eventName}; returns `undefined` for anything else. */
export function parseEventName(name: string): { source: string; id: string } | undefined {
  if (!name.startsWith('events/')) return undefined;
  const parts = name.slice('events/'.length).split(',');
  if (parts.length !== 2) return undefined;
  const [s, i] = parts as [string, string];
  if (!PART.test(s) || !PART.test(i)) return undefined;
  try {
    return { source: decodeURIComponent(s), id: decodeURIComponent(i) };
  } catch {
    return undefined; // invalid UTF-8 in the percent-encoding
  }
}
