/**
 * Saved searches over HTTP, search logged in as the reader role under row-level security: two
 * viewers of different teams save, list and delete their own searches only; a shared link shows
 * whoever opens it their own events; posts from elsewhere, without the session's form token, or
 * out of bounds are refused in the API's error body; filter pills remove and switch off filters.
 */
import type { ErrorResponseBody } from '@event-observatory/service-kit/errors';
import { SAVED_SEARCH_LIMITS, saveSearch } from '@event-observatory/store';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseVisibility } from '../src/visibility.js';
import { type Harness, startHarness } from './harness.js';
import { startLocalHarness } from './local-harness.js';
import { Client, csrfOf, form, HTML } from './login-client.js';
import { asViewer, headerViewer } from './test-viewer.js';

const RULES = `
- groups: [team-a]
  see: { sourcePrefixes: ['urn:team-a:'] }
- groups: [team-b]
  see: { sourcePrefixes: ['urn:team-b:'] }
`;
const ann = asViewer('ann', ['team-a']);
const ben = asViewer('ben', ['team-b']);

let h: Harness;

beforeAll(async () => {
  h = await startHarness('saved', {
    asReader: true,
    authenticate: headerViewer,
    visibility: parseVisibility(RULES, 'rules.yaml'),
  });
  // sql-witness: one event of each team, both of subject `shared`, for a search both can open.
  await h.db.query(
    `INSERT INTO events.cloud_event (occurred_at, ce_source, ce_id, ce_type, ce_subject, raw)
     SELECT now() - interval '5 minutes', 'urn:team-' || t || ':sensor', t || '-1', 'com.reading', 'shared',
            jsonb_build_object('id', t || '-1')
       FROM unnest(ARRAY['a', 'b']) AS t`,
  );
});

afterAll(async () => {
  await h?.close();
});

/** A form post from this site's own pages, as `viewer`. */
function post(path: string, fields: Record<string, string>, viewer: Record<string, string>, origin = h.url) {
  const init = form(fields, origin);
  return fetch(`${h.url}${path}`, {
    ...init,
    headers: { ...(init.headers as Record<string, string>), ...viewer },
    redirect: 'manual',
  });
}

/** The viewer's saved searches as the list page links them: name -> href. */
async function listed(viewer: Record<string, string>): Promise<Map<string, string>> {
  const html = await (await h.get('/saved', viewer)).text();
  const links = [...html.matchAll(/<a href="([^"]+)" class="wrap">([^<]+)<\/a>/g)];
  return new Map(links.map((m) => [m[2]!, m[1]!.replaceAll('&amp;', '&')]));
}

const idsIn = (html: string) =>
  [...html.matchAll(/action="\/saved\/([0-9a-f-]{36})\/delete"/g)].map((m) => m[1]!);

const errorOf = async (res: Response) => ((await res.json()) as ErrorResponseBody).error;

describe('saving', () => {
  it('saves the filters of a search under a name, lists it and opens it', async () => {
    const res = await post(
      '/saved',
      { name: 'shared ones', params: 'subject=shared&range=1h&cursor=x&limit=25' },
      ann,
    );
    expect(res.status).toBe(303);
    expect(res.headers.get('location')).toBe('/saved');
    // Only filters are kept: the cursor and the page size are not the search's.
    expect((await listed(ann)).get('shared ones')).toBe('/events?subject=shared&range=1h');
    expect(await (await h.get('/saved', ann)).text()).toContain('subject:shared · last hour');
  });

  it('saves again under the same name with the new filters', async () => {
    await post('/saved', { name: 'again', params: 'type=x' }, ann);
    await post('/saved', { name: 'again', params: 'type=y&off_q=x&from=2026-01-01' }, ann);
    expect((await listed(ann)).get('again')).toBe('/events?type=y&off_q=x&from=2026-01-01');
    expect(await (await h.get('/saved', ann)).text()).toContain(
      'type:y · 2026-01-01 to now · 1 switched off',
    );
  });

  it('shows a shared link to another viewer under their own visibility', async () => {
    const link = (await listed(ann)).get('shared ones')!;
    const sources = async (viewer: Record<string, string>) => {
      const html = await (await h.get(link, { ...viewer, ...HTML })).text();
      return [...new Set(html.match(/urn:team-[ab]:sensor/g))];
    };
    expect(await sources(ann)).toEqual(['urn:team-a:sensor']);
    expect(await sources(ben)).toEqual(['urn:team-b:sensor']);
  });
});

