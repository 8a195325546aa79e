import type { Logger } from '../logger/index.js';
import { settleWithin, TIMED_OUT } from '../resilience/index.js';

/** One step of a graceful shutdown, e.g. `{ name: 'listener', run: server.close }`. */
export interface ShutdownStep {
  name: string;
  run: () => Promise<unknown> | unknown;
}

export interface ShutdownOptions {
  /** Run in order: stop the listener, drain producers/consumers, close pools, close telemetry. */
  steps: ShutdownStep[];
  /** Bound on the whole shutdown; past it the process exits with 1. */
  timeoutMs: number;
  logger: Logger;
  /** Default `['SIGTERM', 'SIGINT']`. */
  signals?: NodeJS.Signals[];
  /** Default `process.exit`; tests pass their own. */
  exit?: (code: number) => void;
}

export interface ShutdownHandle {
  /** Runs the shutdown now (as a signal would); resolves with the exit code passed to `exit`. */
  shutdown(reason?: string): Promise<number>;
  /** Removes the signal listeners (tests). */
  dispose(): void;
}

/**
 * Installs SIGTERM and SIGINT handlers that run the steps one after another, each logged with
 * its duration. A failing step is logged and the next ones still run; the exit code is 0 when all
 * succeeded and 1 when one failed or `timeoutMs` ran out first. A second signal during shutdown
 * exits with 1 at once.
 *
 * @example
 * ```ts
 * installShutdown({
 *   steps: [
 *     { name: 'listener', run: server.close },
 *     { name: 'producer', run: () => producer.disconnect() },
 *     { name: 'telemetry', run: tracing.shutdown },
 *   ],
 *   timeoutMs: 15_000,
 *   logger,
 * });
 * ```
 */
export function installShutdown(opts: ShutdownOptions): ShutdownHandle {
  const exit = opts.exit ?? ((code: number) => process.exit(code));
  const signals = opts.signals ?? ['SIGTERM', 'SIGINT'];
  let running: Promise<number> | undefined;

  const shutdown = (reason = 'requested'): Promise<number> => {
    if (running) return running;
    running = run(reason).then((code) => {
      exit(code);
      return code;
    });
    return running;
  };

  const run = async (reason: string): Promise<number> => {
    const started = Date.now();
    opts.logger.info(
      { reason, steps: opts.steps.map((s) => s.name), timeoutMs: opts.timeoutMs },
      'shutting down',
    );
    const steps = (async () => {
      let failed = false;
      for (const step of opts.steps) {
        const stepStarted = Date.now();
        try {
          await step.run();
          opts.logger.info({ step: step.name, ms: Date.now() - stepStarted }, 'shutdown step done');
        } catch (err) {
          failed = true;
          opts.logger.error({ step: step.name, err, ms: Date.now() - stepStarted }, 'shutdown step failed');
        }
      }
      return failed ? 1 : 0;
    })();
    const outcome = await settleWithin(steps, opts.timeoutMs);
    if (outcome === TIMED_OUT) {
      opts.logger.error({ timeoutMs: opts.timeoutMs }, 'shutdown timed out');
      return 1;
    }
    opts.logger.info({ ms: Date.now() - started, exitCode: outcome }, 'shutdown complete');
    return outcome;
  };

  const onSignal = (signal: NodeJS.Signals) => {
    if (running) {
      opts.logger.error({ signal }, 'second signal during shutdown; exiting now');
      exit(1);
      return;
    }
    void shutdown(signal);
  };
  for (const signal of signals) process.on(signal, onSignal);
  return {
    shutdown,
    dispose() {
      for (const signal of signals) process.off(signal, onSignal);
    },
  };
}
