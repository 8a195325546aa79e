/**
 * A service of the pipeline as a real process (`src/main.ts` under tsx), so a fault can SIGKILL or
 * SIGTERM it. Its output goes to a log file; JSON lines are kept in memory for `waitForLog`.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { appendFileSync } from 'node:fs';
import { join } from 'node:path';
import { repoRoot } from '@event-observatory/devstack';
import { withTimeout } from '@event-observatory/service-kit/resilience';

export interface ServiceProcess {
  url: string;
  port: number;
  child: ChildProcess;
  /** The exit code, or the signal's name when a signal ended it. */
  exited: Promise<number | string>;
  /** Resolves when a line logged after this call carries `msg`. */
  waitForLog(msg: string, timeoutMs: number): Promise<void>;
}

/** Starts `services/<name>` on `port` with `env` added to this process's environment. */
export function spawnService(
  name: 'ingest' | 'consumer',
  port: number,
  env: Record<string, string>,
  logFile: string,
): ServiceProcess {
  const child = spawn(process.execPath, ['--conditions=source', '--import', 'tsx', 'src/main.ts'], {
    cwd: join(repoRoot(), 'services', name),
    env: {
      ...process.env,
      HTTP_HOST: '127.0.0.1',
      HTTP_PORT: String(port),
      OTEL_SDK_DISABLED: 'true',
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const waiters = new Set<(msg: string) => void>();
  let rest = '';
  const collect = (chunk: string) => {
    appendFileSync(logFile, chunk);
    const lines = (rest + chunk).split('\n');
    rest = lines.pop() ?? '';
    for (const line of lines) {
      let msg: string;
      try {
        msg = String((JSON.parse(line) as { msg?: unknown }).msg);
      } catch {
        continue; // not a JSON log line (a stack trace): kept in the file only
      }
      for (const wake of waiters) wake(msg);
    }
  };
  child.stdout?.setEncoding('utf8').on('data', collect);
  child.stderr?.setEncoding('utf8').on('data', collect);
  const exited = new Promise<number | string>((resolve) =>
    child.once('exit', (code, signal) => resolve(code ?? signal ?? 'unknown')),
  );
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    child,
    exited,
    waitForLog(msg, timeoutMs) {
      const seen = new Promise<void>((resolve) => {
        const check = (logged: string) => {
          if (logged !== msg) return;
          waiters.delete(check);
          resolve();
        };
        waiters.add(check);
      });
      return withTimeout(seen, timeoutMs, `${name}: log line "${msg}" (see ${logFile})`);
    },
  };
}
