import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createAdaptorServer } from '@hono/node-server';
import { checkListenerTimeouts, type ListenerTimeouts, readListenerTimeouts } from '../config/listener.js';
import { answerClientErrors } from './client-error.js';

/** Anything with Hono's `fetch` (a `Hono` app). */
export interface FetchApp {
  fetch: (request: Request, ...rest: never[]) => Response | Promise<Response>;
}

export interface ServeOptions {
  /** Default `0.0.0.0`. */
  host?: string;
  /** Default 8080; 0 binds an ephemeral port. */
  port?: number;
  /** On `close()`, in-flight requests get this long before their connections are cut. Default 10 s. */
  drainMs?: number;
  /**
   * Request, header and keep-alive timeouts. Default: read from the environment
   * (`HTTP_REQUEST_TIMEOUT` 30s, `HTTP_HEADERS_TIMEOUT` 10s, `HTTP_KEEP_ALIVE_TIMEOUT` 5s), so
   * every service's listener has them without wiring; a bad value rejects with a `ConfigError`.
   */
  timeouts?: ListenerTimeouts;
}

export interface RunningServer {
  host: string;
  /** The port actually bound (useful with port 0). */
  port: number;
  /** `http://host:port`, with `127.0.0.1` for a wildcard host. */
  url: string;
  /**
   * Stops accepting connections, closes idle keep-alive connections, waits for in-flight
   * requests up to `drainMs`, then cuts what is left. Safe to call twice.
   */
  close(): Promise<void>;
}

/**
 * Serves a Hono app on `@hono/node-server` and resolves once the port is bound (rejects when it
 * cannot be, e.g. EADDRINUSE).
 *
 * @example
 * ```ts
 * const server = await serveApp(app, { host: cfg.host, port: cfg.port });
 * logger.info({ url: server.url }, 'listening');
 * ```
 */
export function serveApp(app: FetchApp, opts: ServeOptions = {}): Promise<RunningServer> {
  const host = opts.host ?? '0.0.0.0';
  const drainMs = opts.drainMs ?? 10_000;
  let timeouts: ListenerTimeouts;
  try {
    timeouts = checkListenerTimeouts(opts.timeouts ?? readListenerTimeouts(process.env));
  } catch (err) {
    return Promise.reject(err);
  }
  // Without a `createServer` option the adaptor builds a plain node:http server.
  const server = createAdaptorServer({
    fetch: app.fetch as never,
    hostname: host,
    port: opts.port ?? 8080,
    serverOptions: {
      requestTimeout: timeouts.requestTimeoutMs,
      headersTimeout: timeouts.headersTimeoutMs,
      // Node checks both timeouts on this period (default 30 s, which would double a 30 s bound).
      connectionsCheckingInterval: Math.max(
        10,
        Math.min(1000, Math.floor(Math.min(timeouts.headersTimeoutMs, timeouts.requestTimeoutMs) / 4)),
      ),
    },
  }) as Server;
  server.keepAliveTimeout = timeouts.keepAliveTimeoutMs;
  answerClientErrors(server);
  return new Promise((resolve, reject) => {
    const onError = (err: Error) => reject(err);
    server.once('error', onError);
    server.listen(opts.port ?? 8080, host, () => {
      server.off('error', onError);
      const port = (server.address() as AddressInfo).port;
      const shownHost = host === '0.0.0.0' || host === '::' ? '127.0.0.1' : host;
      let closing: Promise<void> | undefined;
      resolve({
        host,
        port,
        url: `http://${shownHost.includes(':') ? `[${shownHost}]` : shownHost}:${port}`,
        close() {
          closing ??= new Promise<void>((done) => {
            // Idle keep-alive connections would hold close() open: cut them now and as each
            // in-flight request completes; cut everything once drainMs is over.
            const sweep = setInterval(() => server.closeIdleConnections(), 50);
            const cut = setTimeout(() => server.closeAllConnections(), drainMs);
            sweep.unref();
            cut.unref();
            server.close(() => {
              clearInterval(sweep);
              clearTimeout(cut);
              done();
            });
            server.closeIdleConnections();
          });
          return closing;
        },
      });
    });
  });
}
