import { createServer, Socket } from 'node:net';

/** Asks the kernel for a free TCP port on 127.0.0.1. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => {
        if (address && typeof address === 'object') resolve(address.port);
        else reject(new Error('no port assigned'));
      });
    });
  });
}

/** True when something accepts TCP connections on 127.0.0.1:port. */
export function isListening(port: number, timeoutMs = 500): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = new Socket();
    const done = (result: boolean) => {
      socket.destroy();
      resolve(result);
    };
    socket.setTimeout(timeoutMs, () => done(false));
    socket.once('error', () => done(false));
    socket.connect(port, '127.0.0.1', () => done(true));
  });
}

/** Throws a clear error when one of the fixed ports (0/undefined: none) already accepts connections. */
export async function refuseBusyPorts(what: string, ports: Array<number | undefined>): Promise<void> {
  for (const port of ports) {
    if (port && (await isListening(port))) {
      throw new Error(
        `${what}: port ${port} on 127.0.0.1 is already in use; stop what listens there or choose another port`,
      );
    }
  }
}
