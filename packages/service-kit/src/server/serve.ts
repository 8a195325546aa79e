import {
  createServer,
  type IncomingMessage,
  type RequestListener,
  type Server,
  type ServerOptions,
  type ServerResponse,
} from 'node:http';
import { type AddressInfo, Server as NetServer } from 'node:net';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { createAdaptorServer } from '@hono/node-server';
import { checkListenerTimeouts, type ListenerTimeouts, readListenerTimeouts } from '../config/listener.js';
import { answerClientErrors } from './client-error.js';
import { lingerOnClose } from './serve-linger.js';

/** Anything with Hono's `fetch` (a `Hono` app). */
export interface FetchApp {
  fetch: (request: Request, ...rest: never[]) => Response | Promise<Response>;
}

export interface ServeOptions {
  /** Default `0.0.0.0`. */
  host?: string;
  /** Default 8080; 0 binds an ephemeral port. */
  port?: number;
  /**
   * On `close()`, connections get this long to finish before they are cut. Default 10 s. Keep it
   * above the keep-alive timeout plus 1 s, so idle keep-alive connections expire before it.
   */
  drainMs?: number;
  /**
   * Request, header and keep-alive timeouts; a service reads them in its `main.ts` with
   * `readListenerTimeouts(process.env)`. Default those variables' defaults (request 30 s, headers
   * 10 s, keep-alive 5 s); a headers timeout above the request timeout rejects with a `ConfigError`.
   */
  timeouts?: ListenerTimeouts;
  /**
   * Runs for every request before the app and answers it itself when it returns true: for an
   * answer that must cost no more than Node's own parsing (ingest's refusal under overload), which
   * the app's request objects, routing and middleware would multiply. Node reads an unread body
   * off the connection after the answer. A request that waits for `100 Continue` before sending its
   * body (`Expect: 100-continue`) gets it only once `preempt` let it pass: one it answers never
   * sends its body, and Node closes its connection after the answer (the client may still send
   * the body it announced, which would otherwise be read as the next request).
   */
  preempt?: (req: IncomingMessage, res: ServerResponse) => boolean;
}

export interface RunningServer {
  host: string;
  /** The port actually bound (useful with port 0). */
  port: number;
  /** `http://host:port`, with `127.0.0.1` for a wildcard host. */
  url: string;
  /**
   * Drains: stops accepting connections, answers every request from then on (in flight or
   * arriving on an open keep-alive connection) with `connection: close` and closes its connection
   * after the answer, lets idle keep-alive connections expire as they were announced, and cuts
   * what is left after `drainMs`. Resolves once no connection is left. Safe to call twice.
   */
  close(): Promise<void>;
}

/**
 * Serves a Hono app on `@hono/node-server` and resolves once the port is bound (rejects when it
 * cannot be, e.g. EADDRINUSE).
 *
 * @example
 * ```ts
 * const server = await serveApp(app, { host: cfg.host, port: cfg.port, timeouts: readListenerTimeouts(process.env) });
 * logger.info({ url: server.url }, 'listening');
 * ```
 */
export function serveApp(app: FetchApp, opts: ServeOptions = {}): Promise<RunningServer> {
  const host = opts.host ?? '0.0.0.0';
  const drainMs = opts.drainMs ?? 10_000;
  let timeouts: ListenerTimeouts;
  try {
    timeouts = checkListenerTimeouts(opts.timeouts ?? readListenerTimeouts({}));
  } catch (err) {
    return Promise.reject(err);
  }
  // Answers not started yet, so a drain can still make them say `connection: close`.
  const unanswered = new Set<ServerResponse>();
  let draining = false;
  const server = createAdaptorServer({
    fetch: app.fetch as never,
    hostname: host,
    port: opts.port ?? 8080,
    // A plain node:http server whose listener runs before the app's.
    createServer: ((options: ServerOptions, appListener?: RequestListener) => {
      // Requests that waited for `100 Continue`: `preempt` let them pass already.
      const continued = new WeakSet<IncomingMessage>();
      /** Read after a `connection: close` answer (a client that ignored it): it cannot be answered. */
      const unanswerable = (req: IncomingMessage) => {
        if (req.socket.writable) return false;
        req.socket.destroy();
        return true;
      };
      const handle = (req: IncomingMessage, res: ServerResponse) => {
        if (unanswerable(req)) return;
        if (draining) res.shouldKeepAlive = false;
        // Answered at once: nothing is left that a drain could still change.
        if (!continued.has(req) && opts.preempt?.(req, res)) return;
        if (!draining) {
          unanswered.add(res);
          res.once('close', () => unanswered.delete(res));
        }
        appListener?.(req, res);
      };
      const server = createServer(options, handle);
      // Node answers `100 Continue` itself unless this event is handled, and then emits `request`
      // only when told to. Handled here so that `preempt` answers before the body is sent (Node
      // closes a connection answered before `100 Continue`: the announced body may still come);
      // `request` is emitted as Node would, so every `request` listener sees the request.
      server.on('checkContinue', (req: IncomingMessage, res: ServerResponse) => {
        if (unanswerable(req) || opts.preempt?.(req, res)) return;
        res.writeContinue();
        continued.add(req);
        server.emit('request', req, res);
      });
      return server;
    }) as typeof createServer,
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
  lingerOnClose(server);

  const drain = async () => {
    // Connections the kernel completed before now wait in its accept queue, and closing the
    // listening socket would reset them with the request a client may have sent: one more turn of
    // the event loop's poll phase accepts them first.
    await nextTurn();
    await nextTurn();
    await new Promise<void>((done) => {
      const cut = setTimeout(() => server.closeAllConnections(), drainMs);
      cut.unref();
      // net's close, not http's: http.Server#close() first destroys every idle keep-alive
      // connection, racing a client that has just sent its next request on one (a reset
      // request). Idle connections end instead when their announced keep-alive timeout expires,
      // when the client closes them, or after an answer that said `connection: close`.
      NetServer.prototype.close.call(server, () => {
        clearTimeout(cut);
        done();
      });
      // Only now that new connections are refused (a client told to reconnect earlier could have
      // landed in the accept queue): Node writes `connection: close` on every answer from here on
      // and closes its connection after it.
      draining = true;
      for (const res of unanswered) if (!res.headersSent) res.shouldKeepAlive = false;
      unanswered.clear();
    });
    // Nothing is left to close: http's close only stops its request-timeout checker now.
    server.close();
  };
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
          closing ??= drain();
          return closing;
        },
      });
    });
  });
}
