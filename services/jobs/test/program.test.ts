import { rmSync } from 'node:fs';
import { runServiceProcess, tempDataDir } from '@event-observatory/devstack';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Harness, startHarness } from './harness.js';

let h: Harness;

beforeAll(async () => {
  h = await startHarness('program');
});

afterAll(async () => {
  await h?.close();
});

/** `observatory-jobs <args>` as its CronJob runs it (devstack's `runServiceProcess`). */
async function program(args: string[], env: Record<string, string>) {
  const dataDir = tempDataDir('jobs-program');
  const run = await runServiceProcess({ name: 'jobs', args, env, dataDir }, 60_000);
  rmSync(dataDir, { recursive: true, force: true });
  return run;
}

async function runs(): Promise<number> {
  // sql-witness: counts the recorded runs in its own SQL, independently of the job under test.
  const { rows } = await h.db.query('SELECT count(*)::int AS n FROM events.maintenance_run');
  return rows[0].n;
}

describe('observatory-jobs, the program a CronJob runs', () => {
  it('runs the named job once, logs one JSON line with its outcome and exits 0', async () => {
    const { code, stdout } = await program(['partition-maintenance'], { DATABASE_URL: h.databaseUrl });
    expect(code).toBe(0);
    const line = JSON.parse(stdout.trim().split('\n').at(-1)!);
    expect(line).toMatchObject({ job: 'partition-maintenance', outcome: 'success', service: 'jobs' });
    expect(await runs()).toBe(1);
  });

  it('exits 0 and records nothing when MAINTENANCE_ENABLED=false', async () => {
    const { code } = await program(['rollup-refresh'], {
      DATABASE_URL: h.databaseUrl,
      MAINTENANCE_ENABLED: 'false',
    });
    expect(code).toBe(0);
    expect(await runs()).toBe(1);
  });

  it('exits 1 when the run fails (database unreachable)', async () => {
    const { code, stdout } = await program(['rollup-refresh'], {
      DATABASE_URL: 'postgres://observatory:x@127.0.0.1:1/observatory',
    });
    expect(code).toBe(1);
    expect(stdout).toContain('"outcome":"failure"');
  });

  it('exits 1 with the usage on stderr for an unknown job', async () => {
    const { code, stderr } = await program(['vacuum-everything'], { DATABASE_URL: h.databaseUrl });
    expect(code).toBe(1);
    expect(stderr).toContain('usage: observatory-jobs partition-maintenance | rollup-refresh');
  });
});
