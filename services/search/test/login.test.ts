/**
 * Login against the devstack's OpenID provider (authorization code flow with PKCE) and the local
 * admin form, through plain fetch with a cookie jar: sessions, logout, expired and forged cookies,
 * groups on the viewer, and cross-site posts refused.
 */
import { OIDC_USERS, type OidcIssuer } from '@event-observatory/devstack';
import type { ErrorResponseBody } from '@event-observatory/service-kit/errors';
import { Hono } from 'hono';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { ENDED_SESSIONS_REFRESH_MS } from '../src/auth/ended-sessions.js';
import { LOGIN_FAILURE_DELAY_MS } from '../src/auth/local.js';
import { sessionStore } from '../src/auth/session.js';
import type { Viewer } from '../src/viewer.js';
import type { Harness } from './harness.js';
import { startLocalHarness, startLocalReplica } from './local-harness.js';
import { Client, csrfOf, form, HTML, SESSION_COOKIE } from './login-client.js';
import { startOidcHarness } from './oidc-harness.js';

const SESSION_SECRET = 'login-test-session-secret-0123456789';
/** A session cookie sealed by the service's own code, as of `now` (to make expired ones). */
async function sealedCookie(secret: string, viewer: Viewer, now = Date.now): Promise<string> {
  const store = sessionStore({ secret, maxAgeMs: 3_600_000 }, { now });
  const mint = new Hono();
  mint.get('/', async (c) => {
    await store.start(c, viewer);
    return c.text('sealed');
  });
  const line = (await mint.request('/')).headers.getSetCookie()[0]!;
  return line.slice(0, line.indexOf(';'));
}

