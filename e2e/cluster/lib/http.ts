import { request } from 'node:http';
import { connect } from 'node:net';

export interface HttpOptions {
  method?: string;
  headers?: Record<string, string>;
  body?: string;
  timeoutMs?: number;
}

/**
 * One HTTP request to `host:port` (a Service's cluster IP or a pod's address) and its whole body.
 * node:http rather than fetch: fetch cannot set the Host header, which the services check.
 */
export function httpRequest(
  address: string,
  path: string,
  opts: HttpOptions = {},
): Promise<{ status: number; body: string }> {
  const [host, port] = address.split(':') as [string, string];
  return new Promise((done, fail) => {
    const req = request(
      {
        host,
        port: Number(port),
        path,
        method: opts.method ?? 'GET',
        headers: opts.headers,
        timeout: opts.timeoutMs ?? 30_000,
      },
      (res) => {
        let body = '';
        res.on('data', (c: Buffer) => {
          body += c.toString();
        });
        res.on('end', () => done({ status: res.statusCode ?? 0, body }));
      },
    );
    req.on('timeout', () => req.destroy(new Error('timed out')));
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
