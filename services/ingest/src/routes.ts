/**
 * The API's route definitions: the router serves them (`app.openapi(route, handler)`) and the
 * OpenAPI document is generated from the same objects, so the two cannot drift. Only `/v1`
 * operations are here; metrics, health and documentation routes are not part of the contract.
 */
import { REJECTION_REASONS } from '@event-observatory/events';
import { createRoute, z } from '@hono/zod-openapi';

export const ErrorInfoSchema = z
  .object({
    reason: z.enum(REJECTION_REASONS),
    domain: z.string(),
    metadata: z.record(z.string(), z.string()),
  })
  .openapi('ErrorInfo');

export const ErrorBodySchema = z
  .object({
    code: z.number().int().openapi({ description: 'The HTTP status, repeated.' }),
    message: z.string(),
    status: z.string().openapi({
      description: 'Canonical status name',
      example: 'INVALID_ARGUMENT',
    }),
    details: z.array(ErrorInfoSchema),
  })
  .openapi('ErrorBody');

export const ErrorResponseSchema = z.object({ error: ErrorBodySchema }).openapi('ErrorResponse');

export const DestinationSchema = z
  .object({
    topic: z.string(),
    partition: z.number().int(),
    offset: z.number().int().openapi({ format: 'int64' }),
  })
  .openapi('Destination');

export const EventSchema = z
  .object({
    name: z.string().openapi({ example: 'events/https%3A%2F%2Fexample.com%2Fsensors,evt-1' }),
    id: z.string(),
    source: z.string(),
    eventType: z.string(),
    time: z.string(),
    partitionKey: z
      .string()
      .openapi({ description: '`source#subject`, or `source` when the event has no subject' }),
    destination: DestinationSchema.optional(),
  })
  .openapi('Event');

export const BatchEntrySchema = z
  .object({ index: z.number().int(), event: EventSchema.optional(), error: ErrorBodySchema.optional() })
  .openapi('BatchEntry');

export const BatchCreateResponseSchema = z
  .object({
    events: z.array(EventSchema),
    entries: z.array(BatchEntrySchema),
    created: z.number().int(),
    failed: z.number().int(),
  })
  .openapi('BatchCreateResponse');

export const ValidateResponseSchema = z
  .object({ valid: z.boolean(), event: EventSchema.optional(), error: ErrorBodySchema.optional() })
  .openapi('ValidateResponse');

const errors = (codes: Record<number, string>) =>
  Object.fromEntries(
    Object.entries(codes).map(([code, description]) => [
      code,
      { description, content: { 'application/json': { schema: ErrorResponseSchema } } },
    ]),
  );

const rawBody = {
  required: true,
  description:
    'Binary mode: the payload, with ce-* headers and content-type = datacontenttype. Structured mode: a CloudEvent JSON document sent as application/cloudevents+json.',
  content: { 'application/octet-stream': { schema: { type: 'string' as const, format: 'binary' } } },
};

const security = [{ bearerAuth: [] as string[] }];

export const createEventRoute = createRoute({
  method: 'post',
  path: '/v1/events',
  operationId: 'createEvent',
  summary: 'Create one event (binary or structured mode)',
  security,
  request: { body: rawBody },
  responses: {
    200: { description: 'The created event', content: { 'application/json': { schema: EventSchema } } },
    ...errors({
      400: 'Not an acceptable CloudEvent (INVALID_ARGUMENT) or time outside the window (OUT_OF_RANGE)',
      401: 'No credential, or one that did not verify (UNAUTHENTICATED)',
      403: 'Verified credential without the required scope (PERMISSION_DENIED)',
      413: 'Body over INGEST_MAX_EVENT_BYTES (RESOURCE_EXHAUSTED)',
      503: 'Broker did not acknowledge, is unreachable, or the send queue is full (UNAVAILABLE); retryable',
    }),
  },
});

export const batchCreateRoute = createRoute({
  method: 'post',
  path: '/v1/events:batchCreate',
  operationId: 'batchCreateEvents',
  summary: 'Create many events, non-atomic',
  security,
  request: {
    body: {
      required: true,
      description: 'A JSON array of CloudEvents (JSON batch format)',
      // A plain schema object (not zod), so no request validator reads the body before the
      // handler's size-bounded reader does.
      content: {
        'application/cloudevents-batch+json': {
          schema: { type: 'array' as const, items: { type: 'object' as const, additionalProperties: true } },
        },
      },
    },
  },
  responses: {
    200: {
      description: 'Every element judged; refused elements carry their error',
      content: { 'application/json': { schema: BatchCreateResponseSchema } },
    },
    ...errors({
      400: 'The body is not a JSON array or has the wrong media type (INVALID_ARGUMENT)',
      401: 'UNAUTHENTICATED',
      403: 'PERMISSION_DENIED',
      413: 'More events than INGEST_MAX_BATCH_EVENTS, or body over INGEST_MAX_BATCH_BYTES (RESOURCE_EXHAUSTED)',
    }),
  },
});

export const validateRoute = createRoute({
  method: 'post',
  path: '/v1/events:validate',
  operationId: 'validateEvent',
  summary: 'Validate one event without publishing it',
  security,
  request: { body: rawBody },
  responses: {
    200: {
      description:
        'valid true with the event it would create (no destination), or valid false with the error',
      content: { 'application/json': { schema: ValidateResponseSchema } },
    },
    ...errors({ 401: 'UNAUTHENTICATED', 403: 'PERMISSION_DENIED' }),
  },
});
