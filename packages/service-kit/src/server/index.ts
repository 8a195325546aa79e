/**
 * Serving a Hono app on Node.js, a service's meters on a listener of their own, reading request
 * headers cheaply, and shutting down gracefully on SIGTERM/SIGINT.
 * @module
 */
export { requestHeader, requestHeaderPairs } from './headers.js';
export { serveMetrics } from './metrics-listener.js';
export { type FetchApp, type RunningServer, type ServeOptions, serveApp } from './serve.js';
/** The name CONTRACTS.md announced for `installShutdown`. */
export {
  installShutdown,
  installShutdown as gracefulShutdown,
  type ShutdownHandle,
  type ShutdownOptions,
  type ShutdownStep,
} from './shutdown.js';
