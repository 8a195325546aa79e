import { request } from 'node:http';

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
