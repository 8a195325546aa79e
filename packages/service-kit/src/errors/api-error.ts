/**
 * The error kinds of the API's error body (README, "Errors") and the few more a service needs, each with
 * its HTTP status and canonical status name (google.rpc.Code spelling, as AIP-193 clients expect).
 */
export const ERROR_KINDS = {
  InvalidArgument: { code: 400, status: 'INVALID_ARGUMENT' },
  OutOfRange: { code: 400, status: 'OUT_OF_RANGE' },
  FailedPrecondition: { code: 400, status: 'FAILED_PRECONDITION' },
  Unauthorized: { code: 401, status: 'UNAUTHENTICATED' },
  Forbidden: { code: 403, status: 'PERMISSION_DENIED' },
  NotFound: { code: 404, status: 'NOT_FOUND' },
  /** 405: no gRPC code; UNIMPLEMENTED as grpc-gateway answers it, with `Allow`. */
  MethodNotAllowed: { code: 405, status: 'UNIMPLEMENTED' },
  AlreadyExists: { code: 409, status: 'ALREADY_EXISTS' },
  Aborted: { code: 409, status: 'ABORTED' },
  /** 413: gRPC itself reports an over-size message as RESOURCE_EXHAUSTED. Not retryable here. */
  PayloadTooLarge: { code: 413, status: 'RESOURCE_EXHAUSTED' },
  TooManyRequests: { code: 429, status: 'RESOURCE_EXHAUSTED' },
  Internal: { code: 500, status: 'INTERNAL' },
  Unimplemented: { code: 501, status: 'UNIMPLEMENTED' },
  Unavailable: { code: 503, status: 'UNAVAILABLE' },
  DeadlineExceeded: { code: 504, status: 'DEADLINE_EXCEEDED' },
} as const satisfies Record<string, { code: number; status: string }>;

export type ErrorKind = keyof typeof ERROR_KINDS;
export type CanonicalStatus = (typeof ERROR_KINDS)[ErrorKind]['status'];

/** The domain of every ErrorInfo this project writes, unless a caller names another. */
export const DEFAULT_ERROR_DOMAIN = 'observatory.events';

/** ErrorInfo of the spec: a closed-set reason, a domain, string metadata. */
export interface ErrorInfo {
  reason: string;
  domain: string;
  metadata: Record<string, string>;
}

/** ErrorBody of the spec. */
export interface ErrorBodyFields {
  code: number;
  message: string;
  status: string;
  details: ErrorInfo[];
}

/** What every failure response carries: `{ error: ErrorBody }`. */
export interface ErrorResponseBody {
  error: ErrorBodyFields;
}

export interface ApiErrorOptions {
  /** The ErrorInfo reason (closed set of the spec, e.g. `malformed`, `too-large`). */
  reason?: string;
  /** Values such as the limit exceeded; numbers are written as decimal strings. */
  metadata?: Record<string, string | number | boolean>;
  /** ErrorInfo domain; default `observatory.events`. */
  domain?: string;
  /** Extra response headers, e.g. `WWW-Authenticate`. */
  headers?: Record<string, string>;
  cause?: unknown;
}

/**
 * An error a handler throws to answer with the spec's error body. The kind selects both the HTTP
 * status and the canonical status, so the two always agree.
 *
 * @example
 * ```ts
 * throw new ApiError('PayloadTooLarge', 'event body exceeds 1048576 bytes', {
 *   reason: 'too-large',
 *   metadata: { limit: 1048576 },
 * });
 * ```
 */
export class ApiError extends Error {
  override readonly name = 'ApiError';
  readonly kind: ErrorKind;
  readonly code: number;
  readonly status: CanonicalStatus;
  readonly details: ErrorInfo[];
  readonly headers: Record<string, string>;

  constructor(kind: ErrorKind, message: string, opts: ApiErrorOptions = {}) {
    super(message, opts.cause === undefined ? undefined : { cause: opts.cause });
    this.kind = kind;
    this.code = ERROR_KINDS[kind].code;
    this.status = ERROR_KINDS[kind].status;
    this.details = opts.reason === undefined ? [] : [errorInfo(opts.reason, opts.metadata, opts.domain)];
    this.headers = { ...opts.headers };
  }

  /** The response body: `{ error: { code, message, status, details } }`. */
  toBody(): ErrorResponseBody {
    return { error: { code: this.code, message: this.message, status: this.status, details: this.details } };
  }
}

/** One ErrorInfo, with metadata values written as strings. */
export function errorInfo(
  reason: string,
  metadata: Record<string, string | number | boolean> = {},
  domain: string = DEFAULT_ERROR_DOMAIN,
): ErrorInfo {
  const meta: Record<string, string> = {};
  for (const [k, v] of Object.entries(metadata)) meta[k] = String(v);
  return { reason, domain, metadata: meta };
}

/**
 * The spec's error body for a kind, without throwing. Use it where an error is a value, e.g. a
 * refused element of a batch response.
 *
 * @example
 * ```ts
 * errorBody('InvalidArgument', 'time is required', { reason: 'invalid-attributes' });
 * // { error: { code: 400, message: 'time is required', status: 'INVALID_ARGUMENT',
 * //   details: [{ reason: 'invalid-attributes', domain: 'observatory.events', metadata: {} }] } }
 * ```
 */
export function errorBody(kind: ErrorKind, message: string, opts: ApiErrorOptions = {}): ErrorResponseBody {
  return new ApiError(kind, message, opts).toBody();
}

/**
 * The canonical status for an HTTP status that no kind named (hono's own exceptions, a proxy's
 * answer). Follows google.rpc.Code's HTTP mapping; what it does not name takes the status of its
 * nearest kind (a header block too large as a body too large; a request not sent in time as a
 * deadline), other 4xx are FAILED_PRECONDITION, other 5xx INTERNAL.
 */
export function statusForHttpCode(code: number): string {
  const known: Record<number, string> = {
    400: 'INVALID_ARGUMENT',
    401: 'UNAUTHENTICATED',
    403: 'PERMISSION_DENIED',
    404: 'NOT_FOUND',
    405: 'UNIMPLEMENTED',
    408: 'DEADLINE_EXCEEDED',
    409: 'ABORTED',
    413: 'RESOURCE_EXHAUSTED',
    429: 'RESOURCE_EXHAUSTED',
    431: 'RESOURCE_EXHAUSTED',
    499: 'CANCELLED',
    500: 'INTERNAL',
    501: 'UNIMPLEMENTED',
    503: 'UNAVAILABLE',
    504: 'DEADLINE_EXCEEDED',
  };
  return known[code] ?? (code >= 400 && code < 500 ? 'FAILED_PRECONDITION' : 'INTERNAL');
}
