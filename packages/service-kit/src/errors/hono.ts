import type { Context, ErrorHandler, NotFoundHandler } from 'hono';
import { HTTPException } from 'hono/http-exception';
import type { ContentfulStatusCode } from 'hono/utils/http-status';
import type { Logger } from '../logger/index.js';
import { ApiError, DEFAULT_ERROR_DOMAIN, type ErrorResponseBody, statusForHttpCode } from './api-error.js';
import { declaredMethods, type RoutedApp } from './methods.js';

/** Answers with an `ApiError`'s body, status and headers. */
export function errorResponse(c: Context, err: ApiError): Response {
  return c.json(err.toBody(), err.code as ContentfulStatusCode, err.headers);
}

/**
 * Hono `onError` handler giving every failure the spec's body:
 * - `ApiError`: its own kind, details and headers;
 * - hono's `HTTPException` (body limit, validators, ...): its HTTP status with the canonical
 *   status for it (google.rpc.Code mapping), keeping headers such as `WWW-Authenticate`;
 * - a `SyntaxError` (from `c.req.json()` on malformed JSON): 400 INVALID_ARGUMENT, reason
 *   `malformed`;
 * - anything else: 500 INTERNAL with a fixed message (the error itself is logged, not returned).
 *
 * @example
 * ```ts
 * const app = new Hono();
 * app.onError(errorHandler({ logger }));
 * app.notFound(notFoundHandler());
 * ```
 */
export function errorHandler(opts: { logger?: Logger; domain?: string } = {}): ErrorHandler {
  const domain = opts.domain ?? DEFAULT_ERROR_DOMAIN;
  return (err, c) => {
    if (err instanceof ApiError) {
      // A 503 is the service shedding load or waiting out a dependency, which its metrics count
      // and its readiness tells: a line with a stack per refused request would flood the log
      // exactly when the service is busiest.
      if (err.code === 503) opts.logger?.debug({ path: c.req.path, ...unavailableCause(err) }, err.message);
      else if (err.code >= 500) opts.logger?.error({ err, path: c.req.path }, err.message);
      return errorResponse(c, err);
    }
    if (err instanceof HTTPException) {
      const headers: Record<string, string> = {};
      err.res?.headers.forEach((value, name) => {
        if (name !== 'content-type' && name !== 'content-length') headers[name] = value;
      });
      const body: ErrorResponseBody = {
        error: {
          code: err.status,
          message: err.message || defaultMessage(err.status),
          status: statusForHttpCode(err.status),
          details: [],
        },
      };
      if (err.status >= 500) opts.logger?.error({ err, path: c.req.path }, 'request failed');
      return c.json(body, err.status as ContentfulStatusCode, headers);
    }
    if (err instanceof SyntaxError) {
      return errorResponse(
        c,
        new ApiError('InvalidArgument', 'request body is not valid JSON', { reason: 'malformed', domain }),
      );
    }
    opts.logger?.error({ err, path: c.req.path }, 'unhandled error');
    return errorResponse(c, new ApiError('Internal', 'internal error'));
  };
}

/**
 * Hono `notFound` handler: 404 NOT_FOUND in the spec's body. Given the app, a path the app declares
 * for other methods is answered 405 `UNIMPLEMENTED` with `Allow` listing them instead (README:
 * gRPC has no code for it; `UNIMPLEMENTED` is what grpc-gateway answers a 405 with).
 *
 * @example
 * ```ts
 * app.notFound(notFoundHandler(app));
 * ```
 */
export function notFoundHandler(app?: RoutedApp): NotFoundHandler {
  const allowed = app ? declaredMethods(app) : () => [];
  return (c) => {
    const methods = allowed(c.req.path);
    if (methods.length > 0) {
      return errorResponse(
        c,
        new ApiError('MethodNotAllowed', `${c.req.method} is not allowed on ${c.req.path}`, {
          headers: { allow: methods.join(', ') },
        }),
      );
    }
    return errorResponse(c, new ApiError('NotFound', `no route for ${c.req.method} ${c.req.path}`));
  };
}

function defaultMessage(code: number): string {
  if (code === 413) return 'request body too large';
  if (code >= 500) return 'internal error';
  return 'request refused';
}

/** The ErrorInfo reason and `failure` of a 503, for its log line. */
function unavailableCause(err: ApiError): { reason?: string; failure?: string } {
  const info = err.details[0];
  return { reason: info?.reason, failure: info?.metadata.failure };
}
