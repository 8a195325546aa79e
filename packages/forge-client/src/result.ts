/**
 * Failures as values. No operation throws for a 404, a timeout or a malformed payload: each
 * returns a {@link ForgeResult} whose failure side is one closed family, {@link ForgeFailure}.
 */

import { formatJsonPath, type JsonPath, listOrNull, object, optField, str } from './json.js';
import type { ValidationError } from './validation.js';

/** Where a remote outcome came from. Safe to log: the URI is already redacted. */
export interface CallContext {
  /** Stable operation id such as `pulls.list` or `reviews.submit`. */
  readonly operation: string;
  /** HTTP method. */
  readonly method: string;
  /** Request URI without credentials: no token, password, `sudo`, `access_token` or `token` parameters. */
  readonly uri: string;
  /** Final HTTP status, when a response arrived. */
  readonly status?: number;
  /** `x-request-id` response header, when the server (or a proxy) sent one. */
  readonly requestId?: string;
  /** Wall time of the call including retries, whole milliseconds. */
  readonly durationMs: number;
  /** Attempts made (1 when not retried). */
  readonly attempts: number;
}

/** One per-field problem of an error body. */
export interface ApiFieldError {
  readonly field?: string;
  readonly message?: string;
  readonly raw: string;
}

/** The forge's error payload. Decoding never fails: an unparseable body becomes the empty value. */
export interface ApiErrorBody {
  readonly message?: string;
  readonly url?: string;
  readonly errors: readonly ApiFieldError[];
}

export const EMPTY_API_ERROR_BODY: ApiErrorBody = Object.freeze({
  errors: Object.freeze([]) as readonly ApiFieldError[],
});

/** Why no usable response arrived. */
export type TransportCause =
  /** The connection (TCP, TLS) did not open within connectTimeout. Nothing arrived. */
  | 'connect-timeout'
  /** Connection refused, reset, DNS failure, TLS failure. Nothing arrived. */
  | 'connect-failed'
  /** No progress within readTimeout while waiting for the response. */
  | 'read-timeout'
  /** The caller's AbortSignal fired. */
  | 'aborted'
  /** A response began and reading was abandoned past the configured byte bound. */
  | 'response-too-large'
  /** Anything unclassifiable. */
  | 'unknown';

/** An HTTP status was received (4xx or 5xx, or an unexpected success status). */
export interface ApiFailure {
  readonly kind: 'api';
  readonly status: number;
  readonly body: ApiErrorBody;
  readonly context: CallContext;
}

/** Input refused before any request was built; carries no call context. */
export interface ValidationFailure {
  readonly kind: 'validation';
  readonly error: ValidationError;
}

/** No usable response. */
export interface TransportFailure {
  readonly kind: 'transport';
  readonly cause: TransportCause;
  /** Short, for humans; callers branch on `cause`. */
  readonly detail: string;
  readonly context: CallContext;
}

/**
 * A success status whose body is not the documented shape. `path` names the first offending
 * value, e.g. `$.head.repo_id`.
 */
export interface DecodeFailure {
  readonly kind: 'decode';
  readonly status: number;
  readonly path: JsonPath;
  readonly message: string;
  readonly context: CallContext;
}

export type ForgeFailure = ApiFailure | ValidationFailure | TransportFailure | DecodeFailure;

/** The outcome of an operation: a value with its call context, or a failure. */
export type ForgeResult<T> =
  | { readonly ok: true; readonly value: T; readonly context: CallContext }
  | { readonly ok: false; readonly failure: ForgeFailure };

export const validationFailure = (error: ValidationError): { ok: false; failure: ValidationFailure } => ({
  ok: false,
  failure: { kind: 'validation', error },
});

/** One line describing a failure; safe to log. */
export function describeFailure(f: ForgeFailure): string {
  switch (f.kind) {
    case 'validation':
      return `invalid ${f.error.field}: ${f.error.message}`;
    case 'api':
      return `${f.context.operation}: ${f.context.method} ${f.context.uri} -> ${f.status}${f.body.message ? ` (${f.body.message})` : ''}`;
    case 'transport':
      return `${f.context.operation}: ${f.context.method} ${f.context.uri} -> ${f.cause}: ${f.detail}`;
    case 'decode':
      return `${f.context.operation}: ${f.context.method} ${f.context.uri} -> unexpected payload at ${formatJsonPath(f.path)}: ${f.message}`;
  }
}

/** Decodes an error body leniently: anything unexpected is dropped, never reported. */
export function decodeApiErrorBody(text: string): ApiErrorBody {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return EMPTY_API_ERROR_BODY;
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) return EMPTY_API_ERROR_BODY;
  const obj = parsed as Record<string, unknown>;
  const message = lenient(() => optField(obj, { segments: [] }, 'message', str));
  const url = lenient(() => optField(obj, { segments: [] }, 'url', str));
  const rawErrors = lenient(() => listOrNull((v) => v)(obj.errors, { segments: [] })) ?? [];
  const errors: ApiFieldError[] = [];
  for (const e of rawErrors) {
    if (typeof e === 'string') errors.push({ message: e, raw: e });
    else if (typeof e === 'object' && e !== null) {
      const o = lenient(() => object(e, { segments: [] }));
      const fieldName = o && typeof o.field === 'string' ? o.field : undefined;
      const msg = o && typeof o.message === 'string' ? o.message : undefined;
      errors.push({
        ...(fieldName !== undefined ? { field: fieldName } : {}),
        ...(msg !== undefined ? { message: msg } : {}),
        raw: JSON.stringify(e),
      });
    }
  }
  return {
    ...(message !== undefined && message !== '' ? { message } : {}),
    ...(url !== undefined && url !== '' ? { url } : {}),
    errors,
  };
}

function lenient<T>(fn: () => T): T | undefined {
  try {
    return fn();
  } catch {
    return undefined;
  }
}
