/**
 * The search as a process, with the Node flags of its `start:prod` (what the image's `/app/start`
 * runs): its young generation stays within the semi-space cap however much memory the host has
 * (README, "Node flags").
 */
import { readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import {
  productionNodeArgs,
  repoRoot,
  type ServiceProcess,
  startServiceProcess,
  tempDataDir,
} from '@event-observatory/devstack';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Harness, SEEDED, startHarness } from './harness.js';

const dataDir = tempDataDir('search-process-memory');
let h: Harness;
let search: ServiceProcess;

beforeAll(async () => {
  // The harness's database, seeded; its in-process service is not used.
  h = await startHarness('young', { seed: SEEDED });
  search = await startServiceProcess({
    name: 'search',
    dataDir,
    env: {
      DATABASE_URL: h.databaseUrl,
      SEARCH_AUTH_MODE: 'off',
      APPLICATION_SECRET: 'process-test-application-secret-0123456789',
      OTEL_SDK_DISABLED: 'true',
      LOG_LEVEL: 'warn',
    },
    listen: { host: 'PLAY_HTTP_ADDRESS', port: 'PLAY_HTTP_PORT' },
  });
}, 120_000);

afterAll(async () => {
  await search?.stop();
  await h?.close();
  rmSync(dataDir, { recursive: true, force: true });
});

describe('the young generation of a running search', () => {
  it('runs with the semi-space cap of its start:prod and keeps the young generation within it', async () => {
    const flags = productionNodeArgs(join(repoRoot(), 'services', 'search'));
    expect(flags).toContain('--max-semi-space-size=16');
    const cmdline = readFileSync(`/proc/${search.pid()}/cmdline`, 'utf8').split('\0');
    expect(cmdline.slice(1, 1 + flags.length)).toEqual(flags);
    // Exports of 10,000 events and full pages: enough garbage for the young generation to grow to
    // its bound (without the flag V8 sizes it from the host's memory: two 64 MiB semi-spaces on a
    // 24 GiB machine).
    for (let round = 0; round < 8; round++) {
      for (const path of ['/events.ndjson?range=all', '/events.csv?range=all', '/events?range=all&q=alpha']) {
        const res = await fetch(`${search.url}${path}`);
        await res.arrayBuffer();
        expect(res.status).toBe(200);
      }
    }
    const metrics = await (await fetch(`${search.metricsUrl}/metrics`)).text();
    const young = /^nodejs_heap_space_size_total_bytes\{[^}]*space="new"[^}]*\} (\S+)$/m.exec(metrics);
    // Two semi-spaces of 16 MiB.
    expect(Number(young?.[1])).toBeGreaterThan(0);
    expect(Number(young?.[1])).toBeLessThanOrEqual(2 * 16 * 1024 * 1024);
  }, 120_000);
});
