import type { Context, MiddlewareHandler } from 'hono';
import { matchedRoutes } from 'hono/route';
import type { Registry } from 'prom-client';
import { cappedLabel } from './capped-label.js';
import { ladders } from './ladders.js';
import { type Clock, createTimer } from './meters.js';

/** The meter name of the spec. */
export const HTTP_SERVER_REQUESTS = 'http_server_requests_seconds';

/** The spec's closed `outcome` set, as far as an HTTP request can have it. */
export type HttpOutcome = 'success' | 'failure';

/** `uri` values used when no endpoint route matched, as Micrometer spells them. */
export const UNMATCHED_URI = {
  notFound: 'NOT_FOUND',
  redirection: 'REDIRECTION',
  unknown: 'UNKNOWN',
} as const;

export interface HttpServerTimerOptions {
  /** Distinct `uri` values kept; later new ones are dropped silently. Default 100. */
  maxUris?: number;
  /** Further paths never timed, in addition to the built-in exclusions. */
  exclude?: (path: string) => boolean;
  /** Ladder in seconds; default `ladders.httpServer` (5 ms to 10 s). */
  buckets?: readonly number[];
  clock?: Clock;
}

/**
 * The paths that are never timed: `/metrics`, `/health` and `/health/*`, `/openapi.*` (json, yaml,
 * ...) and `/docs` with anything under it.
 */
export function isUntimedPath(path: string): boolean {
  return (
    path === '/metrics' ||
    path === '/health' ||
    path.startsWith('/health/') ||
    /^\/openapi\.[^/]+$/.test(path) ||
    path === '/docs' ||
    path.startsWith('/docs/')
  );
}

/**
 * The outcome of an HTTP status: `success` below 400, `failure` for every error status (and
 * anything outside 100-599); the `status` tag keeps the class.
 */
export function outcomeOf(status: number): HttpOutcome {
  return status >= 100 && status < 400 ? 'success' : 'failure';
}

/**
 * The route template that handled (or would have handled) the request, never the raw path:
 * the endpoint route the router dispatched to; when a middleware answered first (e.g. 401 from
 * auth) the endpoint it stood in front of; with no endpoint matched, `NOT_FOUND` for a 404,
 * `REDIRECTION` for a 3xx and `UNKNOWN` otherwise.
 */
export function uriTemplate(c: Context, status: number): string {
  const routes = matchedRoutes(c);
  const isEndpoint = (r: (typeof routes)[number]) => r.method !== 'ALL' || r.handler.length < 2;
  const from = Math.max(0, c.req.routeIndex);
  const endpoint = routes.slice(from).find(isEndpoint);
  if (endpoint) return endpoint.path;
  if (status === 404) return UNMATCHED_URI.notFound;
  if (status >= 300 && status < 400) return UNMATCHED_URI.redirection;
  return UNMATCHED_URI.unknown;
}

/**
 * Hono middleware timing every request into `http_server_requests_seconds{method,uri,status,outcome}`
 * (ladder 5 ms to 10 s, plus `_max`). `uri` is the matched route template, capped at 100 distinct
 * values (later new ones are dropped silently); health, metrics and documentation routes are not
 * timed. Register it first, on the top-level app, so it sees every route.
 *
 * @example
 * ```ts
 * const app = new Hono();
 * app.use(httpServerTimer(registry));
 * app.post('/v1/events', createEvent);
 * ```
 */
export function httpServerTimer(registry: Registry, opts: HttpServerTimerOptions = {}): MiddlewareHandler {
  const uris = cappedLabel(opts.maxUris ?? 100);
  const timer = createTimer(registry, {
    name: HTTP_SERVER_REQUESTS,
    help: 'HTTP server requests by method, matched route template, status and outcome',
    labelNames: ['method', 'uri', 'status', 'outcome'],
    buckets: opts.buckets ?? ladders.httpServer,
    ...(opts.clock ? { clock: opts.clock } : {}),
  });
  const exclude = opts.exclude;
  return async function httpServerTimerMiddleware(c, next) {
    const path = c.req.path;
    if (isUntimedPath(path) || exclude?.(path)) return next();
    const stop = timer.start();
    let status = 500; // when next() throws past every error handler
    try {
      await next();
      status = c.res.status;
    } finally {
      const uri = uriTemplate(c, status);
      if (uris.admit(uri))
        stop({ method: c.req.method, uri, status: String(status), outcome: outcomeOf(status) });
    }
  };
}
