/** Polling a state until it holds, for the suites that watch the cluster scale something. */

/**
 * Reads the state every `intervalMs` until `done` holds and returns that state; logs the state's
 * `line` each time it changes; throws after `timeoutMs`, naming `what` and the last line.
 */
export async function pollUntil<S>(opts: {
  what: string;
  timeoutMs: number;
  read: () => Promise<S>;
  line: (s: S) => string;
  done: (s: S) => boolean;
  log: (line: string) => void;
  intervalMs?: number;
}): Promise<S> {
  const deadline = Date.now() + opts.timeoutMs;
  let last = '';
  for (;;) {
    const s = await opts.read();
    const line = opts.line(s);
    if (line !== last) opts.log(line);
    last = line;
    if (opts.done(s)) return s;
    if (Date.now() > deadline)
      throw new Error(`timed out after ${opts.timeoutMs / 1000} s waiting for ${opts.what} (${line})`);
    await new Promise((r) => setTimeout(r, opts.intervalMs ?? 2000));
  }
}
