/**
 * A service of the pipeline as a real process (devstack's `startServiceProcess`, as `make dev`
 * runs it), so a fault can SIGKILL or SIGTERM it. Its output goes to `<dataDir>/<name>.log`; JSON
 * lines are also handed to `waitForLog`.
 */
import {
  type ServiceProcess as DevstackServiceProcess,
  startServiceProcess,
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
  return {
    ...service,
    waitForLog(msg, timeoutMs) {
      const seen = new Promise<void>((resolve) => {
        const check = (logged: string) => {
          if (logged !== msg) return;
          waiters.delete(check);
          resolve();
        };
        waiters.add(check);
      });
      return withTimeout(seen, timeoutMs, `${instance ?? name}: log line "${msg}" (see ${service.logFile})`);
    },
  };
}
