/**
 * A service of the pipeline as a real process (devstack's `startServiceProcess`, as `make dev`
 * runs it), so a fault can SIGKILL or SIGTERM it. Its output goes to `<dataDir>/<name>.log`; JSON
 * lines are also handed to `waitForLog`. A process that exits without the suite asking says so on
 * stderr with the end of its log, which the suite removes with its data folder.
 */
import {
  type ServiceProcess as DevstackServiceProcess,
  describeExit,
  startServiceProcess,
  tailOf,
} from '@event-observatory/devstack';
import { withTimeout } from '@event-observatory/service-kit/resilience';

export interface ServiceProcess extends DevstackServiceProcess {
  /** Resolves when a line logged after this call carries `msg`. */
  waitForLog(msg: string, timeoutMs: number): Promise<void>;
}

/** Starts `services/<name>` on `port` with `env` added to this process's environment. */
export async function spawnService(
  name: 'ingest' | 'consumer',
  port: number,
  env: Record<string, string>,
  dataDir: string,
  /** Log and pid file name when the service runs more than once (a second consumer). */
  instance?: string,
): Promise<ServiceProcess> {
  const waiters = new Set<(msg: string) => void>();
  const service = await startServiceProcess({
    name,
    instance,
    port,
    dataDir,
    env: { OTEL_SDK_DISABLED: 'true', ...env },
    onLine(line) {
      let msg: string;
      try {
        msg = String((JSON.parse(line) as { msg?: unknown }).msg);
      } catch {
        return; // not a JSON log line (a stack trace): kept in the file only
      }
      for (const wake of waiters) wake(msg);
    },
  });
  const label = instance ?? name;
  // One flag per run: a stop or kill marks the current run as asked for before it ends.
  let run = { asked: false };
  const watch = () => {
    const current = { asked: false };
    run = current;
    void service.exited().then((code) => {
      if (current.asked) return;
      process.stderr.write(
        `[faults] ${label} exited on its own (${describeExit(code)}); the end of ${service.logFile}:\n${tailOf(service.logFile)}\n`,
      );
    });
  };
  watch();
  return {
    ...service,
    stop() {
      run.asked = true;
      return service.stop();
    },
    kill() {
      run.asked = true;
      return service.kill();
    },
    async restart() {
      await service.restart();
      watch();
    },
    waitForLog(msg, timeoutMs) {
      const seen = new Promise<void>((resolve) => {
        const check = (logged: string) => {
          if (logged !== msg) return;
          waiters.delete(check);
          resolve();
        };
        waiters.add(check);
      });
      return withTimeout(seen, timeoutMs, `${label}: log line "${msg}" (see ${service.logFile})`);
    },
  };
}
