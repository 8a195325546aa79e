/**
 * Builds the ingestion service's Hono app from explicit dependencies (main.ts and the tests both
 * call it). Reads like the spec's endpoint table.
 */
import type { EventProducer } from '@event-observatory/broker';
import { type CloudEvent, splitBatch, tooLarge } from '@event-observatory/events';
import { type AuthVariables, requireAuth, type Verifier } from '@event-observatory/service-kit/auth';
import {
  ApiError,
  type ErrorLogger,
  errorHandler,
  notFoundHandler,
} from '@event-observatory/service-kit/errors';
import { down, healthRoutes, up } from '@event-observatory/service-kit/health';
import { httpServerTimer, metricsHandler } from '@event-observatory/service-kit/metrics';
import { requestHeader, requestHeaderPairs } from '@event-observatory/service-kit/server';
import { traceRequests } from '@event-observatory/service-kit/tracing';
import type { HttpBindings } from '@hono/node-server';
import { OpenAPIHono } from '@hono/zod-openapi';
import type { Context } from 'hono';
import type { Registry } from 'prom-client';
import { readBodyLimited } from './body.js';
import type { Limits } from './config.js';
import { addDocsRoutes } from './docs.js';
import { createIngestor, type EventResource, errorBodyOf, resourceOf, toApiError } from './ingest.js';
import type { KnownTypes } from './known-types.js';
import { createIngestMeters } from './metrics.js';
import type { BrokerBelief } from './readiness.js';
import { batchCreateRoute, createEventRoute, validateRoute } from './routes.js';

export interface AppDeps {
  producer: Pick<EventProducer, 'publish'>;
  belief: BrokerBelief;
  verifier: Verifier;
  registry: Registry;
  limits: Limits;
  knownTypes: KnownTypes;
  version: string;
  logger?: ErrorLogger;
  /** Service clock in epoch ms (tests move it); default `Date.now`. */
  now?: () => number;
}

type Env = { Bindings: HttpBindings; Variables: AuthVariables };

/** A too-large refusal while the client may still be sending: close the connection after it. */
function closing(err: ApiError): ApiError {
  if (err.code === 413) err.headers.connection = 'close';
  return err;
}

export function buildApp(deps: AppDeps): OpenAPIHono<Env> {
  const meters = createIngestMeters(deps.registry);
  const ingestor = createIngestor({
    producer: deps.producer,
    limits: deps.limits,
    meters,
    knownTypes: deps.knownTypes,
    ...(deps.now ? { now: deps.now } : {}),
  });
  const app = new OpenAPIHono<Env>();
  const body = (c: Context<Env>, limit: number, what?: string) =>
    readBodyLimited(c.req.raw, c.env?.incoming, requestHeader(c, 'content-length'), limit, what);

  app.use(traceRequests());
  app.use(httpServerTimer(deps.registry));
  app.onError(errorHandler(deps.logger ? { logger: deps.logger } : {}));
  app.notFound(notFoundHandler());
  app.use('/v1/*', requireAuth(deps.verifier));

  app.openapi(createEventRoute, async (c) => {
    try {
      const bytes = await body(c, deps.limits.maxEventBytes);
      const { mode, event } = ingestor.judgeRequest(requestHeaderPairs(c), bytes);
      const created = await ingestor.publish(event, mode);
      meters.payload(mode, bytes.byteLength);
      return c.json(created, 200);
    } catch (err) {
      const api = closing(toApiError(err));
      ingestor.rejected(api);
      throw api;
    }
  });

  app.openapi(batchCreateRoute, async (c) => {
    let elements: Uint8Array[];
    let size: number;
    try {
      const bytes = await body(c, deps.limits.maxBatchBytes, 'the batch body');
      size = bytes.byteLength;
      elements = splitBatch(requestHeader(c, 'content-type'), bytes);
      if (elements.length > deps.limits.maxBatchEvents) {
        throw tooLarge(
          `the batch holds ${elements.length} events; at most ${deps.limits.maxBatchEvents} are accepted`,
          {
            limitEvents: String(deps.limits.maxBatchEvents),
            events: String(elements.length),
          },
        );
      }
    } catch (err) {
      const api = closing(toApiError(err));
      ingestor.rejected(api);
      throw api;
    }
    meters.batch(elements.length);
    // Judge every element, then hand the accepted ones to the producer in request order.
    const judged = elements.map((bytes): CloudEvent | ApiError => {
      try {
        return ingestor.judgeElement(bytes);
      } catch (err) {
        return toApiError(err);
      }
    });
    const outcomes = await Promise.all(
      judged.map((j) =>
        j instanceof ApiError
          ? j
          : ingestor.publish(j, 'structured').catch((err: unknown) => toApiError(err)),
      ),
    );
    const events: EventResource[] = [];
    const entries = outcomes.map((o, index) => {
      if (o instanceof ApiError) {
        ingestor.rejected(o);
        return { index, error: errorBodyOf(o) };
      }
      events.push(o);
      return { index, event: o };
    });
    if (events.length > 0) meters.payload('structured', size);
    return c.json({ events, entries, created: events.length, failed: entries.length - events.length }, 200);
  });

  app.openapi(validateRoute, async (c) => {
    try {
      const bytes = await body(c, deps.limits.maxEventBytes);
      const { event } = ingestor.judgeRequest(requestHeaderPairs(c), bytes);
      return c.json({ valid: true, event: resourceOf(event) }, 200);
    } catch (err) {
      const api = closing(toApiError(err));
      return c.json({ valid: false, error: errorBodyOf(api) }, 200, api.headers);
    }
  });

  addDocsRoutes(app, { title: 'Event ingestion API', version: deps.version });
  app.get('/metrics', metricsHandler(deps.registry));
  app.route(
    '/',
    healthRoutes({
      checks: { broker: () => (deps.belief.isReachable ? up('reachable') : down('unreachable')) },
    }),
  );
  return app;
}

export { DEFAULT_LIMITS, type Limits } from './config.js';
export { KnownTypes } from './known-types.js';
export { BrokerBelief } from './readiness.js';
