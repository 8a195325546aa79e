/** @jsxRuntime automatic @jsxImportSource hono/jsx */
/** `GET /saved`: the viewer's saved searches, each a link to its search, a rename form and a delete button. */
import { SAVED_SEARCH_LIMITS, type SavedSearch } from '@event-observatory/store';
import { disabledFilters } from '../filter-pills.js';
import { DEFAULT_RANGE, isRange, RANGES } from '../filters.js';
import { writeQueryBar } from '../query-bar.js';
import { Layout, utc } from './layout.js';
import { FormToken } from './save-search.js';
import { searchHref } from './search.js';

/** A saved search in one line: its filters as the query bar writes them, its time, what is switched off. */
function summary(params: URLSearchParams): string {
  const from = params.get('from');
  const to = params.get('to');
  const range = params.get('range') ?? DEFAULT_RANGE;
  const time =
    from !== null || to !== null
      ? `${from ?? 'the start'} to ${to ?? 'now'}`
      : isRange(range)
        ? RANGES[range].label.toLowerCase()
        : range;
  const off = disabledFilters(params).length;
  return [writeQueryBar(params) || 'no filters', time, ...(off > 0 ? [`${off} switched off`] : [])].join(
    ' · ',
  );
}

export function SavedPage(props: { searches: SavedSearch[] }) {
  const { perViewer } = SAVED_SEARCH_LIMITS;
  return (
    <Layout title="Saved searches" current="saved">
      <h1>Saved searches</h1>
      <p class="hint">
        {props.searches.length} of at most {perViewer}. Each link opens the search with its filters; shared,
        it shows whoever opens it the events they may see. Save a search from the search page.
      </p>
      {props.searches.length === 0 ? (
        <p>
          No saved searches yet. <a href="/events">Search events</a>
        </p>
      ) : (
        <ul class="saved">
          {props.searches.map((s) => {
            const params = new URLSearchParams(s.params);
            return (
              <li>
                <a href={searchHref(params)} class="wrap">
                  {s.name}
                </a>{' '}
                <span class="hint wrap">{summary(params)}</span>{' '}
                <span class="hint">saved {utc(s.createdAt, false)} UTC</span>
                <form method="post" action={`/saved/${s.id}/rename`} class="rename">
                  <FormToken />
                  <input
                    name="name"
                    type="text"
                    value={s.name}
                    required
                    maxlength={SAVED_SEARCH_LIMITS.nameChars}
                    aria-label={`New name for ${s.name}`}
                  />
                  <button type="submit" aria-label={`Rename ${s.name}`}>
                    Rename
                  </button>
                </form>
                <form method="post" action={`/saved/${s.id}/delete`}>
                  <FormToken />
                  <button type="submit" aria-label={`Delete ${s.name}`}>
                    Delete
                  </button>
                </form>
              </li>
            );
          })}
        </ul>
      )}
    </Layout>
  );
}
