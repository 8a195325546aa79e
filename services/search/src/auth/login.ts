/**
 * The authenticator of the `oidc` and `local` modes: the login routes of the mode, `POST /logout`,
 * and a session on every other request. Without one, a page is sent to the login (302) and any
 * other client (an export, a live tail, a script) gets 401 in the error body of the API.
 */
import { errorBody } from '@event-observatory/service-kit/errors';
import type { Context, Handler } from 'hono';
import { bodyLimit } from 'hono/body-limit';
import type { Authenticator, SearchEnv } from '../viewer.js';
import { LoggedOutPage } from '../views/logged-out.js';
import { readForm, sameToken } from './csrf.js';
import { returnPath, type Session, type SessionStore } from './session.js';

/** What a login mode adds: its routes (`GET /login`, ...) and where a logout ends. */
export interface LoginMode {
  routes: Record<string, Handler<SearchEnv>>;
  /** Where the browser goes once the session cookie is cleared: a path here, or the provider. */
  afterLogout(c: Context<SearchEnv>, session: Session | undefined): Promise<string>;
}

/** Largest form post read (a login or a logout form is well under 1 KiB); larger answers 413. */
const MAX_FORM_BYTES = 16 * 1024;

export function loginAuthenticator(sessions: SessionStore, mode: LoginMode): Authenticator {
  const limited = bodyLimit({ maxSize: MAX_FORM_BYTES });
  const routes: Record<string, Handler<SearchEnv>> = {
    ...mode.routes,
    'POST /logout': async (c) => {
      const session = await sessions.read(c);
      const form = await readForm(c);
      // Without a session there is nothing to end; with one, only its own form may end it.
      if (session && !sameToken(form.csrf, session.csrf)) {
        return c.json(
          errorBody('Forbidden', 'the form token does not match the session', { reason: 'csrf' }),
          403,
        );
      }
      await sessions.end(c);
      const next = await mode.afterLogout(c, session);
      if (next.startsWith('/')) return c.redirect(next, 303);
      // The page's CSP allows forms to post to this site only (`form-action 'self'`), and browsers
      // hold a form's redirects to it too; a page that moves on by itself leaves the form behind.
      c.header('refresh', `0; url=${next}`);
      return c.html(LoggedOutPage({ provider: next }));
    },
  };
  return async (c, next) => {
    const method = c.req.method === 'HEAD' ? 'GET' : c.req.method;
    const route = routes[`${method} ${c.req.path}`];
    if (route && method === 'POST') {
      await limited(c, async () => {
        c.res = (await route(c, next)) as Response;
      });
      return c.res;
    }
    if (route) return route(c, next);
    const session = await sessions.read(c);
    if (session) {
      c.set('viewer', session.viewer);
      c.set('csrfToken', session.csrf);
      // For answers that outlive the request's start (the live tail): asked again as they go.
      c.set('loginHolds', async () => (await sessions.read(c)) !== undefined);
      return next();
    }
    if (method === 'GET' && (c.req.header('accept') ?? '').includes('text/html')) {
      const url = new URL(c.req.url);
      return c.redirect(`/login?next=${encodeURIComponent(returnPath(url.pathname + url.search))}`, 302);
    }
    return c.json(
      errorBody('Unauthorized', 'log in first: no session, or it expired', { reason: 'unauthenticated' }),
      401,
    );
  };
}
