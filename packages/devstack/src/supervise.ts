/**
 * Child-process supervision shared by the Kafka and PostgreSQL launchers.
 *
 * Guarantees, in order of strength:
 * 1. `stopChild` sends SIGTERM (or the given signal), waits for the exit, and sends SIGKILL after a bound.
 * 2. Every child is written to a pid file in its data directory; the next start in the same directory
 *    kills a survivor of a crashed run (only when its command line still names that directory, so a
 *    recycled pid is never hit).
 * 3. When this Node.js process exits (normally, by an uncaught error, or by SIGINT/SIGTERM when nobody
 *    else handles them) every running child receives SIGTERM.
 * 4. A tiny detached watchdog (`sh`) per child polls this process and the child once a second; when this
 *    process disappears without cleaning up (SIGKILL, OOM), it terminates the child. So no orphan
 *    survives even a hard kill of the test runner.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { closeSync, createWriteStream, openSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';

export interface SpawnOptions {
  /** Short name used in messages and the pid file name (`<pidDir>/<name>.pid`). */
  name: string;
  command: string;
  args: string[];
  /** Directory of the pid file; also the directory a stale process must mention to be killed. */
  pidDir: string;
  /** stdout and stderr of the child are appended to this file. */
  logFile: string;
  env?: NodeJS.ProcessEnv;
  cwd?: string;
  uid?: number;
  gid?: number;
  /** Seconds the watchdog gives the child between SIGTERM and SIGKILL when the parent died. */
  watchdogGraceSeconds?: number;
  /** Each line the child writes, and where, besides the log file. */
  onLine?: (line: string, stream: 'stdout' | 'stderr') => void;
  /**
   * Own process group: a Ctrl-C in the terminal reaches only this process, which then stops the
   * child itself (one SIGTERM, not the terminal's SIGINT beside it).
   */
  detached?: boolean;
}

export interface Supervised {
  name: string;
  child: ChildProcess;
  pid: number;
  logFile: string;
  pidFile: string;
  /** Resolves with the exit code (or signal name) once the child is gone. */
  exited: Promise<number | string>;
  /** True once the child has exited. */
  hasExited(): boolean;
}

const running = new Set<Supervised>();
let hooksInstalled = false;

function pidFilePath(pidDir: string, name: string): string {
  return `${pidDir}/${name}.pid`;
}

/** True when a process with this pid exists (zombies count as gone). */
export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const state = stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3);
    return state !== 'Z' && state !== 'X';
  } catch {
    return true; // no procfs: trust kill(0)
  }
}

function commandLine(pid: number): string | undefined {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').replaceAll('\0', ' ');
  } catch {
    return undefined;
  }
}

/**
 * Kills a process left behind by an earlier run in the same directory (crash, SIGKILL of the parent):
 * reads `<pidDir>/<name>.pid`, and when that pid is alive and its command line contains `marker`
 * (normally the data directory), sends SIGTERM, then SIGKILL after `graceMs`.
 * Returns the pid that was killed, if any.
 */
export async function killStale(pidDir: string, name: string, marker: string, graceMs = 15_000) {
  const file = pidFilePath(pidDir, name);
  let pid: number;
  try {
    pid = Number.parseInt(readFileSync(file, 'utf8').trim(), 10);
  } catch {
    return undefined;
  }
  rmSync(file, { force: true });
  if (!Number.isInteger(pid) || pid <= 1 || !isAlive(pid)) return undefined;
  const cmd = commandLine(pid);
  if (cmd === undefined || !cmd.includes(marker)) return undefined;
  await terminate(pid, 'SIGTERM', graceMs);
  return pid;
}

/** Sends `signal`, waits up to `graceMs` for the pid to vanish, then SIGKILLs it. */
export async function terminate(pid: number, signal: NodeJS.Signals, graceMs: number): Promise<void> {
  try {
    process.kill(pid, signal);
  } catch {
    return;
  }
  const deadline = Date.now() + graceMs;
  while (Date.now() < deadline) {
    if (!isAlive(pid)) return;
    await sleep(100);
  }
  try {
    process.kill(pid, 'SIGKILL');
  } catch {
    return;
  }
  while (isAlive(pid)) await sleep(50);
}