describe('owner isolation', () => {
  it("lists none of another viewer's searches and cannot delete them", async () => {
    await post('/saved', { name: 'anns own', params: 'q=mine' }, ann);
    expect([...(await listed(ben)).keys()]).not.toContain('anns own');
    const html = await (await h.get('/saved', ann)).text();
    const ids = idsIn(html);
    expect(ids.length).toBeGreaterThan(0);
    for (const id of ids) {
      const res = await post(`/saved/${id}/delete`, {}, ben);
      expect(res.status).toBe(404);
      expect(await errorOf(res)).toMatchObject({ status: 'NOT_FOUND', details: [{ reason: 'not-found' }] });
    }
    expect((await listed(ann)).has('anns own')).toBe(true);
  });

  it("renames the viewer's own search, not to a name they have (409), not another's (404)", async () => {
    await post('/saved', { name: 'first name', params: 'q=one' }, ben);
    await post('/saved', { name: 'taken name', params: 'q=two' }, ben);
    const html = await (await h.get('/saved', ben)).text();
    const [id] = idsIn(html.slice(html.indexOf('first name')));
    expect((await post(`/saved/${id}/rename`, { name: 'stolen' }, ann)).status).toBe(404);
    const taken = await post(`/saved/${id}/rename`, { name: 'taken name' }, ben);
    expect(taken.status).toBe(409);
    expect(await errorOf(taken)).toMatchObject({
      status: 'ALREADY_EXISTS',
      details: [{ reason: 'already-exists' }],
    });
    expect((await post(`/saved/${id}/rename`, { name: '' }, ben)).status).toBe(400);
    expect((await post(`/saved/${id}/rename`, { name: 'second name' }, ben)).status).toBe(303);
    const names = [...(await listed(ben)).keys()];
    expect(names).toContain('second name');
    expect(names).not.toContain('first name');
  });

  it('deletes the viewer’s own search', async () => {
    await post('/saved', { name: 'to delete', params: 'q=gone' }, ben);
    const html = await (await h.get('/saved', ben)).text();
    const [id] = idsIn(html.slice(html.indexOf('to delete')));
    const res = await post(`/saved/${id}/delete`, {}, ben);
    expect(res.status).toBe(303);
    expect((await listed(ben)).has('to delete')).toBe(false);
  });
});

describe('refusals', () => {
  it('refuses a post from another site (403) and saves nothing', async () => {
    const res = await post('/saved', { name: 'forged', params: 'q=x' }, ann, 'https://evil.example');
    expect(res.status).toBe(403);
    expect((await listed(ann)).has('forged')).toBe(false);
  });

  it('answers a body that is no form 400 malformed, not as a server error', async () => {
    const res = await fetch(`${h.url}/saved`, {
      method: 'POST',
      headers: { ...ann, origin: h.url, 'content-type': 'multipart/form-data; boundary=x' },
      body: 'not parts at all',
    });
    expect(res.status).toBe(400);
    expect(await errorOf(res)).toMatchObject({ code: 400, details: [{ reason: 'malformed' }] });
  });

  it('refuses names and filters out of bounds, and bad filters, in the error body', async () => {
    const { nameChars, paramsBytes } = SAVED_SEARCH_LIMITS;
    const cases: [Record<string, string>, string][] = [
      [{ name: '   ', params: 'q=x' }, 'malformed'],
      [{ name: 'x'.repeat(nameChars + 1), params: 'q=x' }, 'malformed'],
      [{ name: 'tab\there', params: 'q=x' }, 'malformed'],
      [{ name: 'long', params: `q=${'x'.repeat(paramsBytes)}` }, 'too-large'],
      [{ name: 'bad', params: 'range=forever' }, 'malformed'],
      [{ name: 'missing' }, 'malformed'],
    ];
    for (const [fields, reason] of cases) {
      const res = await post('/saved', fields, ann);
      expect(res.status, JSON.stringify(fields).slice(0, 60)).toBe(400);
      expect(await errorOf(res)).toMatchObject({
        code: 400,
        status: 'INVALID_ARGUMENT',
        details: [{ reason }],
      });
    }
    // A browser is told the same on a page.
    const page = await post('/saved', { name: '', params: '' }, { ...ann, ...HTML });
    expect(page.status).toBe(400);
    expect(await page.text()).toContain(`name: 1 to ${nameChars} characters`);
  });

  it(`refuses a new name beyond ${SAVED_SEARCH_LIMITS.perViewer} searches, and takes an existing one`, async () => {
    for (let n = 0; n < SAVED_SEARCH_LIMITS.perViewer; n++) await saveSearch(h.db, 'cat', `s${n}`, 'q=x');
    const cat = asViewer('cat', ['team-a']);
    const res = await post('/saved', { name: 'one more', params: 'q=y' }, cat);
    expect(res.status).toBe(400);
    expect(await errorOf(res)).toMatchObject({
      status: 'FAILED_PRECONDITION',
      details: [{ reason: 'limit-reached', metadata: { limit: String(SAVED_SEARCH_LIMITS.perViewer) } }],
    });
    expect((await post('/saved', { name: 's0', params: 'q=y' }, cat)).status).toBe(303);
  });
});

