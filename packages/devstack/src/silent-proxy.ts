/**
 * A TCP proxy on 127.0.0.1 that can make its path go silent without closing anything, as when a
 * route or a NAT entry disappears:
 * - `freeze()` silences the connections open at that moment for good (their bytes are dropped);
 *   connections made afterwards are forwarded normally.
 * - `hold()` silences every connection, open and new, until `release()`: nothing is delivered
 *   either way, nothing is closed. Bytes are kept, not dropped, as TCP retransmits them once the
 *   route is back, so `release()` delivers them in order (and the closes that happened meanwhile):
 *   a partition that heals.
 * For tests of the bounds that keep a client from waiting forever on such a path.
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
  /** Silences every connection, open and new, until `release()`; nothing closed, nothing lost. */
  hold(): void;
  /** Delivers what `hold()` kept, in order, and forwards again. */
  release(): void;
  close(): Promise<void>;
}

export async function startSilentProxy(
  target: { host: string; port: number },
  /** Where the proxy listens; default a free port the kernel picks. */
  listen: { port?: number } = {},
): Promise<SilentProxy> {
  const open = new Set<{ frozen: boolean; sockets: Socket[] }>();
  // While held: what would have been delivered, in arrival order.
  let held: (() => void)[] | undefined;
  const deliver = (step: () => void) => (held ? held.push(step) : step());
  const server = createServer((client) => {
    const upstream = connect(target.port, target.host);
    const conn = { frozen: false, sockets: [client, upstream] };
    open.add(conn);
    client.on('data', (b) => conn.frozen || deliver(() => upstream.write(b)));
    upstream.on('data', (b) => conn.frozen || deliver(() => client.write(b)));
    for (const socket of conn.sockets) {
      socket.on('error', () => {});
      socket.on('close', () => {
        if (conn.frozen) return; // a frozen connection ends for nobody
        deliver(() => {
          for (const s of conn.sockets) s.destroy();
          open.delete(conn);
        });
      });
    }
  });
  await new Promise<void>((resolve) => server.listen(listen.port ?? 0, '127.0.0.1', resolve));
  return {
    port: (server.address() as { port: number }).port,
    freeze() {
      for (const conn of open) conn.frozen = true;
    },
    hold() {
      held ??= [];
    },
    release() {
      const steps = held ?? [];
      held = undefined;
      for (const step of steps) step();
    },
    async close() {
      held = undefined;
      for (const conn of open) for (const s of conn.sockets) s.destroy();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}