/** Starts a supervised child. The caller waits for readiness itself. */
export function spawnSupervised(opts: SpawnOptions): Supervised {
  installHooks();
  const out = openSync(opts.logFile, 'a');
  let child: ChildProcess;
  try {
    child = spawn(opts.command, opts.args, {
      cwd: opts.cwd,
      env: opts.env ?? process.env,
      stdio: ['ignore', opts.onLine ? 'pipe' : out, opts.onLine ? 'pipe' : out],
      uid: opts.uid,
      gid: opts.gid,
      detached: opts.detached,
    });
  } finally {
    closeSync(out);
  }
  const copied = opts.onLine ? copyLines(child, opts.logFile, opts.onLine) : Promise.resolve();
  if (child.pid === undefined) {
    throw new Error(`${opts.name}: could not start ${opts.command}`);
  }
  const pid = child.pid;
  const pidFile = pidFilePath(opts.pidDir, opts.name);
  writeFileSync(pidFile, `${pid}\n`);
  let done = false;
  const exited = new Promise<number | string>((resolve) => {
    child.once('exit', async (code, signal) => {
      // Its last lines may still be in the pipe: hand them over first (a grandchild holding the
      // pipe open gets a second).
      await Promise.race([copied, sleep(1_000)]);
      done = true;
      running.delete(supervised);
      rmSync(pidFile, { force: true });
      resolve(code ?? signal ?? 'unknown');
    });
    child.once('error', () => {
      done = true;
      running.delete(supervised);
      rmSync(pidFile, { force: true });
      resolve('spawn-error');
    });
  });
  const supervised: Supervised = {
    name: opts.name,
    child,
    pid,
    logFile: opts.logFile,
    pidFile,
    exited,
    hasExited: () => done,
  };
  running.add(supervised);
  startWatchdog(pid, opts.watchdogGraceSeconds ?? 20);
  return supervised;
}

/**
 * Appends the child's output to `logFile` and hands each whole line to `onLine`; resolves once
 * both streams have ended.
 */
function copyLines(
  child: ChildProcess,
  logFile: string,
  onLine: NonNullable<SpawnOptions['onLine']>,
): Promise<unknown> {
  const log = createWriteStream(logFile, { flags: 'a' });
  const ended: Promise<void>[] = [];
  for (const [stream, name] of [
    [child.stdout, 'stdout'],
    [child.stderr, 'stderr'],
  ] as const) {
    if (!stream) continue;
    ended.push(new Promise((resolve) => stream.once('close', resolve)));
    let rest = '';
    stream.setEncoding('utf8').on('data', (chunk: string) => {
      log.write(chunk);
      const lines = (rest + chunk).split('\n');
      rest = lines.pop() ?? '';
      for (const line of lines) onLine(line, name);
    });
    stream.on('end', () => {
      if (rest !== '') onLine(rest, name);
    });
  }
  return Promise.all(ended).then(() => new Promise((resolve) => log.end(resolve)));
}

/** Stops a supervised child: `signal` first, SIGKILL after `graceMs`. Resolves when it is gone. */
export async function stopChild(s: Supervised, signal: NodeJS.Signals, graceMs: number): Promise<void> {
  if (s.hasExited()) return;
  try {
    s.child.kill(signal);
  } catch {
    // already gone
  }
  const timer = new Promise<'timeout'>((resolve) => {
    const t = setTimeout(() => resolve('timeout'), graceMs);
    t.unref();
  });
  if ((await Promise.race([s.exited, timer])) === 'timeout') {
    try {
      s.child.kill('SIGKILL');
    } catch {
      // already gone
    }
    await s.exited;
  }
}

/**
 * A detached shell that outlives a hard-killed parent: once the parent is gone while the child still
 * runs, it sends SIGTERM to the child and SIGKILL after the grace period. It exits on its own as soon
 * as the child exits. `sh` costs about a megabyte; polling once a second costs nothing measurable.
 */
function startWatchdog(childPid: number, graceSeconds: number): void {
  const script = [
    'p=$1; c=$2; g=$3',
    'while kill -0 "$c" 2>/dev/null; do',
    '  if ! kill -0 "$p" 2>/dev/null; then',
    '    kill -TERM "$c" 2>/dev/null; i=0',
    '    while kill -0 "$c" 2>/dev/null && [ "$i" -lt "$g" ]; do sleep 1; i=$((i+1)); done',
    '    kill -KILL "$c" 2>/dev/null; exit 0',
    '  fi',
    '  sleep 1',
    'done',
  ].join('\n');
  const dog = spawn(
    '/bin/sh',
    ['-c', script, 'devstack-watchdog', String(process.pid), String(childPid), String(graceSeconds)],
    {
      detached: true,
      stdio: 'ignore',
    },
  );
  dog.unref();
}

function killAllSync(): void {
  for (const s of running) {
    try {
      s.child.kill('SIGTERM');
    } catch {
      // ignore
    }
  }
}

function installHooks(): void {
  if (hooksInstalled) return;
  hooksInstalled = true;
  process.once('exit', killAllSync);
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
    const onSignal = () => {
      // Somebody else (make dev, vitest) handles this signal: they call stop(); the exit hook and the
      // watchdogs cover the rest. When we are the only listener, stop the children and die as the
      // signal asked.
      if (process.listenerCount(signal) > 1) return;
      const children = [...running];
      void Promise.all(children.map((s) => stopChild(s, 'SIGTERM', 15_000))).finally(() => {
        process.removeListener(signal, onSignal);
        process.kill(process.pid, signal);
      });
    };
    process.on(signal, onSignal);
  }
}