describe('OIDC login', () => {
  let idp: OidcIssuer;
  let h: Harness;

  beforeAll(async () => {
    ({ idp, h } = await startOidcHarness('login_oidc', SESSION_SECRET));
  });

  afterAll(async () => {
    await h?.close();
    await idp?.close();
  });

  /** Opens a page, is sent to the provider's form, signs in and lands back on the page. */
  async function logIn(
    user: keyof typeof OIDC_USERS,
    path = '/events',
  ): Promise<{ client: Client; html: string }> {
    const client = new Client();
    const atForm = await client.follow(`${h.url}${path}`);
    expect(atForm.url).toMatch(new RegExp(`^${idp.issuer}/interaction/`));
    const back = await client.follow(
      atForm.url,
      form({ username: user, password: OIDC_USERS[user]!.password }, idp.issuer),
    );
    expect(back.url).toBe(`${h.url}${path}`);
    expect(back.res.status).toBe(200);
    return { client, html: await back.res.text() };
  }

  it('sends a page without a session to the provider, and back to it signed in', async () => {
    const first = await new Client().send(`${h.url}/events?range=24h`, { headers: HTML });
    expect(first.status).toBe(302);
    expect(first.headers.get('location')).toBe(`/login?next=${encodeURIComponent('/events?range=24h')}`);
    const { client, html } = await logIn('alice', '/events?range=24h');
    expect(html).toContain('Logged in as <strong class="viewer-name">Alice</strong>');
    const again = await client.send(`${h.url}/events?range=24h`);
    expect(again.headers.get('cache-control')).toBe('private, no-store');
    const cookie = [...client.jar.keys()].find((k) => k === SESSION_COOKIE);
    expect(cookie).toBeDefined();
  });

  it('sets an HttpOnly, SameSite=Lax session cookie with a bounded lifetime, Secure without a public URL', async () => {
    const client = new Client();
    const atForm = await client.follow(`${h.url}/`);
    let res = await client.send(atForm.url, form({ username: 'bob', password: 'bob-password' }, idp.issuer));
    let url = atForm.url;
    // Through the provider's redirects up to the search service's callback, which sets the cookie.
    while (!url.startsWith(`${h.url}/auth/callback`)) {
      url = new URL(res.headers.get('location')!, url).href;
      res = await client.send(url);
    }
    expect(url).toMatch(/\/auth\/callback\?code=/);
    expect(res.status).toBe(303);
    const done = res;
    const line = done.headers.getSetCookie().find((l) => l.startsWith(`${SESSION_COOKIE}=`))!;
    expect(line).toMatch(/HttpOnly/);
    expect(line).toMatch(/SameSite=Lax/);
    expect(line).toMatch(/Max-Age=3600/);
    // The harness sets no SEARCH_PUBLIC_URL: TLS may end in front of the service, so Secure.
    expect(line).toMatch(/; Secure/);
  });

  it('gives two users their own groups on the viewer', async () => {
    const alice = await logIn('alice');
    const bob = await logIn('bob');
    expect(alice.html).toContain('groups: team-a');
    expect(bob.html).toContain('Logged in as <strong class="viewer-name">Bob</strong>');
    expect(bob.html).toContain('groups: team-b');
    expect(bob.html).not.toContain('team-a');
  });

  it('refuses a callback whose state does not match, with a page and no session', async () => {
    const client = new Client();
    const toProvider = await client.send(`${h.url}/login`);
    expect(toProvider.status).toBe(302);
    const res = await client.send(`${h.url}/auth/callback?code=forged&state=not-the-state`);
    expect(res.status).toBe(401);
    expect(await res.text()).toContain('Login failed');
    expect(client.jar.has(SESSION_COOKIE)).toBe(false);
  });

  it('logs out: clears the session and moves the browser on to the provider to end its session', async () => {
    const { client, html } = await logIn('alice');
    const res = await client.send(`${h.url}/logout`, form({ csrf: csrfOf(html) }, h.url));
    expect(res.status).toBe(200);
    const refresh = /^0; url=(.+)$/.exec(res.headers.get('refresh') ?? '')?.[1];
    const location = new URL(refresh!);
    expect(location.href.startsWith(`${idp.issuer}/session/end`)).toBe(true);
    expect(location.searchParams.get('post_logout_redirect_uri')).toBe(`${h.url}/`);
    expect(client.jar.has(SESSION_COOKIE)).toBe(false);
    const after = await client.send(`${h.url}/events`);
    expect(after.status).toBe(302);
    expect(after.headers.get('location')).toMatch(/^\/login\?next=/);
  });

  it('refuses a cross-site logout and one without the form token, keeping the session', async () => {
    const { client, html } = await logIn('bob');
    const crossSite = await client.send(
      `${h.url}/logout`,
      form({ csrf: csrfOf(html) }, 'http://evil.example'),
    );
    expect(crossSite.status).toBe(403);
    const noToken = await client.send(`${h.url}/logout`, form({ csrf: 'guessed' }, h.url));
    expect(noToken.status).toBe(403);
    expect(((await noToken.json()) as ErrorResponseBody).error.status).toBe('PERMISSION_DENIED');
    expect((await client.send(`${h.url}/events`)).status).toBe(200);
  });

  it('sends an expired session back to the login', async () => {
    const viewer: Viewer = { subject: 'alice', display: 'Alice', groups: ['team-a'], via: 'oidc' };
    const fresh = await sealedCookie(SESSION_SECRET, viewer);
    expect((await fetch(`${h.url}/events`, { headers: { ...HTML, cookie: fresh } })).status).toBe(200);
    const expired = await sealedCookie(SESSION_SECRET, viewer, () => Date.now() - 2 * 3_600_000);
    const res = await fetch(`${h.url}/events`, { headers: { ...HTML, cookie: expired }, redirect: 'manual' });
    expect(res.status).toBe(302);
    expect(res.headers.get('location')).toMatch(/^\/login\?next=/);
  });

  it('sends forged and tampered cookies back to the login (401 JSON off pages), never a 500', async () => {
    const viewer: Viewer = { subject: 'admin', display: 'Admin', groups: ['admin'], via: 'oidc' };
    const valid = await sealedCookie(SESSION_SECRET, viewer);
    const [name, value] = valid.split('=') as [string, string];
    const flip = (s: string, i: number) => s.slice(0, i) + (s[i] === 'A' ? 'B' : 'A') + s.slice(i + 1);
    const forged = [
      `${name}=garbage`,
      `${name}=${flip(value, value.length - 5)}`,
      `${name}=${flip(value, value.lastIndexOf('.') - 3)}`,
      `${name}=e30.e30.e30.e30.e30`,
      await sealedCookie('another-secret-of-32-bytes-or-more!!', viewer),
    ];
    for (const cookie of forged) {
      const page = await fetch(`${h.url}/events`, { headers: { ...HTML, cookie }, redirect: 'manual' });
      expect(page.status, cookie).toBe(302);
      expect(page.headers.get('location')).toMatch(/^\/login\?next=/);
      for (const path of ['/events.ndjson', '/events.csv', '/events/tail']) {
        const api = await fetch(`${h.url}${path}`, { headers: { cookie } });
        expect(api.status, `${path} ${cookie}`).toBe(401);
        const body = (await api.json()) as ErrorResponseBody;
        expect(body.error).toMatchObject({ code: 401, status: 'UNAUTHENTICATED' });
      }
    }
  });

  it('needs no session for the health probes and the assets', async () => {
    expect((await fetch(`${h.url}/health/live`)).status).toBe(200);
    expect((await fetch(`${h.url}/assets/site.css`)).status).toBe(200);
  });
});

