/**
 * One search page: the rows (keyset page), the capped total and the capped facets, read
 * concurrently (three of the eight read connections), with the page links' cursors.
 */
import {
  type DatabasePool,
  type EventPage,
  type EventTotal,
  type Facets,
  facetEvents,
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
  const [page, total, facets] = await Promise.all([
    searchEvents(deps.pool, filter, request).then((p) => {
      done(p.rows.length);
      return p;
    }),
    totalEvents(deps.pool, filter).catch(failureOf),
    facetEvents(deps.pool, filter).catch(failureOf),
  ]);
  if ('sampled' in facets && facets.sampled) deps.meters.facetsCapped();
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
  };
}

/** A first page that holds every match is the exact total, whatever an estimate said. */
function exactFromPage(page: EventPage): EventTotal {
  return { total: page.rows.length, capped: false, estimated: false };
}
