/** @jsxRuntime automatic @jsxImportSource hono/jsx */
/**
 * The search service's Hono app, built from explicit dependencies (service.ts, the tests and the
 * benchmark share it). Reads like the spec's endpoint table.
 */

import { ApiError, errorBody, errorHandler, notFoundHandler } from '@event-observatory/service-kit/errors';
import { down, type HealthCheck, healthRoutes, up } from '@event-observatory/service-kit/health';
import type { Logger } from '@event-observatory/service-kit/logger';
import { httpServerTimer } from '@event-observatory/service-kit/metrics';
import { traceRequests } from '@event-observatory/service-kit/tracing';
import {
  type DatabasePool,
  databaseAnswers,
  EMPTY_SCOPE,
  getEvent,
  type ReadScope,
  receiptOf,
  scopedPool,
} from '@event-observatory/store';
import { type Context, Hono } from 'hono';
import { contextStorage } from 'hono/context-storage';
import type { Registry } from 'prom-client';
import {
  DETAIL_SCRIPT,
  KEYS_SCRIPT,
  REFRESH_SCRIPT,
  STYLESHEET,
  SUGGEST_SCRIPT,
  TABLE_SCRIPT,
  TAIL_SCRIPT,
} from './assets.js';
import { sameOrigin } from './auth/csrf.js';
import { HISTOGRAM_SCRIPT, UPLOT_SCRIPT, UPLOT_STYLESHEET } from './chart-assets.js';
import type { CursorCodec } from './cursor.js';
import { EXPORT_LIMITS, type ExportLimits, exportHandler } from './export.js';
import { failureOf } from './failures.js';
import { parseReceipt, parseSearch, searchFilters } from './filters.js';
import { allowedHosts } from './hosts.js';
import type { SearchMeters } from './metrics.js';
import { rangeOf, runOverview } from './overview.js';
import { withinDeadline } from './page-deadline.js';
import { mergeQueryBar, readQueryBar } from './query-bar.js';
import { savedSearchRoutes } from './saved-searches.js';
import { BadCursorError, runSearch } from './search.js';
import { streamSlots } from './stream-slots.js';
import { MAX_SUGGEST_LINE, SUGGEST_TIMEOUT_MS, suggest } from './suggestions.js';
import { parseSurrounding, readSurrounding } from './surrounding.js';
import { type TailLimits, tailHandler } from './tail.js';
import { type Authenticator, openAccess, type SearchEnv } from './viewer.js';
import { ErrorPage } from './views/error.js';
import { EventPage } from './views/event.js';
import { OverviewPage } from './views/overview.js';
import { ReceiptPage } from './views/receipt.js';
import { SearchPage } from './views/search.js';
import { SurroundingPage } from './views/surrounding.js';
import { loadVisibility, type VisibilityPolicy } from './visibility.js';

export interface AppDeps {
  pool: DatabasePool;
  /** Where the saved searches are read and written: the primary when `pool` reads a replica, else `pool`. */
  primary?: DatabasePool;
  registry: Registry;
  meters: SearchMeters;
  cursors: CursorCodec;
  allowedHosts: readonly string[];
  /** Deadline of one page: its statements are cancelled when it passes or when the client leaves. */
  pageTimeoutMs: number;
  shutdown: AbortSignal;
  logger?: Logger;
  /** Live-tail poll period; default 1 s. */
  tailPollMs?: number;
  tailLimits?: TailLimits;
  /** Export caps; default `EXPORT_LIMITS`. */
  exportLimits?: ExportLimits;
  /** Whether reads may be served yet (`rowSecurityGate`); 503 `role-unverified` while not. */
  serving?: () => boolean;
  /** Finds the viewer of every route but health and assets; default `openAccess` (no login). */
  authenticate?: Authenticator;
  /** The external base URL (`SEARCH_PUBLIC_URL`): the origin form posts must come from. */
  publicUrl?: string;
  /** What each viewer may see (`SEARCH_VISIBILITY_FILE`); default no rules: only an open viewer sees. */
  visibility?: VisibilityPolicy;
  /** Readiness checks beside the database's: the bearer tokens' key sets. */
  checks?: Record<string, HealthCheck>;
}

/** Same-origin scripts and styles only; nothing from the store can run as code. */
const SECURITY_HEADERS = {
  'content-security-policy':
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self'; frame-ancestors 'none'; form-action 'self'; base-uri 'none'",
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'same-origin',
};

