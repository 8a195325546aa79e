import { Hono } from 'hono';
import { bodyLimit } from 'hono/body-limit';
import { HTTPException } from 'hono/http-exception';
import { describe, expect, it } from 'vitest';
import {
  ApiError,
  ERROR_KINDS,
  errorBody,
  errorHandler,
  notFoundHandler,
  statusForHttpCode,
} from './index.js';

describe('error body', () => {
  it('has the spec shape with code, message, status and ErrorInfo details', () => {
    expect(
      errorBody('PayloadTooLarge', 'event body exceeds 1048576 bytes', {
        reason: 'too-large',
        metadata: { limit: 1048576 },
      }),
    ).toEqual({
      error: {
        code: 413,
        message: 'event body exceeds 1048576 bytes',
        status: 'RESOURCE_EXHAUSTED',
        details: [{ reason: 'too-large', domain: 'observatory.events', metadata: { limit: '1048576' } }],
      },
    });
  });

  it('maps each spec kind to its HTTP status and canonical status', () => {
    const pairs = Object.fromEntries(
      Object.entries(ERROR_KINDS).map(([k, v]) => [k, `${v.code} ${v.status}`]),
    );
    expect(pairs).toMatchObject({
      InvalidArgument: '400 INVALID_ARGUMENT',
      OutOfRange: '400 OUT_OF_RANGE',
      Unauthorized: '401 UNAUTHENTICATED',
      Forbidden: '403 PERMISSION_DENIED',
      PayloadTooLarge: '413 RESOURCE_EXHAUSTED',
      Unavailable: '503 UNAVAILABLE',
      NotFound: '404 NOT_FOUND',
      Internal: '500 INTERNAL',
    });
  });

  it('has empty details without a reason and a chosen domain when given', () => {
    expect(errorBody('Unavailable', 'broker unreachable').error.details).toEqual([]);
    expect(
      errorBody('InvalidArgument', 'x', { reason: 'malformed', domain: 'observatory.admin' }).error
        .details[0],
    ).toEqual({
      reason: 'malformed',
      domain: 'observatory.admin',
      metadata: {},
    });
  });

  it('maps bare HTTP codes with the google.rpc.Code table', () => {
    expect(
      [400, 401, 403, 404, 408, 409, 413, 415, 429, 431, 500, 503, 504, 502].map(statusForHttpCode),
    ).toEqual([
      'INVALID_ARGUMENT',
      'UNAUTHENTICATED',
      'PERMISSION_DENIED',
      'NOT_FOUND',
      'DEADLINE_EXCEEDED',
      'ABORTED',
      'RESOURCE_EXHAUSTED',
      'FAILED_PRECONDITION',
      'RESOURCE_EXHAUSTED',
      'RESOURCE_EXHAUSTED',
      'INTERNAL',
      'UNAVAILABLE',
      'DEADLINE_EXCEEDED',
      'INTERNAL',
    ]);
  });
});

