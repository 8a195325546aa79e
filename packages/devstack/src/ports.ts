import { randomInt } from 'node:crypto';
import { closeSync, mkdirSync, openSync, rmSync, statSync, utimesSync } from 'node:fs';
import { createServer, Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * Ports handed out by {@link freePort}: below Linux's ephemeral range (32768-60999), from which the
 * kernel picks the local port of every outgoing connection, and below Kubernetes' NodePorts
 * (30000-32767). A port asked of the kernel with `listen(0)` comes from that ephemeral range, so
 * in the seconds between choosing it and a JVM binding it, any client connection of the machine
 * could take it ("Address already in use" at Kafka's start under a busy `make test`). The test
 * cluster's fixed ports (scripts/cluster: the API server's, etcd's, the kubelet's) are outside
 * it too: a service given one at random while the cluster starts would keep etcd from binding it.
 */
const PORT_RANGE = { low: 20_000, high: 29_999 };
const ATTEMPTS = 100;

/**
 * Where {@link freePort} claims each port it hands out, one empty file per port, so that two
 * processes of this machine (vitest workers, a benchmark beside a test) never hand out the same
 * port in the seconds before its first user binds it: a free port is only free until a service
 * starting in another process takes it ("EADDRINUSE" at start-up).
 */
export const PORT_CLAIMS = join(tmpdir(), 'event-observatory-ports');
/** How long a claim holds: far longer than any service takes to bind the port it was given. */
const CLAIM_MS = 5 * 60_000;

/** Whether nothing holds `port` on any local address (a wildcard bind conflicts with every one). */
function canListen(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.unref();
    server.once('error', () => resolve(false));
    server.listen({ port, exclusive: true }, () => server.close(() => resolve(true)));
  });
}

/**
 * Claims `port` (a file in `dir`): false when it was claimed within {@link CLAIM_MS}, by this
 * process or another; an older claim has long been bound or abandoned and is taken over.
 */
export function claimPort(port: number, dir = PORT_CLAIMS): boolean {
  mkdirSync(dir, { recursive: true });
  const file = join(dir, String(port));
  try {
    closeSync(openSync(file, 'wx'));
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') return false;
  }
  // A takeover checks the claim's age and renews it under a guard only one process can create,
  // so two processes that both found it old cannot both renew it.
  const guard = `${file}.takeover`;
  try {
    closeSync(openSync(guard, 'wx'));
  } catch {
    return false;
  }
  try {
    if (Date.now() - statSync(file).mtimeMs < CLAIM_MS) return false;
    const now = new Date();
    utimesSync(file, now, now);
    return true;
  } catch {
    return false;
  } finally {
    rmSync(guard, { force: true });
  }
}

/**
 * A TCP port nothing listens on and no other process of this machine was handed in the last
 * minutes, chosen at random from a range the kernel never hands out itself.
 */
export async function freePort(): Promise<number> {
  for (let i = 0; i < ATTEMPTS; i += 1) {
    const port = randomInt(PORT_RANGE.low, PORT_RANGE.high + 1);
    if ((await canListen(port)) && claimPort(port)) return port;
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
