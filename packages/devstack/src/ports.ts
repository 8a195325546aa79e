import { randomInt } from 'node:crypto';
import { createServer, Socket } from 'node:net';

/**
 * Ports handed out by {@link freePort}: below Linux's ephemeral range (32768-60999), from which the
 * kernel picks the local port of every outgoing connection, and below Kubernetes' NodePorts
 * (30000-32767). A port asked of the kernel with `listen(0)` comes from that ephemeral range, so
 * in the seconds between choosing it and a JVM binding it, any client connection of the machine
 * could take it ("Address already in use" at Kafka's start under a busy `make test`).
 */
const PORT_RANGE = { low: 20_000, high: 29_999 };
const ATTEMPTS = 100;

/** Whether nothing holds `port` on any local address (a wildcard bind conflicts with every one). */
function canListen(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.unref();
    server.once('error', () => resolve(false));
    server.listen({ port, exclusive: true }, () => server.close(() => resolve(true)));
  });
}

/** A TCP port nothing listens on, chosen at random from a range the kernel never hands out itself. */
export async function freePort(): Promise<number> {
  for (let i = 0; i < ATTEMPTS; i += 1) {
    const port = randomInt(PORT_RANGE.low, PORT_RANGE.high + 1);
    if (await canListen(port)) return port;
  }
  throw new Error(`no free port in ${PORT_RANGE.low}-${PORT_RANGE.high} after ${ATTEMPTS} attempts`);
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
