/** @jsxRuntime automatic @jsxImportSource hono/jsx */
/**
 * Saved searches of the request's viewer: `GET /saved` lists them, `POST /saved` saves a search's
 * filters under a name (replacing the filters of that name), `POST /saved/{id}/rename` renames one,
 * `POST /saved/{id}/delete` deletes one. The store keeps each viewer to their own rows (packages/store, "Saved searches"); a saved
 * search is a search URL's filter parameters, so opening one reads under the opener's visibility.
 *
 * Posts pass the same-origin check of every form post (app.tsx) and, when the viewer has a
 * session, must carry its form token. Refusals answer in the API's error body, or, to a browser
 * (`Accept: text/html`), as a page saying the same; both with the same status.
 */
import { type ErrorKind, errorBody } from '@event-observatory/service-kit/errors';
import {
  type DatabasePool,
  deleteSavedSearch,
  listSavedSearches,
  renameSavedSearch,
  SAVED_SEARCH_LIMITS,
  saveSearch,
} from '@event-observatory/store';
import { type Context, Hono } from 'hono';
import { bodyLimit } from 'hono/body-limit';
import { readForm, sameToken } from './auth/csrf.js';
import { failureOf } from './failures.js';
import { parseSearch, searchFilters } from './filters.js';
import type { SearchEnv } from './viewer.js';
import { ErrorPage } from './views/error.js';
import { SavedPage } from './views/saved.js';

/** Largest form post read: a name and parameters within their bounds, with room. */
const MAX_FORM_BYTES = 16 * 1024;

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Control characters: no place in a name (and PostgreSQL text cannot hold U+0000). */
const CONTROL = /\p{Cc}/u;

interface Refusal {
  kind: ErrorKind;
  message: string;
  reason: string;
  metadata?: Record<string, string | number>;
}

/** An id the viewer has no saved search of. */
const GONE: Refusal = {
  kind: 'NotFound',
  message: 'you have no saved search of this id',
  reason: 'not-found',
};

/** Answers a refusal: a page to a browser, the API's error body to any other client. */
function refuse(c: Context<SearchEnv>, r: Refusal) {
  const body = errorBody(r.kind, r.message, {
    reason: r.reason,
    ...(r.metadata ? { metadata: r.metadata } : {}),
  });
  const status = body.error.code as 400 | 403 | 404 | 409 | 503 | 504;
  if ((c.req.header('accept') ?? '').includes('text/html'))
    return c.html(<ErrorPage title="Not saved" message={r.message} />, status);
  return c.json(body, status);
}

/** The store's failure in words, with its status (503, 504). */
function storeFailure(c: Context<SearchEnv>, err: unknown) {
  const f = failureOf(err);
  return refuse(c, {
    kind: f.status === 504 ? 'DeadlineExceeded' : 'Unavailable',
    message: f.message,
    reason: 'store-unavailable',
  });
}

/** The name to save under, trimmed, or why it cannot be one. */
export function readName(raw: unknown): string | Refusal {
  const name = typeof raw === 'string' ? raw.trim() : '';
  const { nameChars } = SAVED_SEARCH_LIMITS;
  const length = [...name].length;
  if (length === 0 || length > nameChars || CONTROL.test(name))
    return {
      kind: 'InvalidArgument',
      message: `name: 1 to ${nameChars} characters, no control characters`,
      reason: 'malformed',
      metadata: { limit: nameChars },
    };
  return name;
}

/** The filter parameters to save (any other parameter dropped), or why they cannot be saved. */
export function readParams(raw: unknown): string | Refusal {
  const { paramsBytes } = SAVED_SEARCH_LIMITS;
  if (typeof raw !== 'string')
    return { kind: 'InvalidArgument', message: 'params: missing', reason: 'malformed' };
  const filters = searchFilters(new URLSearchParams(raw));
  const params = filters.toString();
  if (Buffer.byteLength(params) > paramsBytes)
    return {
      kind: 'InvalidArgument',
      message: `params: at most ${paramsBytes} bytes of filters`,
      reason: 'too-large',
      metadata: { limit: paramsBytes },
    };
  const { problems } = parseSearch(filters);
  if (problems.length > 0)
    return { kind: 'InvalidArgument', message: `params: ${problems.join('; ')}`, reason: 'malformed' };
  return params;
}

export function savedSearchRoutes(pool: DatabasePool): Hono<SearchEnv> {
  const routes = new Hono<SearchEnv>();
  const limited = bodyLimit({ maxSize: MAX_FORM_BYTES });
  /** The posted form, when its token is the session's (no session: the same-origin check alone). */
  const form = async (c: Context<SearchEnv>) => {
    const body = await readForm(c);
    const expected = c.get('csrfToken');
    return expected === undefined || sameToken(body.csrf, expected) ? body : undefined;
  };
  const forged: Refusal = {
    kind: 'Forbidden',
    message: 'the form token does not match the session',
    reason: 'csrf',
  };

  routes.get('/saved', async (c) => {
    try {
      return c.html(<SavedPage searches={await listSavedSearches(pool, c.get('viewer').subject)} />);
    } catch (err) {
      const f = failureOf(err);
      return c.html(<ErrorPage title={f.title} message={f.message} />, f.status);
    }
  });

  routes.post('/saved', limited, async (c) => {
    const body = await form(c);
    if (!body) return refuse(c, forged);
    const name = readName(body.name);
    if (typeof name !== 'string') return refuse(c, name);
    const params = readParams(body.params);
    if (typeof params !== 'string') return refuse(c, params);
    try {
      const outcome = await saveSearch(pool, c.get('viewer').subject, name, params);
      if ('full' in outcome) {
        const limit = SAVED_SEARCH_LIMITS.perViewer;
        return refuse(c, {
          kind: 'FailedPrecondition',
          message: `${limit} saved searches is the most one viewer keeps: delete one, or save under a name you have`,
          reason: 'limit-reached',
          metadata: { limit },
        });
      }
    } catch (err) {
      return storeFailure(c, err);
    }
    return c.redirect('/saved', 303);
  });

  /**
   * A post on one of the viewer's saved searches (`/saved/{id}/…`): the form token and the id
   * checked, then `act`, which answers what refuses it or nothing; then back to the list.
   */
  const onOne =
    (act: (viewer: string, id: string, body: Record<string, unknown>) => Promise<Refusal | undefined>) =>
    async (c: Context<SearchEnv>) => {
      const body = await form(c);
      if (!body) return refuse(c, forged);
      const id = c.req.param('id') ?? '';
      if (!UUID.test(id)) return refuse(c, GONE);
      try {
        const refusal = await act(c.get('viewer').subject, id.toLowerCase(), body);
        if (refusal) return refuse(c, refusal);
      } catch (err) {
        return storeFailure(c, err);
      }
      return c.redirect('/saved', 303);
    };

  routes.post(
    '/saved/:id/rename',
    limited,
    onOne(async (viewer, id, body) => {
      const name = readName(body.name);
      if (typeof name !== 'string') return name;
      const outcome = await renameSavedSearch(pool, viewer, id, name);
      if (outcome === 'missing') return GONE;
      if (outcome === 'taken')
        return {
          kind: 'AlreadyExists',
          message: `you have a saved search named "${name}" already`,
          reason: 'already-exists',
        };
      return undefined;
    }),
  );

  routes.post(
    '/saved/:id/delete',
    limited,
    onOne(async (viewer, id) => ((await deleteSavedSearch(pool, viewer, id)) ? undefined : GONE)),
  );
  return routes;
}