/** Children started by this process that have not exited yet (for diagnostics and tests). */
export function runningChildren(): readonly Supervised[] {
  return [...running];
}

/** Last `maxBytes` of a log file, for error messages. */
export function tailOf(file: string, maxBytes = 4000): string {
  try {
    const text = readFileSync(file, 'utf8');
    return text.slice(-maxBytes);
  } catch {
    return '';
  }
}

export interface RunOptions {
  cwd?: string;
  env?: NodeJS.ProcessEnv;
  uid?: number;
  gid?: number;
  /** Message when the command is not installed (ENOENT). */
  missingHint?: string;
}

/** Runs a command to completion, capturing its output; rejects with the output's tail on failure. */
export function runCommand(command: string, args: string[], opts: RunOptions = {}): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, {
      cwd: opts.cwd,
      env: opts.env ?? process.env,
      uid: opts.uid,
      gid: opts.gid,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    const collect = (chunk: Buffer) => {
      output += chunk.toString();
    };
    child.stdout.on('data', collect);
    child.stderr.on('data', collect);
    child.once('error', (error) =>
      reject(
        (error as NodeJS.ErrnoException).code === 'ENOENT' && opts.missingHint
          ? new Error(`${command} not found: ${opts.missingHint}`)
          : error,
      ),
    );
    child.once('close', (code) =>
      code === 0
        ? resolve(output)
        : reject(new Error(`${command} ${args.at(-1) ?? ''} failed (exit ${code}):\n${output.slice(-3000)}`)),
    );
  });
}

export interface ServiceDefinition extends Omit<SpawnOptions, 'pidDir'> {
  /** Folder of the pid file; a stale process must mention `marker` in its command line to be killed. */
  dataDir: string;
  marker: string;
  /** First line written to the log at each start. */
  banner: () => string;
  /** Resolves once the service answers; should throw when `proc.hasExited()`. */
  waitReady: (proc: Supervised) => Promise<void>;
  stopSignal: NodeJS.Signals;
  stopGraceMs: number;
}

export interface ServiceControl {
  /** Starts the process and waits until it is ready; a no-op (same promise) while it runs. */
  start(): Promise<void>;
  /** Stops the process (stopSignal, SIGKILL after the grace period); a no-op when stopped. */
  stop(): Promise<void>;
  /** SIGKILL at once, as a crash would (fault tests); resolves when the process is gone. */
  kill(): Promise<void>;
  pid(): number | undefined;
  /** The exit code (or signal name) of the current or last run; undefined before the first start. */
  exited(): Promise<number | string> | undefined;
}

/** start/stop/pid around one long-running process, restartable any number of times. */
export function supervisedService(def: ServiceDefinition): ServiceControl {
  let proc: Supervised | undefined;
  let last: Supervised | undefined;
  let starting: Promise<void> | undefined;
  return {
    async start() {
      if (proc && !proc.hasExited()) return starting;
      await killStale(def.dataDir, def.name, def.marker);
      writeFileSync(def.logFile, `${def.banner()}\n`, { flag: 'a' });
      const current = spawnSupervised({ ...def, pidDir: def.dataDir });
      proc = current;
      last = current;
      starting = def.waitReady(current).catch(async (error) => {
        await stopChild(current, 'SIGKILL', 5_000);
        throw error;
      });
      return starting;
    },
    async stop() {
      const current = proc;
      if (!current) return;
      await stopChild(current, def.stopSignal, def.stopGraceMs);
      proc = undefined;
    },
    async kill() {
      const current = proc;
      if (!current) return;
      await stopChild(current, 'SIGKILL', 5_000);
      proc = undefined;
    },
    pid: () => (proc && !proc.hasExited() ? proc.pid : undefined),
    exited: () => last?.exited,
  };
}

/**
 * Calls `attempt` every `intervalMs` until it returns true, failing early when `proc` exits and with
 * `describe(lastError)` after `timeoutMs`.
 */
export async function pollReady(
  proc: Supervised,
  timeoutMs: number,
  intervalMs: number,
  attempt: () => Promise<boolean>,
  what: string,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let lastError: unknown;
  while (Date.now() < deadline) {
    if (proc.hasExited()) {
      throw new Error(
        `${what} exited during start-up; last lines of ${proc.logFile}:\n${tailOf(proc.logFile)}`,
      );
    }
    try {
      if (await attempt()) return;
    } catch (error) {
      lastError = error;
    }
    await sleep(intervalMs);
  }
  throw new Error(
    `${what} not ready after ${timeoutMs} ms (${String(lastError)}); see ${proc.logFile}:\n${tailOf(proc.logFile)}`,
  );
}