describe('Hono handlers', () => {
  const logged: { level: string; entry: object }[] = [];
  const at = (level: string) => (entry: object) => void logged.push({ level, entry });
  const logger = { debug: at('debug'), info: at('info'), warn: at('warn'), error: at('error') };
  const app = new Hono();
  app.onError(errorHandler({ logger }));
  app.notFound(notFoundHandler());
  app.post('/api-error', () => {
    throw new ApiError('OutOfRange', 'time is 3 days in the future', {
      reason: 'invalid-attributes',
      metadata: { maxFutureSkew: '24h' },
      headers: { 'retry-after': '0' },
    });
  });
  app.post('/shed', () => {
    throw new ApiError('Unavailable', 'the send queue is full', {
      reason: 'unpersistable',
      metadata: { failure: 'queue-full' },
    });
  });
  app.post('/json', async (c) => c.json(await c.req.json()));
  app.post('/limited', bodyLimit({ maxSize: 4 }), (c) => c.text('ok'));
  app.get('/http-exception', () => {
    throw new HTTPException(401, {
      res: new Response('x', { status: 401, headers: { 'www-authenticate': 'Bearer' } }),
      message: 'nope',
    });
  });
  app.get('/crash', () => {
    throw new TypeError('secret internals');
  });

  async function call(path: string, init?: RequestInit) {
    const res = await app.request(path, init);
    return { res, body: (await res.json()) as { error: Record<string, unknown> } };
  }

  it('answers an ApiError with its kind, details and headers', async () => {
    const { res, body } = await call('/api-error', { method: 'POST' });
    expect(res.status).toBe(400);
    expect(res.headers.get('retry-after')).toBe('0');
    expect(body.error).toMatchObject({ code: 400, status: 'OUT_OF_RANGE' });
  });

  it('answers malformed JSON with 400 INVALID_ARGUMENT reason malformed', async () => {
    const { res, body } = await call('/json', {
      method: 'POST',
      body: '{"a":',
      headers: { 'content-type': 'application/json' },
    });
    expect(res.status).toBe(400);
    expect(body.error).toMatchObject({
      code: 400,
      status: 'INVALID_ARGUMENT',
      details: [{ reason: 'malformed' }],
    });
  });

  it("gives hono's own HTTPException the spec body, keeping its headers", async () => {
    const limited = await call('/limited', { method: 'POST', body: 'too long' });
    expect(limited.res.status).toBe(413);
    expect(limited.body.error).toMatchObject({ code: 413, status: 'RESOURCE_EXHAUSTED', details: [] });
    const { res, body } = await call('/http-exception');
    expect(res.status).toBe(401);
    expect(res.headers.get('www-authenticate')).toBe('Bearer');
    expect(body.error).toEqual({ code: 401, message: 'nope', status: 'UNAUTHENTICATED', details: [] });
  });

  it('answers an unexpected error with 500 INTERNAL without its message, and logs it', async () => {
    const { res, body } = await call('/crash');
    expect(res.status).toBe(500);
    expect(body.error).toEqual({ code: 500, message: 'internal error', status: 'INTERNAL', details: [] });
    expect(JSON.stringify(body)).not.toContain('secret internals');
    expect(logged.at(-1)).toMatchObject({ level: 'error', entry: { path: '/crash' } });
  });

  it('logs a 503 (shedding, a dependency down) at debug, not as an error per request', async () => {
    logged.length = 0;
    const { res, body } = await call('/shed', { method: 'POST' });
    expect(res.status).toBe(503);
    expect(body.error).toMatchObject({
      status: 'UNAVAILABLE',
      details: [{ metadata: { failure: 'queue-full' } }],
    });
    expect(logged).toEqual([
      { level: 'debug', entry: { path: '/shed', reason: 'unpersistable', failure: 'queue-full' } },
    ]);
  });

  it('answers an unknown route with 404 NOT_FOUND in the same shape', async () => {
    const { res, body } = await call('/nowhere');
    expect(res.status).toBe(404);
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    expect(body.error).toMatchObject({ code: 404, status: 'NOT_FOUND', details: [] });
  });
});

describe('undeclared methods on a declared path', () => {
  const app = new Hono();
  app.notFound(notFoundHandler(app));
  app.use('/v1/*', async (_c, next) => next());
  app.post('/v1/events', (c) => c.text('created'));
  app.post('/v1/events:batchCreate', (c) => c.text('batch'));
  app.get('/v1/events/:event', (c) => c.text('one'));
  app.delete('/v1/events/:event', (c) => c.text('gone'));

  it('answers 405 UNIMPLEMENTED with Allow naming the declared methods, in the spec body', async () => {
    for (const [method, path, allow] of [
      ['GET', '/v1/events', 'POST'],
      ['DELETE', '/v1/events:batchCreate', 'POST'],
      ['PUT', '/v1/events/e-1', 'DELETE, GET, HEAD'],
    ] as const) {
      const res = await app.request(path, { method });
      expect(res.status, `${method} ${path}`).toBe(405);
      expect(res.headers.get('allow')).toBe(allow);
      expect(await res.json()).toEqual({
        error: {
          code: 405,
          message: `${method} is not allowed on ${path}`,
          status: 'UNIMPLEMENTED',
          details: [],
        },
      });
    }
  });

  it('still answers 404 for a path no route declares, and serves the declared methods', async () => {
    expect((await app.request('/v1/nothing', { method: 'GET' })).status).toBe(404);
    expect((await app.request('/elsewhere', { method: 'POST' })).status).toBe(404);
    expect(await (await app.request('/v1/events', { method: 'POST' })).text()).toBe('created');
    expect((await app.request('/v1/events/e-1', { method: 'HEAD' })).status).toBe(200);
  });
});
