import { request } from 'node:http';
import { request as requestTls } from 'node:https';
import { connect } from 'node:net';

export interface HttpOptions {
  method?: string;
  headers?: Record<string, string>;
  body?: string;
  timeoutMs?: number;
  /** Over TLS, trusting `ca` and presenting the client certificate `cert` with its `key`. */
  tls?: { ca: Buffer; cert: Buffer; key: Buffer };
}

/**
 * One HTTP request to `host:port` (a Service's cluster IP, a pod's address, an API server on
 * loopback) and its whole body. node:http rather than fetch: fetch cannot set the Host header,
 * which the services check, nor present a client certificate.
 */
export function httpRequest(
  address: string,
  path: string,
  opts: HttpOptions = {},
): Promise<{ status: number; body: string }> {
  const [host, port] = address.split(':') as [string, string];
  const timeoutMs = opts.timeoutMs ?? 30_000;
  return new Promise((done, fail) => {
    const req = (opts.tls ? requestTls : request)(
      {
        host,
        port: Number(port),
        path,
        method: opts.method ?? 'GET',
        headers: opts.headers,
        timeout: timeoutMs,
        ...opts.tls,
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () =>
          done({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') }),
        );
      },
    );
    req.on('timeout', () =>
      req.destroy(new Error(`${opts.method ?? 'GET'} ${path}: no answer in ${timeoutMs / 1000} s`)),
    );
    req.on('error', fail);
    req.end(opts.body);
  });
}

/**
 * Resolves once `host:port` accepts a TCP connection; retries only a refused one (a Service
 * without endpoints in kube-proxy's rules yet), for at most `timeoutMs`.
 */
export async function untilAccepting(address: string, timeoutMs = 30_000): Promise<void> {
  const [host, port] = address.split(':') as [string, string];
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const refused = await new Promise<boolean>((done, fail) => {
      const socket = connect({ host, port: Number(port), timeout: 10_000 });
      socket.once('connect', () => {
        socket.destroy();
        done(false);
      });
      socket.once('timeout', () => socket.destroy(new Error(`connecting to ${address} timed out`)));
      socket.once('error', (e: NodeJS.ErrnoException) => (e.code === 'ECONNREFUSED' ? done(true) : fail(e)));
    });
    if (!refused) return;
    if (Date.now() > deadline)
      throw new Error(`${address} still refuses connections after ${timeoutMs / 1000} s`);
    await new Promise((r) => setTimeout(r, 250));
  }
}
