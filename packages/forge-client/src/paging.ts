/**
 * Pages and the iterator over them. The next page is found from the `Link` header; only its `page`
 * and `limit` are used, re-applied to our own base URI, so a server whose ROOT_URL differs from the
 * address we use (a proxy) still works and credentials never follow a link to another host. Under
 * a silent cap Gitea keeps the `limit` asked for in its links but numbers pages by the size it
 * applied, so following the links stays exact (see {@link nextPageOf}).
 */

import type { CallContext, ForgeResult } from './result.js';

/** One page of a listing. */
export interface Page<T> {
  readonly items: readonly T[];
  /** The page number that was read (1-based). */
  readonly page: number;
  /** Where the next page is, when there is one. */
  readonly next?: { readonly page: number; readonly pageSize: number };
  /** `X-Total-Count`, when sent. */
  readonly totalCount?: number;
  readonly context: CallContext;
}

/** Parses an RFC 8288 Link header into rel -> URL. */
export function parseLinkHeader(value: string | undefined): Map<string, string> {
  const out = new Map<string, string>();
  if (!value) return out;
  for (const part of value.split(/,(?=\s*<)/)) {
    const m = /^\s*<([^>]*)>\s*((?:;[^;]*)*)$/.exec(part);
    if (!m) continue;
    const [, target, params] = m;
    const rel = /;\s*rel\s*=\s*"?([^";]+)"?/i.exec(params ?? '');
    if (rel?.[1] && target !== undefined)
      for (const r of rel[1].trim().split(/\s+/)) out.set(r.toLowerCase(), target);
  }
  return out;
}

/** Page and limit of a link target, when both are positive integers. */
export function pageOfLink(target: string | undefined): { page: number; pageSize?: number } | undefined {
  if (!target) return undefined;
  let url: URL;
  try {
    url = new URL(target, 'http://placeholder.invalid');
  } catch {
    return undefined;
  }
  const page = Number(url.searchParams.get('page'));
  if (!Number.isSafeInteger(page) || page < 1) return undefined;
  const limitRaw = url.searchParams.get('limit');
  const limit = limitRaw === null ? undefined : Number(limitRaw);
  return {
    page,
    ...(limit !== undefined && Number.isSafeInteger(limit) && limit > 0 ? { pageSize: limit } : {}),
  };
}

/**
 * Works out the next page from the response. Link header first (Gitea keeps the `limit` asked for
 * in its links but numbers pages with the size it applied, so following the link stays correct
 * under a silent cap). Without a Link header, `X-Total-Count`: the walk goes on while a non-empty
 * page, taken as full, leaves items unseen. A page shorter than asked is never taken as the last
 * one, since a capped server returns short pages all along (at worst one extra empty page is read).
 * An empty page ends the walk, unless the total count says more rows lie past `page` full pages of
 * the size asked (a server that filters a page after cutting it, as Gitea's reviews endpoint does).
 */
export function nextPageOf(
  page: number,
  asked: number,
  itemCount: number,
  headers: { link?: string; totalCount?: number },
): { page: number; pageSize: number } | undefined {
  const links = parseLinkHeader(headers.link);
  if (links.size > 0) {
    const next = pageOfLink(links.get('next'));
    return next ? { page: next.page, pageSize: next.pageSize ?? asked } : undefined;
  }
  if (itemCount === 0) {
    // Empty, yet the total says rows lie past every row these pages can have held: Gitea's reviews
    // endpoint cuts a page first and then drops the drafts the caller may not see, so a page can
    // come back empty in the middle of the list.
    const more = headers.totalCount !== undefined && page * asked < headers.totalCount;
    return more ? { page: page + 1, pageSize: asked } : undefined;
  }
  if (headers.totalCount !== undefined) {
    return page * itemCount < headers.totalCount ? { page: page + 1, pageSize: asked } : undefined;
  }
  return { page: page + 1, pageSize: asked };
}

/**
 * Walks every page. Yields each page's result; after a failure it yields that failure and stops.
 *
 * @example
 * for await (const page of paginate((p) => client.pulls.list(repo, { state: 'all' }, p))) {
 *   if (!page.ok) { console.error(describeFailure(page.failure)); break; }
 *   for (const pr of page.value.items) console.log(pr.number, pr.title);
 * }
 */
export async function* paginate<T>(
  fetchPage: (paging: { page: number; pageSize?: number }) => Promise<ForgeResult<Page<T>>>,
  start: { page?: number; pageSize?: number } = {},
): AsyncGenerator<ForgeResult<Page<T>>, void, undefined> {
  let paging: { page: number; pageSize?: number } = {
    page: start.page ?? 1,
    ...(start.pageSize ? { pageSize: start.pageSize } : {}),
  };
  const seen = new Set<number>();
  for (;;) {
    if (seen.has(paging.page)) return; // a server looping on the same page ends the walk
    seen.add(paging.page);
    const result = await fetchPage(paging);
    yield result;
    if (!result.ok || !result.value.next) return;
    paging = result.value.next;
  }
}

/** Reads every page into one list; the first failure is returned instead. */
export async function collectAll<T>(
  fetchPage: (paging: { page: number; pageSize?: number }) => Promise<ForgeResult<Page<T>>>,
  start: { page?: number; pageSize?: number } = {},
): Promise<ForgeResult<T[]>> {
  const items: T[] = [];
  let context: CallContext | undefined;
  for await (const page of paginate(fetchPage, start)) {
    if (!page.ok) return page;
    items.push(...page.value.items);
    context = page.value.context;
  }
  // paginate always yields at least one page, so context is set.
  return { ok: true, value: items, context: context as CallContext };
}
