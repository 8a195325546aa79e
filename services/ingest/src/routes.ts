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
  // An event may have no data: binary mode with the ce-* headers alone is a whole event.
  required: false,
  description:
    'Binary mode: the payload, with ce-* headers and content-type = datacontenttype. Structured mode: a CloudEvent JSON document sent as application/cloudevents+json (ce-* headers are then ignored).',
  content: { 'application/octet-stream': { schema: { type: 'string' as const, format: 'binary' } } },
};

/** One binary-mode `ce-*` header parameter (plain OpenAPI: no validator reads headers before the handler). */
const ceHeader = (
  attribute: string,
  required: boolean,
  schema: Record<string, unknown>,
  description: string,
) => ({
  name: `ce-${attribute}`,
  in: 'header' as const,
  required,
  description: `${description} Binary mode; percent-encode characters outside printable ASCII.`,
  schema: { type: 'string' as const, ...schema },
});

const X = '[0-9A-Fa-f]';
/** A percent-encoded UTF-8 continuation byte. */
const CONT = `%[89ABab]${X}`;
/**
 * One character of a CloudEvents String as a binary-mode header carries it (percent-decoded once,
 * then UTF-8 without control characters): printable ASCII other than `%`, a percent-encoded
 * printable ASCII byte, or the percent-encoded UTF-8 sequence of a non-control character
 * (RFC 3629 ranges: no overlongs, no surrogates, no C1 controls).
 */
const CE_CHAR = [
  '[\\x20-\\x24\\x26-\\x7E]',
  `%(?:[2-6]${X}|7[0-9A-Ea-e])`,
  `%[Cc]2%[ABab]${X}`,
  `%(?:[Cc][3-9A-Fa-f]|[Dd]${X})${CONT}`,
  `%[Ee]0%[ABab]${X}${CONT}`,
  `%(?:[Ee][1-9A-Ca-c]|[Ee][EFef])${CONT}${CONT}`,
  `%[Ee][Dd]%[89]${X}${CONT}`,
  `%[Ff]0%(?:9${X}|[ABab]${X})${CONT}${CONT}`,
  `%[Ff][1-3]${CONT}${CONT}${CONT}`,
  `%[Ff]4%8${X}${CONT}${CONT}`,
].join('|');
/** The same without the space, for the first and last character (HTTP trims header values). */
const CE_EDGE = CE_CHAR.replace('\\x20-', '\\x21-');
const CE_STRING = `^(?:${CE_EDGE})(?:(?:${CE_CHAR})*(?:${CE_EDGE}))?$`;
/**
 * RFC 3986 characters, with a percent-escape written percent-encoded itself (`%25` + two hex). A
 * pattern, not `format: uri`: the service checks exactly these characters, and a `format`
 * checker's stricter grammar would call accepted values invalid.
 */
const URI_CHARS = `(?:[A-Za-z0-9\\-._~:/?#\\[\\]@!$&'()*+,;=]|%25${X}{2})`;

/**
 * The binary-mode attribute headers: `ce-time` is required by
 * this service. Further `ce-<extension>` headers (`[a-z0-9]{1,20}`) are accepted and not listed.
 */
const binaryModeHeaders = [
  ceHeader('specversion', true, { enum: ['1.0'] }, 'CloudEvents version.'),
  ceHeader('id', true, { pattern: CE_STRING, example: 'evt-1' }, 'Producer-supplied id.'),
  ceHeader(
    'source',
    true,
    { pattern: `^${URI_CHARS}+$`, example: 'https://example.com/sensors' },
    'URI-reference of the producer.',
  ),
  ceHeader('type', true, { pattern: CE_STRING, example: 'com.example.reading' }, 'Kind of event.'),
  // No fixed example: any fixed time leaves the plausibility window sooner or later, and the
  // document's own example must never be refused (Swagger UI fills in the current time).
  ceHeader(
    'time',
    true,
    { format: 'date-time' },
    'RFC 3339 time; outside INGEST_MAX_PAST_SKEW..INGEST_MAX_FUTURE_SKEW of the service clock gives 400 OUT_OF_RANGE.',
  ),
  ceHeader('subject', false, { pattern: CE_STRING }, 'Subject; part of the partition key.'),
  ceHeader(
    'dataschema',
    false,
    { pattern: `^[A-Za-z][A-Za-z0-9+.-]*:${URI_CHARS}*$` },
    'Absolute URI of the payload schema.',
  ),
];

/**
 * The same headers for `:validate`, none required and none constrained: validate judges whatever
 * it is sent and answers 200 with `valid: false` and the reason, so a missing or unacceptable
 * header is not a request the document may call invalid.
 */
const judgedHeaders = binaryModeHeaders.map((p) => ({
  ...p,
  required: false,
  description: `${p.description} Judged, not required: a missing or unacceptable value gives valid false.`,
  schema: { type: 'string' as const },
}));

const security = [{ bearerAuth: [] as string[] }];

const OVERLOADED =
  'The in-flight byte budget (INGEST_MAX_INFLIGHT_BYTES) is full: refused before the body is read (UNAVAILABLE); retryable';

export const createEventRoute = createRoute({
  method: 'post',
  path: '/v1/events',
  operationId: 'createEvent',
  summary: 'Create one event (binary or structured mode)',
  security,
  parameters: binaryModeHeaders,
  request: { body: rawBody },
  responses: {
    200: { description: 'The created event', content: { 'application/json': { schema: EventSchema } } },
    ...errors({
      400: 'Not an acceptable CloudEvent (INVALID_ARGUMENT) or time outside the window (OUT_OF_RANGE)',
      401: 'No credential, or one that did not verify (UNAUTHENTICATED)',
      403: 'Verified credential without the required scope (PERMISSION_DENIED)',
      413: 'Body over INGEST_MAX_EVENT_BYTES (RESOURCE_EXHAUSTED)',
      503: 'Broker did not acknowledge, is unreachable, or the send queue or the in-flight byte budget is full (UNAVAILABLE); retryable',
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
      // handler's size-bounded reader does. Items are any JSON value: each element is judged on
      // its own (a malformed one is refused in its entry), so the document must not refuse it.
      content: { 'application/cloudevents-batch+json': { schema: { type: 'array' as const, items: {} } } },
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
      503: OVERLOADED,
    }),
  },
});

export const validateRoute = createRoute({
  method: 'post',
  path: '/v1/events:validate',
  operationId: 'validateEvent',
  summary: 'Validate one event without publishing it',
  security,
  parameters: judgedHeaders,
  request: { body: rawBody },
  responses: {
    200: {
      description:
        'valid true with the event it would create (no destination), or valid false with the error',
      content: { 'application/json': { schema: ValidateResponseSchema } },
    },
    ...errors({ 401: 'UNAUTHENTICATED', 403: 'PERMISSION_DENIED', 503: OVERLOADED }),
  },
});
