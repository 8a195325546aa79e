/**
 * A cheap open-loop HTTP/1.1 load generator on raw keep-alive TCP sockets.
 *
 * Request `i` is *due* at `start + i / rate`; a single scheduling loop sends every request that
 * is due, whatever is outstanding, and its latency counts from the due time (no coordinated
 * omission: a request that waits for a free connection waits on the clock too). Each connection
 * carries one request at a time (no pipelining, so one slow answer cannot hold up another); a
 * new connection is opened when none is idle, up to `maxConnections`, then requests wait in a
 * FIFO backlog. With `expectContinue`, a request is sent as `Expect: 100-continue` (simulating
 * clients that ask before sending a large body, as curl does past 1 MiB): its head first, its body
 * only after the server's `100 Continue`; a final answer instead means the body is never sent, and
 * retires the connection. So does an answer with `connection: close` (the next request opens
 * another).
 *
 * Why not `node:http`: its client costs tens of microseconds of JavaScript per request (agent,
 * header objects, IncomingMessage streams), which on a 2-core machine shared with the broker and
 * the service takes CPU from the very process being measured. Here a request is a head and a
 * pre-built body written with one `writev` (two writes with `expectContinue`), and a response is
 * parsed only as far as the status code and the body length.
 */
import net from 'node:net';

export interface LoadRequest {
  /** The request head without the final CRLF pair: request line and headers, CRLF-separated. */
  head: string;
  body: Buffer;
}

export interface LoadOptions {
  host: string;
  port: number;
  /** Requests per second. */
  rate: number;
  seconds: number;
  /** Builds request `i`; called at its due time. */
  request: (i: number) => LoadRequest;
  maxConnections?: number;
  /** Sends every request with `Expect: 100-continue`, its body only after `100 Continue`. */
  expectContinue?: boolean;
  /** Called about every 100 ms while the run lasts (RSS sampling). */
  onTick?: () => void;
  /**
   * Events a response acknowledged (e.g. `created` of a batch response); when given, response
   * bodies are kept and passed to it. Default: 1 for a 200, else 0.
   */
  acknowledged?: (status: number, body: Buffer) => number;
}

export interface LoadResult {
  sent: number;
  statuses: Record<string, number>;
  /** Milliseconds from due time to the end of the response, sorted ascending. */
  latencies: Float64Array;
  /** The same, of the 200 responses only. */
  okLatencies: Float64Array;
  /** Seconds from the first due time to the last response. */
  elapsed: number;
  /** Events acknowledged (see `LoadOptions.acknowledged`). */
  acknowledged: number;
  /** CPU seconds the generator's process spent during the run. */
  cpuSeconds: number;
  connections: number;
}

interface Conn {
  socket: net.Socket;
  busy: boolean;
  due: number;
  buf: Buffer | undefined;
  /** Bytes of body still to skip after the head, or -1 while reading the head. */
  remaining: number;
  status: number;
  chunked: boolean;
  /** Body bytes kept when `acknowledged` is given. */
  body: Buffer[];
  /** The body of a request that waits for `100 Continue`. */
  held: Buffer | undefined;
  /** The answer being read said `connection: close`. */
  closing: boolean;
}

const CRLFCRLF = Buffer.from('\r\n\r\n');