/** Health probes and static assets need no viewer; every other route does. */
const PUBLIC_PATH = /^\/(health\/|assets\/)/;

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export function buildApp(deps: AppDeps): Hono<SearchEnv> {
  const app = new Hono<SearchEnv>();
  const search = { pool: deps.pool, meters: deps.meters, cursors: deps.cursors };
  const visibility = deps.visibility ?? loadVisibility(undefined);
  /** What the request's viewer may see (set after the viewer, below): every read runs under it. */
  const scopeOf = (c: Context<SearchEnv>): ReadScope => c.get('scope') ?? EMPTY_SCOPE;
  /**
   * Runs a page's reads under its viewer's scope, on the pool bound to its deadline and to its
   * client staying connected.
   */
  const withReads = <T,>(c: Context<SearchEnv>, read: (pool: DatabasePool) => Promise<T>) =>
    withinDeadline(c.req.raw.signal, deps.pageTimeoutMs, (signal) =>
      read(scopedPool(deps.pool, scopeOf(c), signal)),
    );
  app.use(traceRequests());
  app.use(httpServerTimer(deps.registry));
  app.onError(errorHandler(deps.logger ? { logger: deps.logger } : {}));
  app.notFound(notFoundHandler(app));
  app.use(allowedHosts(deps.allowedHosts));
  app.use(sameOrigin(deps.publicUrl));
  // Lets the page header read the request's viewer without every page handing it down.
  app.use(contextStorage());
  app.use(async (c, next) => {
    await next();
    for (const [name, value] of Object.entries(SECURITY_HEADERS)) c.header(name, value);
    // Answers behind the login carry one viewer's events: no cache may keep them for the next
    // person, whichever way the viewer was known (session, proxy headers, bearer token).
    if (!PUBLIC_PATH.test(c.req.path)) c.header('cache-control', 'private, no-store');
  });
  const authenticate = deps.authenticate ?? openAccess;
  app.use((c, next) => (PUBLIC_PATH.test(c.req.path) ? next() : authenticate(c, next)));
  // Nothing is read for a viewer until PostgreSQL is known to enforce its scope (main.ts); the
  // login still answers who is asking.
  const { serving } = deps;
  if (serving)
    app.use((c, next) => {
      if (PUBLIC_PATH.test(c.req.path) || serving()) return next();
      throw new ApiError('Unavailable', 'search is still checking its database role; try again shortly', {
        reason: 'role-unverified',
        headers: { 'retry-after': '5' },
      });
    });
  app.use((c, next) => {
    const viewer = c.get('viewer');
    if (viewer) c.set('scope', visibility.scopeOf(viewer));
    return next();
  });

  app.get('/', async (c) => {
    const range = rangeOf(c.req.query('range'));
    if (!range)
      return c.html(<ErrorPage title="Unknown time range" message="range: expected 24h, 7d or 30d" />, 400);
    try {
      return c.html(<OverviewPage view={await withReads(c, (pool) => runOverview(pool, range))} />);
    } catch (err) {
      const f = failureOf(err);
      return c.html(<ErrorPage title={f.title} message={f.message} />, f.status);
    }
  });

  app.get('/events', async (c) => {
    const params = new URL(c.req.url).searchParams;
    const bar = params.get('bar');
    if (bar !== null) {
      // The query bar writes the same URL as the form: read it, then send the browser there.
      const read = readQueryBar(bar);
      if ('error' in read) return c.html(<SearchPage params={params} problems={[]} barError={read} />, 400);
      return c.redirect(`/events?${mergeQueryBar(params, read.params)}`, 303);
    }
    const parsed = parseSearch(params);
    if (parsed.problems.length > 0)
      return c.html(<SearchPage params={params} problems={parsed.problems} />, 400);
    try {
      return c.html(
        <SearchPage
          params={params}
          parsed={parsed}
          problems={[]}
          view={await withReads(c, (pool) => runSearch({ ...search, pool }, parsed))}
        />,
      );
    } catch (err) {
      if (err instanceof BadCursorError)
        return c.html(<SearchPage params={params} parsed={parsed} problems={[err.message]} />, 400);
      const f = failureOf(err);
      return c.html(<SearchPage params={params} parsed={parsed} problems={[]} failure={f} />, f.status);
    }
  });

  app.route('/', savedSearchRoutes(deps.primary ?? deps.pool));

  // The query bar's autocomplete: the viewer's own names only (the read scope), within a short deadline.
  app.get('/suggest', async (c) => {
    const line = c.req.query('bar') ?? '';
    if (line.length > MAX_SUGGEST_LINE)
      throw new ApiError('InvalidArgument', `bar: at most ${MAX_SUGGEST_LINE} characters`, {
        reason: 'invalid-filter',
      });
    try {
      const timeout = Math.min(deps.pageTimeoutMs, SUGGEST_TIMEOUT_MS);
      const suggestions = await withinDeadline(c.req.raw.signal, timeout, (signal) =>
        suggest(scopedPool(deps.pool, scopeOf(c), signal), line),
      );
      return c.json({ suggestions });
    } catch (err) {
      const f = failureOf(err);
      const code = f.status === 504 ? 'DeadlineExceeded' : 'Unavailable';
      return c.json(errorBody(code, f.message, { reason: 'suggestions-unavailable' }), f.status);
    }
  });

  const exportLimits = deps.exportLimits ?? EXPORT_LIMITS;
  const exports = streamSlots(exportLimits.perPod, exportLimits.perViewer);
  for (const format of ['ndjson', 'csv'] as const)
    app.get(
      `/events.${format}`,
      exportHandler({
        pool: deps.pool,
        format,
        scopeOf,
        slots: exports,
        maxAgeMs: exportLimits.maxAgeMs,
        logger: deps.logger,
      }),
    );

  app.get('/receipt', async (c) => {
    const params = new URL(c.req.url).searchParams;
    if (!params.has('topic')) return c.html(<ReceiptPage params={params} problems={[]} />);
    const q = parseReceipt(params);
    if ('problems' in q) return c.html(<ReceiptPage params={params} problems={q.problems} />, 400);
    try {
      return c.html(
        <ReceiptPage
          params={params}
          problems={[]}
          receipt={await withReads(c, (pool) => receiptOf(pool, q))}
        />,
      );
    } catch (err) {
      const f = failureOf(err);
      return c.html(<ErrorPage title={f.title} message={f.message} />, f.status);
    }
  });

  app.get(
    '/events/tail',
    tailHandler({
      ...search,
      scopeOf,
      shutdown: deps.shutdown,
      pollMs: deps.tailPollMs,
      limits: deps.tailLimits,
    }),
  );

  /** The event an `/events/{uid}?t=…` link names (its uid lower-cased), or undefined for a malformed link. */
  const linkedEvent = (c: Context<SearchEnv>) => {
    const uid = c.req.param('uid') ?? '';
    const t = c.req.query('t');
    if (!UUID.test(uid) || (t !== undefined && !/^[0-9: .+-]{10,40}$/.test(t))) return undefined;
    return { uid: uid.toLowerCase(), t };
  };
  const noSuchLink = (c: Context<SearchEnv>) =>
    c.html(<ErrorPage title="No such event" message="The link does not name an event." />, 404);
  const noSuchEvent = (c: Context<SearchEnv>) =>
    c.html(<ErrorPage title="No such event" message="No stored event has this id and time." />, 404);

  app.get('/events/:uid', async (c) => {
    const link = linkedEvent(c);
    if (!link) return noSuchLink(c);
    try {
      const event = await withReads(c, (pool) => getEvent(pool, link.uid, link.t));
      if (!event) return noSuchEvent(c);
      return c.html(<EventPage event={event} search={searchFilters(new URL(c.req.url).searchParams)} />);
    } catch (err) {
      const f = failureOf(err);
      return c.html(<ErrorPage title={f.title} message={f.message} />, f.status);
    }
  });

  app.get('/events/:uid/surrounding', async (c) => {
    const link = linkedEvent(c);
    if (!link) return noSuchLink(c);
    const request = parseSurrounding(new URL(c.req.url).searchParams);
    if ('problems' in request)
      return c.html(<ErrorPage title="Unusable parameters" message={request.problems.join('; ')} />, 400);
    try {
      const view = await withReads(c, (pool) => readSurrounding(pool, link.uid, link.t, request));
      if (!view) return noSuchEvent(c);
      return c.html(<SurroundingPage view={view} request={request} />);
    } catch (err) {
      const f = failureOf(err);
      return c.html(<ErrorPage title={f.title} message={f.message} />, f.status);
    }
  });

  for (const [path, sheet] of [
    ['/assets/site.css', STYLESHEET],
    ['/assets/uplot.css', UPLOT_STYLESHEET],
  ] as const)
    app.get(path, (c) =>
      c.body(sheet, 200, { 'content-type': 'text/css; charset=utf-8', 'cache-control': 'max-age=3600' }),
    );
  for (const [path, script] of [
    ['/assets/tail.js', TAIL_SCRIPT],
    ['/assets/detail.js', DETAIL_SCRIPT],
    ['/assets/keys.js', KEYS_SCRIPT],
    ['/assets/table.js', TABLE_SCRIPT],
    ['/assets/refresh.js', REFRESH_SCRIPT],
    ['/assets/suggest.js', SUGGEST_SCRIPT],
    ['/assets/uplot.js', UPLOT_SCRIPT],
    ['/assets/histogram.js', HISTOGRAM_SCRIPT],
  ] as const)
    app.get(path, (c) =>
      c.body(script, 200, {
        'content-type': 'text/javascript; charset=utf-8',
        'cache-control': 'max-age=3600',
      }),
    );
  app.route(
    '/',
    healthRoutes({
      checks: {
        database: async () => {
          return (await databaseAnswers(deps.pool)) ? up() : down('unexpected answer');
        },
        ...deps.checks,
      },
    }),
  );
  return app;
}
