/**
 * One search page: the rows (keyset page), the capped total, the capped facets and the histogram,
 * read concurrently (four of the eight read connections), with the page links' cursors.
 */

import { EARLIEST_EVENT_TIME_MS } from '@event-observatory/events';
import {
  type DatabasePool,
  type EventPage,
  type EventTotal,
  type Facets,
  facetEvents,
  type Histogram,
  histogramEvents,
  oldestEventTime,
  searchEvents,
  totalEvents,
} from '@event-observatory/store';
import type { CursorCodec } from './cursor.js';
import { type Failure, failureOf } from './failures.js';
import type { ParsedSearch } from './filters.js';
import type { SearchMeters } from './metrics.js';

export interface SearchDeps {
  pool: DatabasePool;
  meters: SearchMeters;
  cursors: CursorCodec;
}

export interface SearchView {
  page: EventPage;
  /** Cursor of the page with newer rows, when there is one. */
  newer: string | undefined;
  /** Cursor of the page with older rows, when there is one. */
  older: string | undefined;
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
 * The histogram over the whole selected range (an unbounded start: the oldest event, but not before
 * the plausible window, whatever older rows the store kept from before the window existed).
 */
async function histogramOf(deps: SearchDeps, parsed: ParsedSearch): Promise<Histogram | undefined> {
  const to = parsed.filter.to ?? parsed.now;
  const oldest = parsed.filter.from ?? (await oldestEventTime(deps.pool));
  const from = oldest && new Date(Math.max(oldest.getTime(), EARLIEST_EVENT_TIME_MS));
  if (!from || from >= to) return undefined;
  return histogramEvents(deps.pool, parsed.filter, {
    from,
    to,
    bucketMs: bucketFor(to.getTime() - from.getTime()),
  });
}

export class BadCursorError extends Error {
  override name = 'BadCursorError';
}

/** Reads one page. Throws `BadCursorError` for a cursor this service did not sign; store errors propagate. */
export async function runSearch(deps: SearchDeps, parsed: ParsedSearch): Promise<SearchView> {
  const { filter, limit, shape } = parsed;
  const cursor = parsed.cursor === undefined ? undefined : deps.cursors.decode(parsed.cursor);
  if (parsed.cursor !== undefined && cursor === undefined) {
    throw new BadCursorError(
      'cursor: not a cursor of this service (changed, truncated or from another deployment)',
    );
  }
  deps.meters.page(cursor ? 'continuation' : 'first');
  const request =
    cursor === undefined
      ? { limit }
      : cursor.direction === 'older'
        ? { limit, after: cursor.key }
        : { limit, before: cursor.key };
  const done = deps.meters.query(shape);
  const [page, total, facets, histogram] = await Promise.all([
    searchEvents(deps.pool, filter, request).then((p) => {
      done(p.rows.length);
      return p;
    }),
    totalEvents(deps.pool, filter).catch(failureOf),
    facetEvents(deps.pool, filter, { more: parsed.more }).catch(failureOf),
    histogramOf(deps, parsed).catch(failureOf),
  ]);
  if ('capped' in facets && facets.capped) deps.meters.facetsCapped();
  const first = page.rows[0];
  const last = page.rows.at(-1);
  const readingNewer = cursor?.direction === 'newer';
  // Reading older rows, `more` says older ones remain; reading newer rows, it says newer ones do.
  const hasNewer = readingNewer ? page.more : cursor !== undefined;
  const hasOlder = readingNewer ? true : page.more;
  return {
    page,
    total: cursor === undefined && !page.more ? exactFromPage(page) : total,
    newer: hasNewer && first ? deps.cursors.encode({ key: first.key, direction: 'newer' }) : undefined,
    older: hasOlder && last ? deps.cursors.encode({ key: last.key, direction: 'older' }) : undefined,
    facets,
    histogram,
  };
}

/** A first page that holds every match is the exact total, whatever an estimate said. */
function exactFromPage(page: EventPage): EventTotal {
  return { total: page.rows.length, capped: false, estimated: false };
}
