/**
 * A TCP proxy on loopback between a client and a server (the API server, TLS passes through
 * untouched), so a suite can break the client's connections the two ways networks do: reset
 * (the client sees an error at once) or freeze (a half-open connection: nothing arrives any more,
 * nothing ends; only the client's own watchdog can notice).
 */
import { connect, createServer, type Server, type Socket } from 'node:net';

interface Connection {
  client: Socket;
  upstream: Socket;
  frozen: boolean;
}

export class TcpProxy {
  private constructor(
    private readonly server: Server,
    readonly port: number,
    private readonly connections: Set<Connection>,
  ) {}

  /** Listens on 127.0.0.1 (a free port) and forwards every connection to `host:port`. */
  static async start(target: { host: string; port: number }): Promise<TcpProxy> {
    const connections = new Set<Connection>();
    const server = createServer((client) => {
      const upstream = connect(target.port, target.host);
      const conn: Connection = { client, upstream, frozen: false };
      connections.add(conn);
      const drop = () => {
        client.destroy();
        upstream.destroy();
        connections.delete(conn);
      };
      // A frozen connection swallows what the client sends, as a half-open one does: a request on a
      // reused keep-alive socket waits like a watch does, and only the client's own deadline ends it.
      client.on('data', (chunk) => {
        if (!conn.frozen) upstream.write(chunk);
      });
      upstream.on('data', (chunk) => {
        if (!conn.frozen) client.write(chunk);
      });
      client.on('close', drop);
      client.on('error', drop);
      // The server ending a frozen connection is not passed on: the client keeps waiting.
      upstream.on('close', () => conn.frozen || drop());
      upstream.on('error', () => conn.frozen || drop());
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const address = server.address();
    if (!address || typeof address === 'string') throw new Error('proxy has no port');
    return new TcpProxy(server, address.port, connections);
  }

  /** Resets every open connection; returns how many. */
  resetAll(): number {
    const n = this.connections.size;
    for (const { client, upstream } of this.connections) {
      client.resetAndDestroy();
      upstream.destroy();
    }
    this.connections.clear();
    return n;
  }

  /** Stops forwarding on every open connection without closing it; new connections work. */
  freezeAll(): number {
    for (const conn of this.connections) conn.frozen = true;
    return this.connections.size;
  }

  async close(): Promise<void> {
    this.resetAll();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}
