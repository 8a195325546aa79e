/**
 * A browser's side of the login for tests through plain fetch: a cookie jar for one host, redirects
 * followed by hand, form posts with an Origin, the form token read off a page.
 */

/** The session cookie as a service without an `http:` SEARCH_PUBLIC_URL names it: Secure, `__Host-`. */
export const SESSION_COOKIE = '__Host-observatory-session';

/** What a browser's page request accepts. */
export const HTML = { accept: 'text/html,application/xhtml+xml' };

/** Cookies by name (one host), redirects followed by hand. */
export class Client {
  readonly jar = new Map<string, string>();

  async send(url: string, init: RequestInit = {}): Promise<Response> {
    const headers = new Headers(init.headers);
    headers.set('accept', headers.get('accept') ?? HTML.accept);
    if (this.jar.size > 0) headers.set('cookie', [...this.jar].map(([k, v]) => `${k}=${v}`).join('; '));
    const res = await fetch(url, { ...init, headers, redirect: 'manual' });
    for (const line of res.headers.getSetCookie()) {
      const [pair = '', ...attrs] = line.split(';');
      const eq = pair.indexOf('=');
      const name = pair.slice(0, eq).trim();
      const expired = attrs.some((a) => /^\s*max-age=0\s*$/i.test(a) || /expires=Thu, 01 Jan 1970/i.test(a));
      if (expired || pair.slice(eq + 1) === '') this.jar.delete(name);
      else this.jar.set(name, pair.slice(eq + 1));
    }
    return res;
  }

  /** Follows redirects as a browser does (a 303 turns into a GET); the last answer and its URL. */
  async follow(url: string, init: RequestInit = {}): Promise<{ res: Response; url: string }> {
    let res = await this.send(url, init);
    for (let hops = 0; hops < 10 && res.status >= 300 && res.status < 400; hops++) {
      url = new URL(res.headers.get('location')!, url).href;
      res = await this.send(url, res.status === 303 || res.status === 302 ? {} : init);
    }
    return { res, url };
  }

  /** Logs in through the local login form that `/events` of `base` leads to; where it lands. */
  async logIn(base: string, username: string, password: string): Promise<{ res: Response; url: string }> {
    const { res } = await this.follow(`${base}/events`);
    return this.follow(`${base}/login`, form({ csrf: csrfOf(await res.text()), username, password }, base));
  }
}

export function form(fields: Record<string, string>, origin: string): RequestInit {
  return {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', origin },
    body: new URLSearchParams(fields),
  };
}

export function csrfOf(html: string): string {
  const token = /name="csrf" value="([^"]+)"/.exec(html)?.[1];
  if (token === undefined) throw new Error('the page has no form token');
  return token;
}
