/**
 * Serving a Hono app on Node.js, reading its request headers cheaply, and shutting down
 * gracefully on SIGTERM/SIGINT.
 * @module
 */
export { requestHeader, requestHeaderPairs } from './headers.js';
export { type FetchApp, type RunningServer, type ServeOptions, serveApp } from './serve.js';
/** The name CONTRACTS.md announced for `installShutdown`. */
export {
  installShutdown,
  installShutdown as gracefulShutdown,
  type ShutdownHandle,
  type ShutdownOptions,
  type ShutdownStep,
} from './shutdown.js';
