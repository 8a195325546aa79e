/**
 * One search page: the rows (keyset page), the capped facets and the histogram, read concurrently
 * (three of the eight read connections), the capped total from the facets' count, and the page
 * links' cursors.
 */

import { EARLIEST_EVENT_TIME_MS } from '@event-observatory/events';
import {
  type CellRow,
  DAY_MS,
  type DatabasePool,
  type EventPage,
  type EventRow,
  type EventTotal,
  type Facets,
  facetEvents,
  type Histogram,
  type HistogramRange,
  histogramEvents,
  oldestEventTime,
  searchEventCells,
  TOTAL_CAP,
  totalEvents,
} from '@event-observatory/store';
import { cellRequest } from './columns.js';
import type { CursorCodec, Direction } from './cursor.js';
import { type Failure, failureOf } from './failures.js';
import type { ParsedSearch } from './filters.js';
import type { SearchMeters } from './metrics.js';

export interface SearchDeps {
  pool: DatabasePool;
  meters: SearchMeters;
  cursors: CursorCodec;
}

export interface SearchView {
  /** The rows with the cells of the chosen columns and, for the inline expand, their events. */
  page: EventPage & { rows: CellRow[] };
  /** Cursor of the page before this one in the search's order (newer rows when newest first), when there is one. */
  previous: string | undefined;
  /** Cursor of the page after this one (older rows when newest first), when there is one. */
  next: string | undefined;
  total: EventTotal | Failure;
  facets: Facets | Failure;
  /** Absent when there is no range to draw (an empty store without bounds). */
  histogram: Histogram | Failure | undefined;
}

/** Bucket lengths to choose from: the smallest giving at most `MAX_BUCKETS` bars over the range. */
const BUCKET_LADDER_MS = [10, 30, 60, 300, 900, 1_800, 3_600, 10_800, 21_600, 43_200, 86_400, 604_800].map(
  (s) => s * 1000,
);
export const MAX_BUCKETS = 60;

export function bucketFor(spanMs: number): number {
  return (
    BUCKET_LADDER_MS.find((b) => spanMs / b <= MAX_BUCKETS) ??
    Math.ceil(spanMs / MAX_BUCKETS / 86_400_000) * 86_400_000
  );
}

/**
 * The histogram's range and bars: `from` to `to` in the bars `bucketFor` gives; over an unbounded
 * start (`unbounded`, the oldest event), bars of whole days begin at the midnight (UTC) before it,
 * so that each bar is whole days the daily rollup counts.
 */
export function histogramRange(from: Date, to: Date, unbounded: boolean): HistogramRange {
  const bucketMs = bucketFor(to.getTime() - from.getTime());
  if (!unbounded || bucketMs % DAY_MS !== 0) return { from, to, bucketMs };
  const midnight = new Date(Math.floor(from.getTime() / DAY_MS) * DAY_MS);
  return { from: midnight, to, bucketMs: bucketFor(to.getTime() - midnight.getTime()) };
}

/**
 * The histogram over the whole selected range (an unbounded start: the oldest event, but not before
 * the plausible window, whatever older rows the store kept from before the window existed).
 */
async function histogramOf(deps: SearchDeps, parsed: ParsedSearch): Promise<Histogram | undefined> {
  const to = parsed.filter.to ?? parsed.now;
  const oldest = parsed.filter.from ?? (await oldestEventTime(deps.pool));
  const from = oldest && new Date(Math.max(oldest.getTime(), EARLIEST_EVENT_TIME_MS));
  if (!from || from >= to) return undefined;
  return histogramEvents(
    deps.pool,
    parsed.filter,
    histogramRange(from, to, parsed.filter.from === undefined),
  );
}

export class BadCursorError extends Error {
  override name = 'BadCursorError';
}

/**
 * Reads one page. Throws `BadCursorError` for a cursor this service did not sign, or one of the
 * other order; store errors propagate.
 */
export async function runSearch(deps: SearchDeps, parsed: ParsedSearch): Promise<SearchView> {
  const { filter, limit, shape, sort } = parsed;
  const cursor = parsed.cursor === undefined ? undefined : deps.cursors.decode(parsed.cursor);
  if (parsed.cursor !== undefined && cursor === undefined) {
    throw new BadCursorError(
      'cursor: not a cursor of this service (changed, truncated or from another deployment)',
    );
  }
  if (cursor && cursor.order !== sort) {
    throw new BadCursorError(
      `cursor: belongs to the ${cursor.order}-first order, not sort=${sort}; start again from the first page`,
    );
  }
  deps.meters.page(cursor ? 'continuation' : 'first');
  const request =
    cursor === undefined
      ? { limit, order: sort }
      : cursor.direction === 'older'
        ? { limit, order: sort, after: cursor.key }
        : { limit, order: sort, before: cursor.key };
  const done = deps.meters.query(shape);
  const [page, facets, histogram] = await Promise.all([
    searchEventCells(deps.pool, filter, request, cellRequest(parsed.columns, true)).then((p) => {
      done(p.rows.length);
      return p;
    }),
    facetEvents(deps.pool, filter, { more: parsed.more }).catch(failureOf),
    histogramOf(deps, parsed).catch(failureOf),
  ]);
  if ('capped' in facets && facets.capped) deps.meters.facetsCapped();
  const first = page.rows[0];
  const last = page.rows.at(-1);
  // Forward is the order's own direction: towards older rows when newest first.
  const forward: Direction = sort === 'newest' ? 'older' : 'newer';
  const backward: Direction = forward === 'older' ? 'newer' : 'older';
  // Reading forward, `more` says rows remain ahead; reading backward, it says rows remain behind.
  const readingBack = cursor !== undefined && cursor.direction === backward;
  const hasPrevious = readingBack ? page.more : cursor !== undefined;
  const hasNext = readingBack ? true : page.more;
  const cursorAt = (row: EventRow, direction: Direction) =>
    deps.cursors.encode({ key: row.key, direction, order: sort });
  return {
    page,
    total:
      cursor === undefined && !page.more
        ? exactFromPage(page)
        : 'capped' in facets
          ? totalFromFacets(facets, page)
          : await totalEvents(deps.pool, filter).catch(failureOf),
    previous: hasPrevious && first ? cursorAt(first, backward) : undefined,
    next: hasNext && last ? cursorAt(last, forward) : undefined,
    facets,
    histogram,
  };
}

/**
 * The total the facets counted: they read the newest `TOTAL_CAP + 1` matches (their row cap is the
 * total's cap), so `counted` and `capped` are the capped count itself. A count of its own beside
 * them read the same matches a second time, the page's heaviest read twice; it runs only when the
 * facets failed, in what is left of the page's time. Facets estimated from a sample give an
 * estimate, `10,000+` past the cap as any total; when the sample holds fewer matches than the page
 * shows (a rare match may fall outside it), the page's own count as a lower bound (`N+`).
 */
export function totalFromFacets(facets: Facets, page: EventPage): EventTotal {
  if (facets.samplePercent !== undefined) {
    const seen = page.rows.length + (page.more ? 1 : 0);
    if (facets.counted < seen) return { total: seen, capped: true, estimated: true };
    const capped = facets.counted > TOTAL_CAP;
    return { total: capped ? TOTAL_CAP : facets.counted, capped, estimated: true };
  }
  return { total: facets.counted, capped: facets.capped, estimated: false };
}

/** A first page that holds every match is the exact total, whatever an estimate said. */
function exactFromPage(page: EventPage): EventTotal {
  return { total: page.rows.length, capped: false, estimated: false };
}
