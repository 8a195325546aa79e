/**
 * A TCP proxy on 127.0.0.1 whose `freeze()` makes the connections open at that moment go silent:
 * nothing is forwarded any more either way and nothing is closed, as when a route or a NAT entry
 * disappears. Connections made afterwards are forwarded normally. For tests of the bounds that
 * keep a client from waiting forever on such a connection.
 *
 * @example
 * const proxy = await startSilentProxy({ host: '127.0.0.1', port: 5432 });
 * // point the client at 127.0.0.1:proxy.port, then:
 * proxy.freeze();
 */
import { connect, createServer, type Socket } from 'node:net';

export interface SilentProxy {
  port: number;
  /** Silences every connection open now; later ones are forwarded. */
  freeze(): void;
  close(): Promise<void>;
}

export async function startSilentProxy(target: { host: string; port: number }): Promise<SilentProxy> {
  const open = new Set<{ frozen: boolean; sockets: Socket[] }>();
  const server = createServer((client) => {
    const upstream = connect(target.port, target.host);
    const conn = { frozen: false, sockets: [client, upstream] };
    open.add(conn);
    client.on('data', (b) => conn.frozen || upstream.write(b));
    upstream.on('data', (b) => conn.frozen || client.write(b));
    for (const socket of conn.sockets) {
      socket.on('error', () => {});
      socket.on('close', () => {
        if (conn.frozen) return; // a frozen connection ends for nobody
        for (const s of conn.sockets) s.destroy();
        open.delete(conn);
      });
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as { port: number }).port,
    freeze() {
      for (const conn of open) conn.frozen = true;
    },
    async close() {
      for (const conn of open) for (const s of conn.sockets) s.destroy();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}