describe('pills', () => {
  it('shows each filter with links that remove it or switch it off, and a switched-off one ignored', async () => {
    const html = await (
      await h.get('/events?subject=shared&off_source=urn:team-b:sensor', { ...ann, ...HTML })
    ).text();
    expect(html).toContain('subject: shared');
    expect(html).toContain(
      'href="/events?off_source=urn%3Ateam-b%3Asensor" aria-label="Remove subject: shared"',
    );
    expect(html).toContain(
      'href="/events?off_source=urn%3Ateam-b%3Asensor&amp;off_subject=shared" aria-label="Disable subject: shared"',
    );
    expect(html).toContain('aria-label="Enable source: urn:team-b:sensor"');
    // The switched-off source is no condition: ann's event still shows.
    expect(html).toContain('urn:team-a:sensor');
    // Every form that searches again carries it along.
    const forms = html.match(/<form method="get" action="\/events"/g) ?? [];
    expect(forms.length).toBeGreaterThanOrEqual(2);
    expect(html.match(/<input type="hidden" name="off_source" value="urn:team-b:sensor"/g)).toHaveLength(
      forms.length,
    );
  });
});

describe('with a login session', () => {
  const PASSWORD = 'saved searches test password';
  let s: Harness;

  beforeAll(async () => {
    s = await startLocalHarness('saved_session', PASSWORD, { asReader: true });
  });

  afterAll(async () => {
    await s?.close();
  });

  it("needs the session's form token from the page", async () => {
    const client = new Client();
    const login = await client.follow(`${s.url}/login`);
    await client.follow(
      `${s.url}/login`,
      form({ csrf: csrfOf(await login.res.text()), username: 'admin', password: PASSWORD }, s.url),
    );
    const page = await (await client.send(`${s.url}/events?q=boiler`)).text();
    const csrf = csrfOf(page);
    const without = await client.send(`${s.url}/saved`, form({ name: 'x', params: 'q=boiler' }, s.url));
    expect(without.status).toBe(403);
    const wrong = await client.send(
      `${s.url}/saved`,
      form({ name: 'x', params: 'q=boiler', csrf: 'x' }, s.url),
    );
    expect(wrong.status).toBe(403);
    const saved = await client.send(
      `${s.url}/saved`,
      form({ name: 'boiler', params: 'q=boiler', csrf }, s.url),
    );
    expect(saved.status).toBe(303);
    const list = await (await client.send(`${s.url}/saved`)).text();
    expect(list).toContain('href="/events?q=boiler" class="wrap">boiler</a>');
    const [id] = idsIn(list);
    expect((await client.send(`${s.url}/saved/${id}/delete`, form({}, s.url))).status).toBe(403);
    expect((await client.send(`${s.url}/saved/${id}/delete`, form({ csrf }, s.url))).status).toBe(303);
  });
});
