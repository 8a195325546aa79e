/** @jsxRuntime automatic @jsxImportSource hono/jsx */
/**
 * Who is logged in, in the page header: the name, the groups, and a logout button. It reads the
 * request's viewer from Hono's context storage, so no page has to hand it down.
 */
import { tryGetContext } from 'hono/context-storage';
import type { SearchEnv } from '../viewer.js';

export function ViewerHeader() {
  const c = tryGetContext<SearchEnv>();
  const viewer = c?.get('viewer');
  // No viewer (the login page) or login switched off: nobody to name.
  if (!viewer || viewer.via === 'open') return null;
  const csrf = c?.get('csrfToken');
  return (
    <div class="viewer" data-subject={viewer.subject}>
      <span>
        Logged in as <strong class="viewer-name">{viewer.display}</strong>
      </span>{' '}
      <span class="viewer-groups">
        {viewer.groups.length === 0 ? 'no groups' : `groups: ${viewer.groups.join(', ')}`}
      </span>
      {csrf === undefined ? null : (
        <form method="post" action="/logout">
          <input type="hidden" name="csrf" value={csrf} />
          <button type="submit">Log out</button>
        </form>
      )}
    </div>
  );
}
