/**
 * The surrounding events of one event (`GET /events/{uid}/surrounding`): the events just before
 * and after it in time under the filters of the search it was opened from, that search's time
 * range left out (the neighbourhood is the event's own time). Each side is read from the event's
 * position in the keyset order (occurred_at, uid) with a LIMIT, never an OFFSET: `older` and
 * `newer` rows, which the page's "load more" links raise by `n`, at most `MAX_SIDE` each.
 *
 * @example
 * const around = parseSurrounding(new URLSearchParams('n=10&type=com.example.order'));
 * if (!('problems' in around)) await readSurrounding(pool, uid, t, around);
 */
import {
  type DatabasePool,
  type EventFilter,
  type EventRow,
  getEvent,
  type StoredEvent,
  searchEvents,
} from '@event-observatory/store';
import { parseSearch, searchFilters } from './filters.js';

export const DEFAULT_STEP = 10;
const MAX_STEP = 50;
/** Rows on one side at most: beyond, the search page (with a time range) is the tool. */
export const MAX_SIDE = 200;

export interface SurroundingRequest {
  /** Rows each "load more" adds. */
  n: number;
  older: number;
  newer: number;
  /** The search's filters as its URL had them (links carry them on). */
  search: URLSearchParams;
  filter: EventFilter;
}

export interface Surrounding {
  anchor: StoredEvent;
  /** Oldest first, all older than the anchor. */
  older: EventRow[];
  /** Oldest first, all newer than the anchor. */
  newer: EventRow[];
  moreOlder: boolean;
  moreNewer: boolean;
}

function count(params: URLSearchParams, name: string, fallback: number, max: number, problems: string[]) {
  const raw = params.get(name)?.trim();
  if (raw === undefined || raw === '') return fallback;
  const n = /^\d{1,4}$/.test(raw) ? Number(raw) : Number.NaN;
  if (n >= 1 && n <= max) return n;
  problems.push(`${name}: expected a whole number from 1 to ${max}`);
  return fallback;
}

/** The request in the URL, or one problem per parameter that cannot be used. */
export function parseSurrounding(params: URLSearchParams): SurroundingRequest | { problems: string[] } {
  const problems: string[] = [];
  const n = count(params, 'n', DEFAULT_STEP, MAX_STEP, problems);
  const older = count(params, 'older', n, MAX_SIDE, problems);
  const newer = count(params, 'newer', n, MAX_SIDE, problems);
  const search = searchFilters(params);
  const parsed = parseSearch(search);
  problems.push(...parsed.problems);
  if (problems.length) return { problems };
  const { from: _from, to: _to, ...filter } = parsed.filter;
  return { n, older, newer, search, filter };
}

/** The anchor and its neighbours under the filter; undefined when the anchor is not there (or not the viewer's). */
export async function readSurrounding(
  pool: DatabasePool,
  uid: string,
  t: string | undefined,
  req: SurroundingRequest,
): Promise<Surrounding | undefined> {
  const anchor = await getEvent(pool, uid, t);
  if (!anchor) return undefined;
  const older = await searchEvents(pool, req.filter, { limit: req.older, after: anchor.key });
  const newer = await searchEvents(pool, req.filter, { limit: req.newer, before: anchor.key });
  return {
    anchor,
    older: older.rows.reverse(),
    newer: newer.rows.reverse(),
    moreOlder: older.more,
    moreNewer: newer.more,
  };
}
