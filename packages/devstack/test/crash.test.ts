import { type ChildProcess, spawn } from 'node:child_process';
import { rmSync } from 'node:fs';
import { startPostgres, tempDataDir } from '@event-observatory/devstack';
import { afterAll, describe, expect, it } from 'vitest';
import { processesMentioning, waitFor } from './processes.js';

const dirs: string[] = [];
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

/** Runs the fixture in a separate Node.js process and returns it with the pid of its postmaster. */
async function holdPostgres(dataDir: string): Promise<{ holder: ChildProcess; postmaster: number }> {
  const fixture = new URL('./fixtures/hold-postgres.ts', import.meta.url).pathname;
  const holder = spawn(process.execPath, ['--conditions=source', '--import', 'tsx', fixture, dataDir], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const postmaster = await new Promise<number>((resolve, reject) => {
    let out = '';
    holder.stdout!.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      const line = out.split('\n').find((l) => l.startsWith('{'));
      if (line) resolve((JSON.parse(line) as { pid: number }).pid);
    });
    holder.once('exit', (code) => reject(new Error(`fixture exited with ${code}`)));
  });
  return { holder, postmaster };
}

function alive(pid: number): boolean {
  return processesMentioning('').includes(pid);
}

describe('when the process that started a server dies without cleaning up', () => {
  it('the watchdog stops the server within seconds (no orphan after SIGKILL of the parent)', async () => {
    const dir = tempDataDir('crash-test');
    dirs.push(dir);
    const { holder, postmaster } = await holdPostgres(dir);
    expect(alive(postmaster)).toBe(true);
    holder.kill('SIGKILL');
    expect(await waitFor(() => !alive(postmaster), 15_000)).toBe(true);
    expect(processesMentioning(dir)).toEqual([]);
  });

  it('the next start in the same folder stops a survivor of the crashed run and takes over', async () => {
    const dir = tempDataDir('crash-test');
    dirs.push(dir);
    const { holder, postmaster } = await holdPostgres(dir);
    // Kill the holder's watchdog first, so the server survives its parent, as after a hard crash
    // of a machine-wide kill that also hit the watchdog.
    for (const pid of processesMentioning(`devstack-watchdog ${holder.pid} ${postmaster}`)) {
      process.kill(pid, 'SIGKILL');
    }
    holder.kill('SIGKILL');
    await new Promise((r) => setTimeout(r, 1500));
    expect(alive(postmaster)).toBe(true);

    const next = await startPostgres({ dataDir: dir });
    try {
      expect(alive(postmaster)).toBe(false);
      expect(next.pid()).not.toBe(postmaster);
    } finally {
      await next.stop();
    }
    expect(processesMentioning(dir)).toEqual([]);
  });
});
