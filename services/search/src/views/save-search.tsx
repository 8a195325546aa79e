/** @jsxRuntime automatic @jsxImportSource hono/jsx */
/**
 * The form on the search page that saves the current filters under a name (`POST /saved`), and
 * the form token every saved-search form carries when the viewer has a session
 * (saved-searches.tsx checks it).
 */
import { SAVED_SEARCH_LIMITS } from '@event-observatory/store';
import { tryGetContext } from 'hono/context-storage';
import { searchFilters } from '../filters.js';
import type { SearchEnv } from '../viewer.js';

/** The form token of the request's session, as a hidden field; nothing without a session. */
export function FormToken() {
  const csrf = tryGetContext<SearchEnv>()?.get('csrfToken');
  return csrf === undefined ? null : <input type="hidden" name="csrf" value={csrf} />;
}

/** Saves the filters of `params` (switched-off ones too) under a name the viewer gives; folded. */
export function SaveSearchForm(props: { params: URLSearchParams }) {
  // Folded like the filter form: the first screen is for the results.
  return (
    <details class="save-search">
      <summary>Save this search</summary>
      <form method="post" action="/saved" class="save-search" aria-label="Save this search">
        <FormToken />
        <input type="hidden" name="params" value={searchFilters(props.params).toString()} />
        <label for="f-save-name">Save these filters as</label>
        <div class="bar-row">
          <input
            id="f-save-name"
            name="name"
            type="text"
            required
            maxlength={SAVED_SEARCH_LIMITS.nameChars}
            autocomplete="off"
          />
          <button type="submit">Save</button>
        </div>
        <span class="hint">
          A saved search keeps the filters, not the events: whoever opens it sees what they may see.{' '}
          <a href="/saved">Saved searches</a>
        </span>
      </form>
    </details>
  );
}