export function runLoad(opts: LoadOptions): Promise<LoadResult> {
  const maxConnections = opts.maxConnections ?? 512;
  const total = Math.round(opts.rate * opts.seconds);
  const latencies = new Float64Array(total);
  const okLatencies = new Float64Array(total);
  let done = 0;
  let oks = 0;
  let sent = 0;
  const statuses: Record<string, number> = {};
  const idle: Conn[] = [];
  const all = new Set<Conn>();
  const backlog: { i: number; due: number }[] = [];
  const cpu0 = process.cpuUsage();
  const start = performance.now() + 20;
  let lastEnd = start;
  let finish: (r: LoadResult) => void = () => {};
  let lastTick = 0;
  let acknowledged = 0;
  const countAck = opts.acknowledged;

  const record = (conn: Conn, status: number) => {
    const now = performance.now();
    latencies[done++] = now - conn.due;
    if (status === 200) okLatencies[oks++] = now - conn.due;
    lastEnd = now;
    statuses[status] = (statuses[status] ?? 0) + 1;
  };

  const complete = (conn: Conn, status: number) => {
    record(conn, status);
    if (countAck) {
      acknowledged += countAck(status, Buffer.concat(conn.body));
      conn.body = [];
    } else if (status === 200) acknowledged++;
    conn.busy = false;
    conn.held = undefined;
    if (conn.closing) {
      all.delete(conn);
      conn.socket.destroy();
      const next = backlog.shift();
      if (next) dispatch(next.i, next.due);
    } else {
      const next = backlog.shift();
      if (next) send(conn, next.i, next.due);
      else idle.push(conn);
    }
    checkDone();
  };

  const checkDone = () => {
    if (done < total || sent < total) return;
    for (const c of all) c.socket.destroy();
    const cpu = process.cpuUsage(cpu0);
    const sorted = latencies.slice(0, done).sort();
    finish({
      sent,
      statuses,
      acknowledged,
      latencies: sorted,
      okLatencies: okLatencies.slice(0, oks).sort(),
      elapsed: (lastEnd - start) / 1000,
      cpuSeconds: (cpu.user + cpu.system) / 1e6,
      connections: all.size,
    });
  };

  const fail = (conn: Conn) => {
    // Already retired by `complete` (which dispatched the backlog for it).
    if (!all.delete(conn)) return;
    const i = idle.indexOf(conn);
    if (i >= 0) idle.splice(i, 1);
    if (conn.busy) {
      conn.busy = false;
      record(conn, 0);
      checkDone();
    }
    // Its place is free: a request waiting in the backlog takes it on a new connection.
    const next = backlog.shift();
    if (next) dispatch(next.i, next.due);
  };

  /** Parses as much of the response as is buffered; returns true when one response ended. */
  const parse = (conn: Conn): void => {
    for (;;) {
      const buf = conn.buf;
      if (!buf || buf.length === 0) return;
      if (conn.remaining < 0) {
        const end = buf.indexOf(CRLFCRLF);
        if (end < 0) return;
        // "HTTP/1.1 200 OK"
        conn.status = (buf[9]! - 48) * 100 + (buf[10]! - 48) * 10 + (buf[11]! - 48);
        const head = buf.toString('latin1', 0, end).toLowerCase();
        if (conn.status === 100) {
          // Interim: the server asks for the body.
          conn.buf = buf.subarray(end + 4);
          if (conn.held) conn.socket.write(conn.held);
          conn.held = undefined;
          continue;
        }
        // A final answer to a held body: the body is never sent, so the connection cannot carry on.
        conn.closing = head.includes('\r\nconnection: close') || conn.held !== undefined;
        const cl = head.indexOf('\r\ncontent-length:');
        conn.chunked = cl < 0 && head.includes('\r\ntransfer-encoding: chunked');
        conn.remaining = cl < 0 ? 0 : Number.parseInt(head.slice(cl + 17, head.indexOf('\r\n', cl + 2)), 10);
        conn.buf = buf.subarray(end + 4);
        if (!conn.chunked && conn.remaining === 0) {
          conn.remaining = -1;
          complete(conn, conn.status);
        }
        continue;
      }
      if (conn.chunked) {
        // Skip chunks until the zero-size one and its trailing CRLF.
        const line = buf.indexOf('\r\n');
        if (line < 0) return;
        const size = Number.parseInt(buf.toString('latin1', 0, line), 16);
        if (size === 0) {
          if (buf.length < line + 4) return;
          conn.buf = buf.subarray(line + 4);
          conn.remaining = -1;
          complete(conn, conn.status);
          continue;
        }
        if (buf.length < line + 2 + size + 2) return;
        if (countAck) conn.body.push(buf.subarray(line + 2, line + 2 + size));
        conn.buf = buf.subarray(line + 2 + size + 2);
        continue;
      }
      if (buf.length < conn.remaining) {
        if (countAck) conn.body.push(buf);
        conn.remaining -= buf.length;
        conn.buf = undefined;
        return;
      }
      if (countAck) conn.body.push(buf.subarray(0, conn.remaining));
      conn.buf = buf.subarray(conn.remaining);
      conn.remaining = -1;
      complete(conn, conn.status);
    }
  };

  const open = (): Conn => {
    const socket = net.connect({ host: opts.host, port: opts.port, noDelay: true });
    const conn: Conn = {
      socket,
      busy: false,
      due: 0,
      buf: undefined,
      remaining: -1,
      status: 0,
      chunked: false,
      body: [],
      held: undefined,
      closing: false,
    };
    socket.on('data', (chunk: Buffer) => {
      conn.buf = conn.buf && conn.buf.length > 0 ? Buffer.concat([conn.buf, chunk]) : chunk;
      parse(conn);
    });
    socket.on('error', () => fail(conn));
    socket.on('close', () => fail(conn));
    all.add(conn);
    return conn;
  };

  const send = (conn: Conn, i: number, due: number) => {
    const { head, body } = opts.request(i);
    conn.busy = true;
    conn.due = due;
    if (opts.expectContinue) {
      conn.held = body;
      conn.socket.write(
        `${head}\r\ncontent-length: ${body.byteLength}\r\nexpect: 100-continue\r\n\r\n`,
        'latin1',
      );
    } else {
      conn.socket.cork();
      conn.socket.write(`${head}\r\ncontent-length: ${body.byteLength}\r\n\r\n`, 'latin1');
      conn.socket.write(body);
      conn.socket.uncork();
    }
    sent++;
  };

  const dispatch = (i: number, due: number) => {
    const conn = idle.pop() ?? (all.size < maxConnections ? open() : undefined);
    if (conn) send(conn, i, due);
    else backlog.push({ i, due });
  };

  let next = 0;
  const loop = () => {
    const now = performance.now();
    if (opts.onTick && now - lastTick >= 100) {
      lastTick = now;
      opts.onTick();
    }
    const dueCount = Math.min(total, Math.floor(((now - start) * opts.rate) / 1000) + 1);
    while (next < dueCount) {
      dispatch(next, start + (next * 1000) / opts.rate);
      next++;
    }
    if (next < total) {
      const wait = start + (next * 1000) / opts.rate - performance.now();
      setTimeout(loop, Math.max(0, Math.min(wait, 5)));
    } else if (opts.onTick) {
      const sampler = setInterval(() => {
        if (done >= total) clearInterval(sampler);
        else opts.onTick?.();
      }, 100);
    }
  };

  return new Promise<LoadResult>((resolve) => {
    finish = resolve;
    setTimeout(loop, 20);
  });
}

export function percentile(sorted: Float64Array, p: number): number {
  if (sorted.length === 0) return Number.NaN;
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}