describe('local login', () => {
  const PASSWORD = 'correct horse battery staple';
  let h: Harness;

  beforeAll(async () => {
    h = await startLocalHarness('login_local', PASSWORD);
  });

  afterAll(async () => {
    await h?.close();
  });

  async function loginForm(client: Client, path = '/events'): Promise<string> {
    const { res, url } = await client.follow(`${h.url}${path}`);
    expect(url).toBe(`${h.url}/login?next=${encodeURIComponent(path)}`);
    return csrfOf(await res.text());
  }

  it('logs admin in with the right password and back to the page asked for', async () => {
    const client = new Client();
    const csrf = await loginForm(client, '/receipt');
    const { res, url } = await client.follow(
      `${h.url}/login`,
      form({ csrf, username: 'admin', password: PASSWORD }, h.url),
    );
    expect(url).toBe(`${h.url}/receipt`);
    const html = await res.text();
    expect(html).toContain('Logged in as <strong class="viewer-name">admin</strong>');
    expect(html).toContain('groups: admin');
    const out = await client.send(`${h.url}/logout`, form({ csrf: csrfOf(html) }, h.url));
    expect(out.headers.get('location')).toBe('/login');
    expect((await client.send(`${h.url}/receipt`)).status).toBe(302);
  });

  it('ends the session at a logout for every copy of its cookie and its live tails: on this replica at once, on another of the same store within its refresh', async () => {
    const other = await startLocalReplica(h, 'login_local', PASSWORD);
    try {
      const client = new Client();
      const { res } = await client.logIn(h.url, 'admin', PASSWORD);
      const html = await res.text();
      // A copy of the cookie, as a second browser, a stolen copy or a script would hold it.
      const copy = new Client();
      copy.jar.set(SESSION_COOKIE, client.jar.get(SESSION_COOKIE)!);
      expect((await copy.send(`${h.url}/receipt`)).status).toBe(200);
      expect((await copy.send(`${other.url}/receipt`)).status).toBe(200);
      // Live tails opened under the session, on both replicas, end with it.
      const tails = [h.url, other.url].map(async (url) => {
        const res = await copy.send(`${url}/events/tail?range=all`, {
          headers: { accept: 'text/event-stream' },
        });
        expect(res.status).toBe(200);
        await res.text(); // until the stream ends
        return Date.now();
      });

      const out = await client.send(`${h.url}/logout`, form({ csrf: csrfOf(html) }, h.url));
      const loggedOut = Date.now();
      expect(out.status).toBe(303);
      expect(client.jar.has(SESSION_COOKIE)).toBe(false);
      const page = await copy.send(`${h.url}/receipt`);
      expect(page.status).toBe(302);
      expect(page.headers.get('location')).toBe(`/login?next=${encodeURIComponent('/receipt')}`);
      const api = await copy.send(`${h.url}/events`, { headers: { accept: 'application/json' } });
      expect(api.status).toBe(401);
      await vi.waitFor(async () => expect((await copy.send(`${other.url}/receipt`)).status).toBe(302), {
        timeout: ENDED_SESSIONS_REFRESH_MS + 5_000,
        interval: 250,
      });
      // Within a poll (1 s) of the logout here, of the refresh and a poll there.
      const [here, there] = await Promise.all(tails);
      expect(here! - loggedOut).toBeLessThan(3_000);
      expect(there! - loggedOut).toBeLessThan(ENDED_SESSIONS_REFRESH_MS + 3_000);
      // Logging in again opens a new session, which the record of the old one does not touch.
      const again = new Client();
      const { url } = await again.logIn(h.url, 'admin', PASSWORD);
      expect(url).toBe(`${h.url}/events`);
      expect((await again.send(`${other.url}/receipt`)).status).toBe(200);
    } finally {
      await other.close();
    }
  });

  it('refuses a wrong password after a bounded delay, and a wrong user name', async () => {
    for (const [username, password] of [
      ['admin', `${PASSWORD}!`],
      ['root', PASSWORD],
    ] as const) {
      const client = new Client();
      const csrf = await loginForm(client);
      const started = performance.now();
      const res = await client.send(`${h.url}/login`, form({ csrf, username, password }, h.url));
      const took = performance.now() - started;
      expect(res.status).toBe(401);
      expect(await res.text()).toContain('Wrong user name or password.');
      expect(took).toBeGreaterThanOrEqual(LOGIN_FAILURE_DELAY_MS - 10);
      expect(client.jar.has(SESSION_COOKIE)).toBe(false);
    }
  });

  it('refuses a cross-site login post and one without the form token', async () => {
    const client = new Client();
    const csrf = await loginForm(client);
    const crossSite = await client.send(
      `${h.url}/login`,
      form({ csrf, username: 'admin', password: PASSWORD }, 'http://evil.example'),
    );
    expect(crossSite.status).toBe(403);
    const noToken = await client.send(
      `${h.url}/login`,
      form({ csrf: 'guessed', username: 'admin', password: PASSWORD }, h.url),
    );
    expect(noToken.status).toBe(401);
    expect(await noToken.text()).toContain('The form expired or came from elsewhere');
    expect(client.jar.has(SESSION_COOKIE)).toBe(false);
  });

  it('returns to / from a return path that is not one of this site, and refuses a huge form', async () => {
    const client = new Client();
    const { res } = await client.follow(
      `${h.url}/login?next=${encodeURIComponent('/events\r\nSet-Cookie: x=1')}`,
    );
    const csrf = csrfOf(await res.text());
    const done = await client.send(
      `${h.url}/login`,
      form({ csrf, username: 'admin', password: PASSWORD }, h.url),
    );
    expect(done.status).toBe(303);
    expect(done.headers.get('location')).toBe('/');
    const huge = await client.send(
      `${h.url}/login`,
      form({ csrf, username: 'admin', password: 'x'.repeat(20_000) }, h.url),
    );
    expect(huge.status).toBe(413);
  });
});
