/**
 * Serving a Hono app on Node.js and shutting down gracefully on SIGTERM/SIGINT.
 * @module
 */
export { type FetchApp, type RunningServer, type ServeOptions, serveApp } from './serve.js';
/** The name CONTRACTS.md announced for `installShutdown`. */
export {
  installShutdown,
  installShutdown as gracefulShutdown,
  type ShutdownHandle,
  type ShutdownLogger,
  type ShutdownOptions,
  type ShutdownStep,
} from './shutdown.js';
