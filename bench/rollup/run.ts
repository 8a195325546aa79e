/**
 * rollup-refresh cost against the size of the store: on a store of `small` and of `large` rows
 * (generated with SQL, spread over the hours from the start of last month to two hours ago), 10,000
 * new events are inserted in two fresh hours and the real job (`observatory-jobs rollup-refresh`,
 * through `createJobsService`) refreshes the rollup; three rounds each, the median is compared.
 * The incremental refresh must stay within 2x between the two sizes. Writes its section of
 * bench/results/latest.md.
 *
 *   node --conditions=source --import tsx bench/rollup/run.ts
 *   # BENCH_ROLLUP_SIZES=100000,5000000 (default), BENCH_ROLLUP_NEW=10000
 */
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { createDatabase, startPostgres, tempDataDir } from '@event-observatory/devstack';
import { createJobsService, readJobsConfig } from '@event-observatory/jobs';
import { createLogger } from '@event-observatory/service-kit';
import { createWritePool, migrate } from '@event-observatory/store';
import { benchRun } from '../lib/report.js';

const SIZES = (process.env.BENCH_ROLLUP_SIZES ?? '100000,5000000').split(',').map(Number);
const NEW_EVENTS = Number(process.env.BENCH_ROLLUP_NEW ?? 10_000);
const ROUNDS = 3;
const run = benchRun('rollup');

interface Figures {
  size: number;
  loadSeconds: number;
  initialSeconds: number;
  rounds: number[];
  median: number;
  hours: number;
}

const dir = tempDataDir('bench-rollup-');
const pgHandle = await startPostgres({ dataDir: join(dir, 'pg') });
const logger = createLogger({ service: 'bench', level: 'warn' });
const results: Figures[] = [];
try {
  for (const size of SIZES) results.push(await measure(size));
} finally {
  await pgHandle.stop();
  rmSync(dir, { recursive: true, force: true });
}
report(results);

async function measure(size: number): Promise<Figures> {
  const url = await createDatabase(pgHandle.url, `bench_rollup_${size}`);
  await migrate({ url });
  // Loads, COPY and VACUUM of millions of rows: beyond the write pool's 30 s statement timeout.
  const pool = createWritePool({ url, statementTimeoutMs: 3_600_000 });
  const t0 = performance.now();
  // Lean rows (the rollup reads occurred_at, type, source and severity); 12 types x 40 sources.
  for (let done = 0; done < size; done += 500_000) {
    await pool.query(
      // sql-witness: plants millions of rows in one statement to time the rollup refresh on them.
      `INSERT INTO events.cloud_event (occurred_at, ce_source, ce_id, ce_type, raw, extensions)
       SELECT lo + (hi - lo) * (g::float8 / $2), 'urn:bench:src-' || (g % 40), 'old-' || g,
              'com.example.t' || (g % 12), '{}', jsonb_build_object('severity', (ARRAY['info','warn','error'])[1 + g % 3])
         FROM generate_series($1::bigint, least($1 + 499999, $2 - 1)) AS g,
              LATERAL (SELECT date_trunc('month', now() - interval '1 month') AS lo,
                              date_trunc('hour', now()) - interval '2 hours' AS hi) AS r`,
      [done, size],
    );
  }
  await pool.query('VACUUM (ANALYZE) events.cloud_event');
  const loadSeconds = (performance.now() - t0) / 1000;
  const jobs = createJobsService({ config: readJobsConfig({}), databaseUrl: url, logger });
  const initial = await jobs.run('rollup-refresh');
  if (initial === 'disabled' || initial.outcome !== 'success')
    throw new Error(`initial refresh: ${JSON.stringify(initial)}`);
  const rounds: number[] = [];
  let hours = 0;
  for (let r = 0; r < ROUNDS; r++) {
    await pool.query(
      `INSERT INTO events.cloud_event (occurred_at, ce_source, ce_id, ce_type, raw, extensions)
       SELECT date_trunc('hour', now()) + make_interval(hours => 2 * $1::int) + interval '2 hours' * (g::float8 / $2),
              'urn:bench:src-' || (g % 40), 'new-' || $1 || '-' || g, 'com.example.t' || (g % 12), '{}',
              jsonb_build_object('severity', (ARRAY['info','warn','error'])[1 + g % 3])
         FROM generate_series(0, $2 - 1) AS g`,
      [r, NEW_EVENTS],
    );
    const run = await jobs.run('rollup-refresh');
    if (run === 'disabled' || run.outcome !== 'success') throw new Error(`refresh: ${JSON.stringify(run)}`);
    rounds.push(run.durationSeconds);
    hours = run.hoursRefreshed ?? 0;
  }
  await jobs.close();
  await pool.end();
  const median = [...rounds].sort((a, b) => a - b)[Math.floor(ROUNDS / 2)]!;
  const figures = { size, loadSeconds, initialSeconds: initial.durationSeconds, rounds, median, hours };
  console.log(JSON.stringify(figures));
  return figures;
}

function report(all: Figures[]): void {
  const first = all[0]!;
  const last = all[all.length - 1]!;
  const ratio = last.median / first.median;
  const ms = (s: number) => `${(s * 1000).toFixed(0)} ms`;
  const md = `# rollup-refresh against the size of the store (bench/rollup)

Sizes ${SIZES.join(', ')} rows, PostgreSQL from devstack (own server). Each size: a fresh database with every migration, the store generated with SQL
(lean rows spread from the start of last month to two hours ago, 12 types x 40 sources), VACUUM
ANALYZE (what autovacuum does in steady state), a first full refresh, then
${ROUNDS} rounds of ${NEW_EVENTS.toLocaleString('en')} new events in two fresh hours followed by the
job's refresh; the figure is the job's own duration (lock, horizon, recompute, record).

| store rows | load + vacuum | first (full) refresh | refresh after ${NEW_EVENTS.toLocaleString('en')} new events (rounds) | median | hours recomputed |
|---|---|---|---|---|---|
${all
  .map(
    (f) =>
      `| ${f.size.toLocaleString('en')} | ${f.loadSeconds.toFixed(0)} s | ${ms(f.initialSeconds)} | ${f.rounds.map(ms).join(', ')} | ${ms(f.median)} | ${f.hours} |`,
  )
  .join('\n')}

Ratio of the medians, ${last.size.toLocaleString('en')} / ${first.size.toLocaleString('en')} rows: **${ratio.toFixed(2)}x** (target: within 2x).
`;
  run.write(md);
}
