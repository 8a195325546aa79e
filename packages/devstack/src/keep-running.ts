/**
 * Restarts a service process that dies on its own (a crash, an out-of-memory abort, a kill from
 * outside), as Kubernetes restarts a container: each exit is reported in one line naming the
 * service and its exit code or signal, the next start waits a backoff that doubles from
 * `initialDelayMs` to `maxDelayMs`, and after `maxRestarts` exits in a row (a run that stayed up
 * `stableMs` resets the count) it gives up and says so. `stop()` stops the service for good.
 *
 * @example
 * const search = keepRunning(await startServiceProcess({ name: 'search', ... }), { name: 'search', log: console.log });
 * await search.stop();
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type { ServiceProcess } from './service-process.js';

export interface RestartPolicy {
  /** Wait before the first restart; doubled for each exit in a row. */
  initialDelayMs: number;
  maxDelayMs: number;
  /** Exits in a row after which the service is left stopped. */
  maxRestarts: number;
  /** A run this long resets the count of exits in a row. */
  stableMs: number;
}

export const DEFAULT_RESTART_POLICY: RestartPolicy = {
  initialDelayMs: 1_000,
  maxDelayMs: 30_000,
  maxRestarts: 5,
  stableMs: 60_000,
};

/** What `keepRunning` needs of a service: `ServiceProcess` has it. */
export type Restartable = Pick<ServiceProcess, 'exited' | 'restart' | 'stop'>;

export interface KeepRunningOptions {
  /** The service's name in the lines written. */
  name: string;
  /** Where the lines go. */
  log: (line: string) => void;
  policy?: Partial<RestartPolicy>;
}

export interface KeptService {
  /** Stops the service and its restarts; an exit from now on is expected. */
  stop(): Promise<void>;
  /** Resolves when the supervision ends: after `stop()`, or when it gave up. */
  done: Promise<void>;
}

/** The wait before restart number `inRow` (1 for the first exit in a row). */
export function restartDelayMs(policy: RestartPolicy, inRow: number): number {
  return Math.min(policy.maxDelayMs, policy.initialDelayMs * 2 ** (inRow - 1));
}

/** `exited()`'s value as a reader wants it: `exit code 1` or `signal SIGKILL`. */
export function describeExit(code: number | string): string {
  return typeof code === 'number' ? `exit code ${code}` : /^SIG/.test(code) ? `signal ${code}` : code;
}

export function keepRunning(service: Restartable, opts: KeepRunningOptions): KeptService {
  const policy = { ...DEFAULT_RESTART_POLICY, ...opts.policy };
  const stopping = new AbortController();
  const watch = async () => {
    let inRow = 0;
    while (!stopping.signal.aborted) {
      const startedAt = Date.now();
      const code = await service.exited();
      if (stopping.signal.aborted) return;
      inRow = Date.now() - startedAt >= policy.stableMs ? 1 : inRow + 1;
      if (inRow > policy.maxRestarts) {
        opts.log(
          `${opts.name} exited (${describeExit(code)}), ${inRow} times in a row: not restarted again (restart it by hand)`,
        );
        return;
      }
      const delay = restartDelayMs(policy, inRow);
      opts.log(
        `${opts.name} exited (${describeExit(code)}); restarting in ${delay / 1000} s (restart ${inRow} of at most ${policy.maxRestarts} in a row)`,
      );
      try {
        await sleep(delay, undefined, { signal: stopping.signal });
        await service.restart();
        opts.log(`${opts.name} restarted`);
      } catch (err) {
        if (stopping.signal.aborted) return;
        // A start that failed counts as one more exit in a row; `exited()` is already settled.
        opts.log(`${opts.name} did not start again: ${(err as Error).message.split('\n')[0]}`);
      }
    }
  };
  const done = watch();
  return {
    async stop() {
      stopping.abort();
      await service.stop();
      await done;
    },
    done,
  };
}
