import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ForgeClient } from './client.js';
import { nextPageOf, pageOfLink, parseLinkHeader } from './paging.js';

describe('Link header', () => {
  it('parses Gitea links (absolute URLs carrying the limit asked for)', () => {
    const links = parseLinkHeader(
      '<http://h/api/v1/repos/o/r/pulls?limit=50&page=2&state=all>; rel="next",<http://h/api/v1/repos/o/r/pulls?limit=50&page=3&state=all>; rel="last"',
    );
    expect(pageOfLink(links.get('next'))).toEqual({ page: 2, pageSize: 50 });
    expect(pageOfLink(links.get('last'))).toEqual({ page: 3, pageSize: 50 });
    expect(parseLinkHeader(undefined).size).toBe(0);
    expect(parseLinkHeader('garbage').size).toBe(0);
  });

  it('follows next when there is one and stops when only prev/first remain', () => {
    expect(nextPageOf(1, 50, 4, { link: '<x?page=2&limit=50>; rel="next"' })).toEqual({
      page: 2,
      pageSize: 50,
    });
    expect(nextPageOf(3, 50, 4, { link: '<x?page=1&limit=50>; rel="first"' })).toBeUndefined();
  });

  it('detects a silent cap from the total count when no Link header is sent', () => {
    // asked 50, server capped at 4: 4 items of 10 seen, so there is a page 2
    expect(nextPageOf(1, 50, 4, { totalCount: 10 })).toEqual({ page: 2, pageSize: 50 });
    // a short last page cannot be told from a capped one: one extra (empty) page is read, no item is lost
    expect(nextPageOf(3, 50, 2, { totalCount: 10 })).toEqual({ page: 4, pageSize: 50 });
    expect(nextPageOf(2, 50, 3, { totalCount: 6 })).toBeUndefined();
    expect(nextPageOf(1, 50, 0, { totalCount: 10 })).toBeUndefined();
  });

  it('reads on past an empty page while the total says rows lie beyond it', () => {
    // Gitea's reviews: a page of 2 cut first, then two hidden drafts dropped; 5 rows in all.
    expect(nextPageOf(1, 2, 0, { totalCount: 5 })).toEqual({ page: 2, pageSize: 2 });
    expect(nextPageOf(2, 2, 0, { totalCount: 5 })).toEqual({ page: 3, pageSize: 2 });
    expect(nextPageOf(3, 2, 0, { totalCount: 5 })).toBeUndefined();
  });

  it('without headers, walks until an empty page', () => {
    expect(nextPageOf(1, 10, 10, {})).toEqual({ page: 2, pageSize: 10 });
    expect(nextPageOf(2, 10, 0, {})).toBeUndefined();
  });
});

describe('iterating a capped listing', () => {
  const CAP = 3;
  const TOTAL = 8;
  const requested: string[] = [];
  // Emulates Gitea: caps `limit` silently, numbers pages with the cap, keeps the asked limit in links.
  const server = http.createServer((req, res) => {
    requested.push(req.url ?? '');
    const url = new URL(req.url ?? '/', 'http://x');
    const page = Number(url.searchParams.get('page') ?? '1');
    const size = Math.min(Number(url.searchParams.get('limit') ?? '30'), CAP);
    const from = (page - 1) * size;
    const items = Array.from({ length: Math.max(0, Math.min(size, TOTAL - from)) }, (_, i) => ({
      id: from + i + 1,
      number: from + i + 1,
      state: 'open',
      base: { repo_id: 1 },
      head: { repo_id: 1 },
    }));
    const links: string[] = [];
    const link = (p: number, rel: string) => {
      url.searchParams.set('page', String(p));
      links.push(`<http://elsewhere.invalid${url.pathname}?${url.searchParams}>; rel="${rel}"`);
    };
    if (from + size < TOTAL) link(page + 1, 'next');
    if (page > 1) link(1, 'first');
    res.writeHead(200, {
      'content-type': 'application/json',
      'x-total-count': String(TOTAL),
      ...(links.length ? { link: links.join(',') } : {}),
    });
    res.end(JSON.stringify(items));
  });
  let client: ForgeClient;

  beforeAll(async () => {
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    client = ForgeClient.create({
      baseUri: `http://127.0.0.1:${(server.address() as AddressInfo).port}/api/v1`,
      userAgent: 'unit/1.0',
    });
  });
  afterAll(async () => {
    client.close();
    server.closeAllConnections();
    await new Promise((r) => server.close(r));
  });

  it('reads every item once although the server gave fewer than asked per page', async () => {
    const all = await client.pulls.listAll({ owner: 'o', repo: 'r' }, { state: 'all' }, { pageSize: 50 });
    expect(all.ok && all.value.map((p) => p.number)).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);
    // Links point at another host (a proxy's ROOT_URL): only page and limit were taken from them.
    expect(requested).toHaveLength(3);
    expect(requested.every((u) => u.startsWith('/api/v1/repos/o/r/pulls?'))).toBe(true);
  });

  it('yields page results one by one from the async iterator', async () => {
    const pages: number[] = [];
    for await (const page of client.pulls.iterate({ owner: 'o', repo: 'r' }, {}, { pageSize: 50 })) {
      if (!page.ok) throw new Error('page failed');
      pages.push(page.value.page);
      expect(page.value.totalCount).toBe(TOTAL);
    }
    expect(pages).toEqual([1, 2, 3]);
  });

  it('starts at the given page', async () => {
    const pages: number[] = [];
    for await (const page of client.pulls.iterate({ owner: 'o', repo: 'r' }, {}, { page: 2, pageSize: 3 })) {
      if (page.ok) pages.push(page.value.page);
    }
    expect(pages).toEqual([2, 3]);
  });
});
