import { type Server, STATUS_CODES } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { createAdaptorServer } from '@hono/node-server';
import { statusForHttpCode } from '../errors/index.js';

/**
 * Answers a request that Node's HTTP parser refused (a body longer than its `content-length`
 * read as a second request, an oversized header block, ...) with the spec's error body instead
 * of Node's bare `400 Bad Request`, then closes the connection.
 */
export function answerClientError(err: Error & { code?: string }, socket: Socket): void {
  if (err.code === 'ECONNRESET' || !socket.writable) {
    socket.destroy();
    return;
  }
  const code = err.code === 'HPE_HEADER_OVERFLOW' ? 431 : err.code === 'ERR_HTTP_REQUEST_TIMEOUT' ? 408 : 400;
  const body = JSON.stringify({
    error: {
      code,
      message: 'the request could not be parsed as HTTP/1.1',
      status: statusForHttpCode(code),
      details: [],
    },
  });
  socket.end(
    `HTTP/1.1 ${code} ${STATUS_CODES[code]}\r\n` +
      'content-type: application/json\r\n' +
      `content-length: ${Buffer.byteLength(body)}\r\n` +
      'connection: close\r\n\r\n' +
      body,
  );
}

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
  // Without a `createServer` option the adaptor builds a plain node:http server.
  const server = createAdaptorServer({
    fetch: app.fetch as never,
    hostname: host,
    port: opts.port ?? 8080,
  }) as Server;
  server.on('clientError', answerClientError);
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
