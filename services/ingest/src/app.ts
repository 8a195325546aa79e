/**
 * The ingestion service's Hono app from explicit dependencies (`service.ts` composes them): reads
 * like the spec's endpoint table. The rules live in `ingest.ts` (one event) and `batch.ts`.
 */

import { type AuthVariables, requireAuth, type Verifier } from '@event-observatory/service-kit/auth';
import { type ApiError, errorHandler, notFoundHandler } from '@event-observatory/service-kit/errors';
import { type HealthCheck, healthRoutes } from '@event-observatory/service-kit/health';
import type { Logger } from '@event-observatory/service-kit/logger';
import { httpServerTimer } from '@event-observatory/service-kit/metrics';
import { requestHeader, requestHeaderPairs } from '@event-observatory/service-kit/server';
import { traceRequests } from '@event-observatory/service-kit/tracing';
import type { HttpBindings } from '@hono/node-server';
import { OpenAPIHono } from '@hono/zod-openapi';
import type { Context } from 'hono';
import type { Registry } from 'prom-client';
import { chargeOf, type InFlightBudget } from './admission.js';
import type { BatchCreateResponse, BatchIngestor } from './batch.js';
import { readBodyLimited } from './body.js';
import type { Limits } from './config.js';
import { addDocsRoutes } from './docs.js';
import type { EventAdmission } from './event-admission.js';
import { errorBodyOf, type Ingestor, toApiError } from './ingest.js';
import { producerHeader } from './producer.js';
import { batchCreateRoute, createEventRoute, validateRoute } from './routes.js';

export interface AppDeps {
  ingestor: Ingestor;
  batch: BatchIngestor;
  verifier: Verifier;
  registry: Registry;
  limits: Pick<Limits, 'maxEventBytes' | 'maxBatchBytes'>;
  /** Bytes of requests in flight (`INGEST_MAX_INFLIGHT_BYTES`). */
  budget: InFlightBudget;
  /** The adaptive limit on events in flight (create and batch create only: validate publishes nothing). */
  events: EventAdmission;
  /** Readiness checks by the field they fill in the body (`broker`, ...). */
  checks: Record<string, HealthCheck>;
  version: string;
  logger?: Logger;
}

type Env = { Bindings: HttpBindings; Variables: AuthVariables };

/** A too-large refusal while the client may still be sending: close the connection after it. */
function closing(err: ApiError): ApiError {
  if (err.code === 413) err.headers.connection = 'close';
  return err;
}

/**
 * A batch's latency sample for the event limit: failed when an element failed as unavailable,
 * none when no element was published (`EventPermit.measure`).
 */
function publishedAll(response: BatchCreateResponse): boolean | undefined {
  if (response.entries.some((e) => 'error' in e && e.error.code === 503)) return false;
  return response.created > 0 ? true : undefined;
}

export function buildApp(deps: AppDeps): OpenAPIHono<Env> {
  const { ingestor, batch, limits } = deps;
  const app = new OpenAPIHono<Env>();
  /**
   * Runs a request's work within the in-flight budget (503 at once when it does not fit); `read`
   * reads its body under `limit`.
   */
  const admitted = <T>(
    c: Context<Env>,
    limit: number,
    work: (read: () => Promise<Uint8Array>) => Promise<T>,
    what?: string,
  ): Promise<T> => {
    const declared = requestHeader(c, 'content-length');
    return deps.budget.run(chargeOf(declared, limit), () =>
      work(() => readBodyLimited(c.req.raw, c.env?.incoming, declared, limit, what)),
    );
  };
  /** Runs a request's work; a refusal is counted under its reason and answered with the spec's error. */
  const refusing = async <T>(work: () => Promise<T>): Promise<T> => {
    try {
      return await work();
    } catch (err) {
      const api = closing(toApiError(err));
      ingestor.rejected(api);
      throw api;
    }
  };

  app.use(httpServerTimer(deps.registry));
  app.onError(errorHandler(deps.logger ? { logger: deps.logger } : {}));
  app.notFound(notFoundHandler(app));
  // Authentication before tracing: a refused request opens no span, so its `traceparent` can
  // neither force sampling nor join a caller's trace.
  app.use('/v1/*', requireAuth(deps.verifier));
  app.use(traceRequests());

  app.openapi(createEventRoute, async (c) => {
    const created = await refusing(() =>
      admitted(c, limits.maxEventBytes, (read) =>
        deps.events.run(1, async (permit) => {
          const body = await read();
          return permit.measure(() =>
            ingestor.create(requestHeaderPairs(c), body, producerHeader(c.get('principal'))),
          );
        }),
      ),
    );
    return c.json(created, 200);
  });

  // A batch is charged its estimated events before its body is read, its real count once split
  // (refused whole when that does not fit), and only then are its elements decoded and published.
  app.openapi(batchCreateRoute, async (c) => {
    const estimate = deps.events.estimateBatch(requestHeader(c, 'content-length'));
    const response = await refusing(() =>
      admitted(
        c,
        limits.maxBatchBytes,
        (read) =>
          deps.events.run(estimate, async (permit) => {
            const accepted = batch.accept(requestHeader(c, 'content-type'), await read());
            permit.resize(accepted.elements.length, accepted.bytes);
            return permit.measure(
              () => batch.create(accepted, producerHeader(c.get('principal'))),
              publishedAll,
            );
          }),
        'the batch body',
      ),
    );
    return c.json(response, 200);
  });

  // Validate publishes nothing but holds the body like the others: within the budget too; only a
  // refusal of the event itself is `valid: false`, an overload is the 503.
  app.openapi(validateRoute, (c) =>
    admitted(c, limits.maxEventBytes, async (read) => {
      try {
        return c.json(
          ingestor.validate(requestHeaderPairs(c), await read(), producerHeader(c.get('principal'))),
          200,
        );
      } catch (err) {
        const api = closing(toApiError(err));
        return c.json({ valid: false, error: errorBodyOf(api) }, 200, api.headers);
      }
    }),
  );

  addDocsRoutes(app, { title: 'Event ingestion API', version: deps.version });
  app.route('/', healthRoutes({ checks: deps.checks }));
  return app;
}
