/**
 * The time toolbar's links and auto-refresh: move the searched range earlier or later by its own
 * width, zoom out to twice the range around its middle, and how often the page reloads itself
 * (`refresh`). Every link keeps the search's other parameters; each writes an absolute `from`/`to`
 * (a relative range moved off now is no longer "the last …").
 */
import type { ParsedSearch } from './filters.js';

/** The choices of `refresh` (seconds); absent or `off` reloads nothing. */
export const REFRESH = { off: 0, '10s': 10, '30s': 30, '1m': 60, '5m': 300 } as const;
export type RefreshName = keyof typeof REFRESH;

export function isRefresh(raw: string): raw is RefreshName {
  return Object.hasOwn(REFRESH, raw);
}

/** The range the page searched, both ends known (`to` of a range open at the end is the request's now). */
export function searchedRange(parsed: ParsedSearch): { from: Date; to: Date } | undefined {
  const { from } = parsed.filter;
  if (!from) return undefined;
  return { from, to: parsed.filter.to ?? parsed.now };
}

/**
 * Seconds between reloads, or 0: never for a range that ended in the past (its events no longer
 * change), whatever `refresh` says.
 */
export function refreshSeconds(parsed: ParsedSearch): number {
  const seconds = REFRESH[parsed.refresh];
  if (seconds === 0) return 0;
  const to = parsed.range === undefined ? parsed.filter.to : undefined;
  return to !== undefined && to <= parsed.now ? 0 : seconds;
}

export interface TimeSteps {
  /** Absent when the range already starts at the window's start (1970). */
  earlier: URLSearchParams | undefined;
  /** Absent when the range already ends now or later. */
  later: URLSearchParams | undefined;
  zoomOut: URLSearchParams;
}

/** `params` searching `from`..`to` instead of its own time, its page position dropped. */
function withTime(params: URLSearchParams, from: number, to: number): URLSearchParams {
  const next = new URLSearchParams(params);
  for (const name of ['cursor', 'range', 'from', 'to']) next.delete(name);
  next.set('from', new Date(from).toISOString());
  next.set('to', new Date(to).toISOString());
  return next;
}

/**
 * The earlier, later and zoomed-out searches of a bounded range; undefined for all time or a range
 * open at the start. A step never ends after now nor starts before 1970 (the plausible window's
 * start): it is moved inside, keeping its width where it fits.
 */
export function timeSteps(params: URLSearchParams, parsed: ParsedSearch): TimeSteps | undefined {
  const range = searchedRange(parsed);
  if (!range) return undefined;
  const now = parsed.now.getTime();
  const from = range.from.getTime();
  const to = range.to.getTime();
  const width = to - from;
  const place = (start: number, end: number) => {
    const back = Math.min(0, now - end);
    let [s, e] = [start + back, end + back];
    if (s < 0) [s, e] = [0, Math.min(e - s, now)];
    return withTime(params, s, Math.max(e, s + 1));
  };
  return {
    earlier: from > 0 ? place(from - width, from) : undefined,
    later: to < now ? place(from + width, to + width) : undefined,
    zoomOut: place(from - width / 2, to + width / 2),
  };
}
