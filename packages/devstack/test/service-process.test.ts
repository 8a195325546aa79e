import { readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import {
  PRODUCTION_ENV,
  productionNodeArgs,
  repoRoot,
  startServiceProcess,
  tempDataDir,
} from '@event-observatory/devstack';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';

const stack = inject('stack');
let dataDir: string;

beforeAll(() => {
  dataDir = tempDataDir('service-process');
});
afterAll(() => {
  rmSync(dataDir, { recursive: true, force: true });
});

describe('startServiceProcess', () => {
  it('runs a service with the node flags of its start:prod, live on 127.0.0.1, and stops it gracefully', async () => {
    const flags = productionNodeArgs(join(repoRoot(), 'services', 'ingest'));
    expect(flags).toContain('--max-semi-space-size=16');
    const ingest = await startServiceProcess({
      name: 'ingest',
      dataDir,
      env: {
        BROKER_BOOTSTRAP_SERVERS: stack.bootstrapServers,
        AUTH_ENABLED: 'false',
        OTEL_SDK_DISABLED: 'true',
      },
    });
    const cmdline = readFileSync(`/proc/${ingest.pid()}/cmdline`, 'utf8').split('\0');
    expect(cmdline.slice(1, 1 + flags.length)).toEqual(flags);
    // The image's variables too, unless the caller's environment sets them.
    const environ = readFileSync(`/proc/${ingest.pid()}/environ`, 'utf8').split('\0');
    for (const [name, value] of Object.entries(PRODUCTION_ENV)) {
      expect(environ).toContain(`${name}=${process.env[name] ?? value}`);
    }
    expect(ingest.url).toBe(`http://127.0.0.1:${ingest.port}`);
    expect((await fetch(`${ingest.url}/health/live`)).status).toBe(200);
    // Its meters on a free port of their own, not on the main one.
    expect(ingest.metricsUrl).not.toBe(ingest.url);
    expect(await (await fetch(`${ingest.metricsUrl}/metrics`)).text()).toContain('service="ingest"');
    expect((await fetch(`${ingest.url}/metrics`)).status).toBe(404);
    await ingest.stop();
    // Its own exit code, not a signal's name: the SIGTERM ran its shutdown to the end.
    expect(await ingest.exited()).toBe(0);
    expect(ingest.pid()).toBeUndefined();
  }, 120_000);

  it("sets the variables the images' runtime stage sets, to the same values", () => {
    const dockerfile = readFileSync(join(repoRoot(), 'Dockerfile'), 'utf8');
    const runtime = /^FROM scratch AS runtime$([\s\S]*?)^FROM /m.exec(dockerfile)?.[1] ?? '';
    const env = runtime.match(/^ENV (.*)$/m)?.[1]?.split(/\s+/) ?? [];
    expect(Object.keys(PRODUCTION_ENV).length).toBeGreaterThan(0);
    for (const [name, value] of Object.entries(PRODUCTION_ENV)) expect(env).toContain(`${name}=${value}`);
  });

  it('runs two instances of one service in one folder side by side', async () => {
    const env = {
      DATABASE_URL: stack.databaseUrl,
      APPLICATION_SECRET: 'a'.repeat(32),
      SEARCH_AUTH_MODE: 'off',
      OTEL_SDK_DISABLED: 'true',
    };
    const listen = { host: 'PLAY_HTTP_ADDRESS', port: 'PLAY_HTTP_PORT' };
    const first = await startServiceProcess({ name: 'search', instance: 'search-1', dataDir, env, listen });
    const second = await startServiceProcess({ name: 'search', instance: 'search-2', dataDir, env, listen });
    // The second start did not take the first for a survivor of a crashed run.
    expect((await fetch(`${first.url}/health/live`)).status).toBe(200);
    expect((await fetch(`${second.url}/health/live`)).status).toBe(200);
    await Promise.all([first.stop(), second.stop()]);
    expect([await first.exited(), await second.exited()]).toEqual([0, 0]);
  }, 120_000);

  it('runs a process that serves nothing to its exit, with nothing inherited, each line handed over by stream and kept in its log', async () => {
    const lines: string[] = [];
    const job = await startServiceProcess({
      name: 'jobs',
      args: ['no-such-job'],
      listen: false,
      baseEnv: { PATH: process.env.PATH },
      env: {},
      dataDir,
      onLine: (line, stream) => lines.push(`${stream}: ${line}`),
    });
    expect(await job.exited()).toBe(1);
    const usage = 'Error: usage: observatory-jobs partition-maintenance | rollup-refresh (got "no-such-job")';
    expect(lines).toEqual([`stderr: ${usage}`]);
    expect(readFileSync(job.logFile, 'utf8')).toContain(usage);
  }, 60_000);
});
