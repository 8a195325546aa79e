/**
 * `keepRunning`: a service that dies is started again after a doubling backoff, each exit reported
 * with the service's name and its exit code or signal, up to a cap of exits in a row; a stop is
 * never mistaken for a crash. With a scripted service (no processes), then with a real search
 * process killed from outside.
 */
import { rmSync } from 'node:fs';
import {
  keepRunning,
  type Restartable,
  restartDelayMs,
  startServiceProcess,
  tempDataDir,
} from '@event-observatory/devstack';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';

const FAST = { initialDelayMs: 10, maxDelayMs: 40, maxRestarts: 3, stableMs: 60_000 };

/** A service whose runs end with `exits` in turn, then run until stopped. */
function scripted(exits: (number | string)[]) {
  let starts = 1;
  let stopRun: (code: number | string) => void = () => {};
  let current = Promise.resolve<number | string>(0);
  const run = () => {
    const next = exits.shift();
    current =
      next === undefined
        ? new Promise((resolve) => {
            stopRun = resolve;
          })
        : Promise.resolve(next);
  };
  run();
  const service: Restartable = {
    exited: () => current,
    async restart() {
      starts++;
      run();
    },
    async stop() {
      stopRun(0);
    },
  };
  return { service, starts: () => starts };
}

describe('keepRunning with a scripted service', () => {
  it('doubles the wait up to its bound', () => {
    expect([1, 2, 3, 4].map((n) => restartDelayMs(FAST, n))).toEqual([10, 20, 40, 40]);
  });

  it('restarts after each exit, naming the service and its exit code or signal', async () => {
    const { service, starts } = scripted([134, 'SIGKILL']);
    const lines: string[] = [];
    const kept = keepRunning(service, { name: 'search', log: (l) => lines.push(l), policy: FAST });
    await expect.poll(() => lines.filter((l) => l === 'search restarted').length).toBe(2);
    expect(lines[0]).toBe(
      'search exited (exit code 134); restarting in 0.01 s (restart 1 of at most 3 in a row)',
    );
    expect(lines[2]).toBe(
      'search exited (signal SIGKILL); restarting in 0.02 s (restart 2 of at most 3 in a row)',
    );
    await kept.stop();
    await kept.done;
    expect(starts()).toBe(3);
    expect(lines).toHaveLength(4);
  });

  it('gives up after the cap of exits in a row, and says so', async () => {
    const { service, starts } = scripted([1, 1, 1, 1, 1]);
    const lines: string[] = [];
    const kept = keepRunning(service, { name: 'consumer', log: (l) => lines.push(l), policy: FAST });
    await kept.done;
    expect(starts()).toBe(4);
    expect(lines.at(-1)).toBe(
      'consumer exited (exit code 1), 4 times in a row: not restarted again (restart it by hand)',
    );
  });
});

describe('keepRunning with a real service', () => {
  let dataDir: string;
  beforeAll(() => {
    dataDir = tempDataDir('keep-running');
  });
  afterAll(() => {
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('starts a killed search process again on its port, and a stop stays a stop', async () => {
    const search = await startServiceProcess({
      name: 'search',
      dataDir,
      env: {
        DATABASE_URL: inject('stack').databaseUrl,
        APPLICATION_SECRET: 'a'.repeat(32),
        SEARCH_AUTH_MODE: 'off',
        OTEL_SDK_DISABLED: 'true',
      },
      listen: { host: 'PLAY_HTTP_ADDRESS', port: 'PLAY_HTTP_PORT' },
    });
    const lines: string[] = [];
    const kept = keepRunning(search, { name: 'search', log: (l) => lines.push(l), policy: FAST });
    const first = search.pid()!;
    process.kill(first, 'SIGKILL');
    await expect.poll(() => lines, { timeout: 90_000 }).toContain('search restarted');
    expect(lines[0]).toMatch(/^search exited \(signal SIGKILL\); restarting in/);
    expect(search.pid()).not.toBe(first);
    expect((await fetch(`${search.url}/health/live`)).status).toBe(200);
    await kept.stop();
    expect(await search.exited()).toBe(0);
    expect(lines).toHaveLength(2);
  }, 120_000);
});
