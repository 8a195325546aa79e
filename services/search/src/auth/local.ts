/**
 * The `local` login: one user, `admin` (groups `[admin]`), whose password the operator mounts as a
 * file. For a cluster without an identity provider; the form is the site's own.
 */
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Context } from 'hono';
import type { SearchEnv, Viewer } from '../viewer.js';
import { LoginPage } from '../views/login.js';
import { readForm, sameToken } from './csrf.js';
import type { LoginMode } from './login.js';
import { returnPath, type SessionStore } from './session.js';

export const LOCAL_ADMIN: Viewer = { subject: 'admin', display: 'admin', groups: ['admin'], via: 'local' };
/** A refused login answers after this long, so guessing is slow (bounded: it ties up no more). */
export const LOGIN_FAILURE_DELAY_MS = 500;

export function localLogin(sessions: SessionStore, adminPassword: string): LoginMode {
  const expected = digest(adminPassword);
  const form = async (c: Context<SearchEnv>, next: string, problem?: string) => {
    const csrf = randomBytes(18).toString('base64url');
    await sessions.beginFlow(c, { next, csrf });
    return c.html(LoginPage({ csrf, ...(problem ? { problem } : {}) }), problem ? 401 : 200);
  };
  return {
    routes: {
      'GET /login': (c) => form(c, returnPath(c.req.query('next'))),
      'POST /login': async (c) => {
        const flow = await sessions.takeFlow(c);
        const body = await readForm(c);
        const next = flow?.next ?? '/';
        if (!sameToken(body.csrf, flow?.csrf)) {
          return form(c, next, 'The form expired or came from elsewhere; please enter your password again.');
        }
        // Both compared in full (digests of equal length) whatever is wrong, so timing tells nothing.
        const userOk = timingSafeEqual(digest(String(body.username ?? '')), digest(LOCAL_ADMIN.subject));
        const passwordOk = timingSafeEqual(digest(String(body.password ?? '')), expected);
        if (!(userOk && passwordOk)) {
          await sleep(LOGIN_FAILURE_DELAY_MS);
          return form(c, next, 'Wrong user name or password.');
        }
        await sessions.start(c, LOCAL_ADMIN);
        return c.redirect(next, 303);
      },
    },
    afterLogout: async () => '/login',
  };
}

function digest(text: string): Buffer {
  return createHash('sha256').update(text).digest();
}
