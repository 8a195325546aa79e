/**
 * schemathesis (PyPI, pinned by scripts/install/schemathesis.sh) against the running ingestion
 * service's own `/openapi.json`, with a valid token and every check, in a bounded form (a fixed
 * number of examples per operation, a time budget, a fixed seed): no 5xx other than the
 * documented 503, every response matching the document, and the API answering what the document
 * says it accepts.
 */
import { execFile, spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { withTimeout } from '@event-observatory/service-kit/resilience';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createPipelineTopics, type StartedIngest, startIngest } from '../../support/services.js';

const installer = fileURLToPath(new URL('../../../scripts/install/schemathesis.sh', import.meta.url));
/** Moves generated `ce-time` values into the plausibility window (JSON Schema cannot say "now"). */
const hooks = fileURLToPath(new URL('./schemathesis_hooks.py', import.meta.url));
/** Bounds of the run in `make test`: examples per operation and the whole run's time budget. */
const MAX_EXAMPLES = Number(process.env.SCHEMATHESIS_MAX_EXAMPLES ?? 40);
const MAX_SECONDS = Number(process.env.SCHEMATHESIS_MAX_TIME ?? 90);
const SEED = process.env.SCHEMATHESIS_SEED ?? '16';

let ingest: StartedIngest;
let st: string;
let reports: string;

beforeAll(async () => {
  ({ stdout: st } = await promisify(execFile)(installer, { timeout: 600_000 }));
  st = st.trim();
  const topic = `security-schemathesis-${randomUUID().slice(0, 8)}`;
  await createPipelineTopics(topic);
  ingest = await startIngest({ topic, secret: `schemathesis-${randomUUID()}-${randomUUID()}` });
  reports = mkdtempSync(join(tmpdir(), 'schemathesis-'));
}, 600_000);

afterAll(async () => {
  await ingest?.close();
  if (reports) rmSync(reports, { recursive: true, force: true });
});

/** Runs `st` to its end and returns its exit status and what it printed. */
async function schemathesis(args: string[]): Promise<{ code: number | null; output: string }> {
  const child = spawn(st, args, {
    env: {
      PATH: process.env.PATH ?? '',
      HOME: process.env.HOME ?? '',
      NO_COLOR: '1',
      SCHEMATHESIS_HOOKS: hooks,
      // No __pycache__ beside the hooks file in the tree.
      PYTHONDONTWRITEBYTECODE: '1',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
    // st keeps a `.schemathesis/` cache in its working directory: the run's own temporary one.
    cwd: reports,
  });
  let output = '';
  child.stdout.setEncoding('utf8').on('data', (d: string) => {
    output += d;
  });
  child.stderr.setEncoding('utf8').on('data', (d: string) => {
    output += d;
  });
  const code = await withTimeout(
    new Promise<number | null>((resolve) => child.once('exit', resolve)),
    (MAX_SECONDS + 120) * 1000,
    'schemathesis run',
  ).finally(() => child.kill('SIGKILL'));
  return { code, output };
}

it(
  'finds no server error and no response outside the document in any ingestion operation',
  async () => {
    const junit = join(reports, 'junit.xml');
    const { code, output } = await schemathesis([
      'run',
      `${ingest.url}/openapi.json`,
      '--checks',
      'all',
      '--header',
      `Authorization: Bearer ${ingest.token}`,
      '--max-examples',
      String(MAX_EXAMPLES),
      '--max-time',
      String(MAX_SECONDS),
      '--seed',
      SEED,
      '--workers',
      '2',
      '--request-timeout',
      '15',
      '--report',
      'junit',
      '--report-junit-path',
      junit,
    ]);
    console.log(output.split('\n').slice(-40).join('\n'));
    expect(code, output).toBe(0);
    // A run that tested nothing would pass too: every operation of the document must have run.
    const cases = readFileSync(junit, 'utf8').match(/<testcase /g) ?? [];
    expect(cases.length).toBeGreaterThanOrEqual(3);
  },
  (MAX_SECONDS + 300) * 1000,
);
