import { Hono } from 'hono';
import { describe, expect, it } from 'vitest';
import type { Viewer } from '../viewer.js';
import { MAX_COOKIE_BYTES, returnPath, type Session, SessionTooLargeError, sessionStore } from './session.js';

const CONFIG = { secret: 'session-unit-test-secret-0123456789ab', maxAgeMs: 3_600_000 };
const VIEWER: Viewer = { subject: 's-1', display: 'Sam', groups: ['team-a'], via: 'oidc' };

/** Starts a session in one request and reads it back in the next, through the cookie header. */
async function roundTrip(viewer: Viewer, publicUrl?: string) {
  const store = sessionStore(CONFIG, publicUrl ? { publicUrl } : {});
  const app = new Hono();
  app.get('/start', async (c) => {
    await store.start(c, viewer);
    return c.text('ok');
  });
  app.get('/read', async (c) => c.json((await store.read(c)) ?? null));
  const started = await app.request('/start');
  const setCookie = started.headers.getSetCookie()[0]!;
  const read = await app.request('/read', {
    headers: { cookie: setCookie.slice(0, setCookie.indexOf(';')) },
  });
  return { setCookie, session: (await read.json()) as Session };
}

describe('session cookie', () => {
  it('reads back the viewer it sealed, with a form token', async () => {
    const { session } = await roundTrip(VIEWER);
    expect(session.viewer).toEqual(VIEWER);
    expect(session.csrf).toMatch(/^[\w-]{24}$/);
  });

  it('opens a cookie once, and a remembered one still ends at its expiry', async () => {
    let clock = Date.now();
    const store = sessionStore(CONFIG, { now: () => clock });
    const app = new Hono();
    app.get('/start', async (c) => {
      await store.start(c, VIEWER);
      return c.text('ok');
    });
    app.get('/read', async (c) => c.json((await store.read(c)) ?? null));
    const setCookie = (await app.request('/start')).headers.getSetCookie()[0]!;
    const read = async () =>
      (
        await app.request('/read', { headers: { cookie: setCookie.slice(0, setCookie.indexOf(';')) } })
      ).json();
    expect(await read()).toMatchObject({ viewer: VIEWER });
    expect(await read()).toMatchObject({ viewer: VIEWER });
    clock += CONFIG.maxAgeMs + 1_000;
    expect(await read()).toBeNull();
  });

  it('is Secure and __Host- named under an https public URL, and without one (TLS may end in front)', async () => {
    for (const publicUrl of ['https://search.example', 'HTTPS://search.example', undefined]) {
      const { setCookie, session } = await roundTrip(VIEWER, publicUrl);
      expect(setCookie, String(publicUrl)).toMatch(/^__Host-observatory-session=/);
      expect(setCookie, String(publicUrl)).toMatch(/; Secure/);
      expect(setCookie, String(publicUrl)).toMatch(/; Path=\//);
      expect(session.viewer).toEqual(VIEWER);
    }
  });

  it('drops Secure and the prefix only for an http: public URL, whatever its letter case', async () => {
    for (const publicUrl of ['http://127.0.0.1:9000', 'HTTP://search.example']) {
      const { setCookie, session } = await roundTrip(VIEWER, publicUrl);
      expect(setCookie, publicUrl).toMatch(/^observatory-session=/);
      expect(setCookie, publicUrl).not.toMatch(/Secure/i);
      expect(session.viewer).toEqual(VIEWER);
    }
  });

  it('sets the login cookie and clears both with the same Secure __Host- attributes', async () => {
    const store = sessionStore(CONFIG);
    const app = new Hono();
    app.get('/flow', async (c) => {
      await store.beginFlow(c, { next: '/' });
      return c.text('ok');
    });
    app.get('/end', async (c) => {
      await store.end(c);
      return c.text('ok');
    });
    const [flow = ''] = (await app.request('/flow')).headers.getSetCookie();
    expect(flow).toMatch(/^__Host-observatory-login=[^;]+;/);
    // A browser ignores a __Host- cookie's deletion that is not Secure with Path=/.
    const [ended = ''] = (await app.request('/end')).headers.getSetCookie();
    expect(ended).toMatch(/^__Host-observatory-session=; Max-Age=0;/);
    for (const line of [flow, ended])
      expect(line.split('; ')).toEqual(expect.arrayContaining(['Path=/', 'Secure']));
  });

  it('refuses to set a cookie browsers would drop', async () => {
    const groups = Array.from({ length: 400 }, (_, i) => `a-rather-long-group-name-${i}`);
    const store = sessionStore(CONFIG);
    const app = new Hono();
    app.get('/start', async (c) => {
      const failure = await store.start(c, { ...VIEWER, groups }).catch((err: unknown) => err);
      return c.json({
        tooLarge: failure instanceof SessionTooLargeError,
        cookies: c.res.headers.getSetCookie(),
      });
    });
    expect(await (await app.request('/start')).json()).toEqual({ tooLarge: true, cookies: [] });
    expect(MAX_COOKIE_BYTES).toBeLessThan(4096);
  });
});

describe('return path after the login', () => {
  it('keeps a path of this site with its query', () => {
    expect(returnPath('/events?type=a%20b&range=24h')).toBe('/events?type=a%20b&range=24h');
  });

  it('sends anything else to /', () => {
    for (const bad of [
      undefined,
      'https://evil.example/',
      '//evil.example',
      '/\\evil.example',
      'events',
      '/events\r\nSet-Cookie: x=1',
      '/ü',
      '/a b',
      `/${'x'.repeat(2_001)}`,
    ]) {
      expect(returnPath(bad), String(bad)).toBe('/');
    }
  });
});
