/** @jsxRuntime automatic @jsxImportSource hono/jsx */
/**
 * `GET /events/{uid}/surrounding`: the event among its neighbours in time, oldest first, under the
 * filters of the search it came from; "load more" links on both sides are plain links (no script).
 */
import type { EventRow } from '@event-observatory/store';
import { MAX_SIDE, type Surrounding, type SurroundingRequest } from '../surrounding.js';
import { Layout } from './layout.js';
import { EventTable, eventHref } from './results-table.js';
import { searchHref } from './search.js';

const TIME_PARAMS = new Set(['range', 'from', 'to']);

/** This page with other row counts, scrolled to the row `edge`. */
function surroundingHref(
  s: Surrounding,
  req: SurroundingRequest,
  older: number,
  newer: number,
  edge: EventRow,
) {
  const query = new URLSearchParams([
    ['t', s.anchor.key.occurredAt],
    ['n', String(req.n)],
    ['older', String(older)],
    ['newer', String(newer)],
    ...req.search,
  ]);
  return `/events/${s.anchor.key.uid}/surrounding?${query}#e-${edge.key.uid}`;
}

/** The "load more" link of one side, or why there is none. */
function More(props: { side: 'earlier' | 'later'; view: Surrounding; request: SurroundingRequest }) {
  const { side, view, request: req } = props;
  const earlier = side === 'earlier';
  const shown = earlier ? req.older : req.newer;
  if (!(earlier ? view.moreOlder : view.moreNewer)) return <p class="hint">No {side} events match.</p>;
  if (shown >= MAX_SIDE)
    return (
      <p class="hint">
        At most {MAX_SIDE} {side} events are shown here; search with a time range for more.
      </p>
    );
  const grown = Math.min(shown + req.n, MAX_SIDE);
  // The fragment keeps the row that was at this edge in view.
  const edge = (earlier ? view.older[0] : view.newer.at(-1)) ?? view.anchor;
  const href = earlier
    ? surroundingHref(view, req, grown, req.newer, edge)
    : surroundingHref(view, req, req.older, grown, edge);
  return (
    <p>
      <a href={href} rel={earlier ? 'prev' : 'next'}>
        Load more {side} events
      </a>
    </p>
  );
}

export function SurroundingPage(props: { view: Surrounding; request: SurroundingRequest }) {
  const { view, request: req } = props;
  const a = view.anchor;
  const filtered = [...req.search.keys()].some((k) => !TIME_PARAMS.has(k));
  return (
    <Layout title={`Around event ${a.type}`} current="none">
      <p>
        <a href={eventHref(a, req.search)}>← Back to the event</a> ·{' '}
        <a href={searchHref(req.search)}>Back to search</a>
      </p>
      <h1>Events around {a.type}</h1>
      <p>
        {filtered
          ? 'Under the filters of the search you came from (without its time range), oldest first.'
          : 'All events, oldest first.'}{' '}
        The event you opened is marked “This event”.
      </p>
      <More side="earlier" view={view} request={req} />
      <EventTable
        rows={[...view.older, a, ...view.newer]}
        caption={`${view.older.length} earlier and ${view.newer.length} later events; times in UTC.`}
        search={req.search}
        anchor={a.key.uid}
      />
      <More side="later" view={view} request={req} />
    </Layout>
  );
}
