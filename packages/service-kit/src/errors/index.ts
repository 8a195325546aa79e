/**
 * The spec's error body `{ error: { code, message, status, details } }` and the Hono handlers
 * that produce it for every failure.
 * @module
 */
export {
  ApiError,
  type ApiErrorOptions,
  type CanonicalStatus,
  DEFAULT_ERROR_DOMAIN,
  ERROR_KINDS,
  type ErrorBodyFields,
  type ErrorInfo,
  type ErrorKind,
  type ErrorResponseBody,
  errorBody,
  errorInfo,
  statusForHttpCode,
} from './api-error.js';
export { errorHandler, errorResponse, notFoundHandler } from './hono.js';
