/**
 * Search latency benchmark: p50/p95 of each of the 16 filter shapes on a store of
 * BENCH_EVENTS events (default 5,000,000) spread over 6 months, through the search service's
 * read path. Two figures per shape: the page query alone (what `search_query_duration_seconds`
 * times) and the whole page (`GET /events` in-process: rows, facets and histogram read
 * concurrently, the capped total from the facets' count, then rendered); then the facet query and the histogram query alone per shape.
 * Shapes without `time` search all time (`range=all`); the row `default range` is a URL without
 * any parameter (the last 24 hours).
 *
 *   node --conditions=source --import tsx bench/search/run.ts      # BENCH_EVENTS=5000000 BENCH_RUNS=60
 *
 * BENCH_SHAPES (comma-separated names, e.g. `text,text+attrs,subject (exact)`) measures only those
 * rows of the report, for quick repeats of a few shapes; `autocomplete` names the query bar's
 * autocomplete (`GET /suggest` as the reader role, both viewers), timed after the reference query.
 *
 * Starts its own PostgreSQL (devstack) on a store kept between runs: by default in the ignored
 * `.cache/bench-search/<BENCH_EVENTS>-<key>` of the repository (not $OBSERVATORY_CACHE: under a
 * home folder of mode 700 the postgres user of a root run cannot reach it), the key a hash of the
 * migrations and the seed's SQL, so a second run measures the same store without loading and a
 * schema change loads a new one (the stale store of that size is deleted). BENCH_DATA_DIR names
 * another folder (the migrations it lacks are applied on reuse). A store is reused only when its
 * load finished (`bench-store.json`). Rows come from `seedEvents` (SQL generate_series); the
 * secondary indexes are dropped for the load and created again from their own definitions
 * afterwards (same indexes as the migrations, built in bulk), then the tables are analysed.
 * Also times a reference query that no search change touches (raw SQL: the newest 51 rows of one
 * hour, a different hour each run), so runs at different machine loads can be compared by ratio.
 * The main figures are the search logged in as the superuser (no row-level security, as every
 * earlier run); each shape's page is then timed again by a second service logged in as the reader
 * role, for a viewer who sees everything and one who sees `FEW_SOURCES` of the 50 seed sources
 * (services/search README, Visibility).
 * Writes its section of bench/results/latest.md.
 *
 * BENCH_STORE=skewed loads the skewed store of skewed-store.ts instead (thousands of Zipf-like
 * sources and type-source pairs, bursts, ~500,000 subjects, nested payloads; cached apart as
 * `.cache/bench-search/skewed-<BENCH_EVENTS>-<key>`), measures the shapes of skewed-run.ts and
 * writes bench/results/search-skewed.md.
 */
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { totalmem } from 'node:os';
import { join } from 'node:path';
import {
  createDatabase,
  createDatabaseRoles,
  repoRoot,
  rollupFromEvents,
  SEED_WORDS,
  seedEvents,
  startPostgres,
} from '@event-observatory/devstack';
import {
  type Authenticator,
  bucketFor,
  createSearchService,
  parseSearch,
  parseVisibility,
  SHAPES,
} from '@event-observatory/search';
import { createMetrics } from '@event-observatory/service-kit/metrics';
import {
  DEFAULT_MIGRATIONS_DIR,
  facetEvents,
  histogramEvents,
  migrate,
  oldestEventTime,
  readMigrations,
  searchStatement,
} from '@event-observatory/store';
import pg from 'pg';
import { benchNumber, benchRun } from '../lib/report.js';
import { benchSkewed, skewedReport } from './skewed-run.js';
import { seedSkewed } from './skewed-store.js';

const EVENTS = benchNumber('EVENTS', 5_000_000);
/**
 * Runs per shape: the p95 of 60 is their fourth slowest, of 30 the second. Half of a text shape's
 * runs are a rare word, so at 30 its p95 was the second slowest of 15 common-word pages, and moved
 * by tens of milliseconds from one run of the bench to the next.
 */
const RUNS = benchNumber('RUNS', 60);
const SPAN_MS = 182 * 86_400_000;
const SECRET = 'bench-search-secret-0123456789abcdef';
const run = benchRun('search');
/** Only these shapes (16 shapes and the unindexed filters, by name) when set. */
const ONLY = process.env.BENCH_SHAPES ? new Set(process.env.BENCH_SHAPES.split(',')) : undefined;
/** MIGRATIONS_DIR: a copy of migrations/ (to measure before a migration); default the repository's. */
const MIGRATIONS = process.env.MIGRATIONS_DIR ? { dir: process.env.MIGRATIONS_DIR } : {};
const chosen = (name: string) => ONLY === undefined || ONLY.has(name);
/** BENCH_STORE: `uniform` (seedEvents, the default) or `skewed` (skewed-store.ts). */
const STORE = process.env.BENCH_STORE ?? 'uniform';
if (STORE !== 'uniform' && STORE !== 'skewed')
  throw new Error(`BENCH_STORE must be uniform or skewed, got ${JSON.stringify(STORE)}`);
const SKEWED = STORE === 'skewed';

const log = (line: string) => process.stdout.write(`[bench] ${line}\n`);

/** Sources of the restricted viewer: 5 of the seed's 50 (`urn:seed:source-<n % 50>`), a tenth of the rows. */
const FEW_SOURCES = [0, 1, 2, 3, 4].map((n) => `urn:seed:source-${n}`);
const VIEWER_RULES = JSON.stringify([
  { users: ['all'], see: { all: true } },
  { users: ['few'], see: { sources: FEW_SOURCES } },
]);
/** Query-bar lines the autocomplete bench rotates through: field names, values, catalog prefixes. */
const AUTOCOMPLETE_LINES = [
  'ty',
  'severity>=er',
  'type:com.example.t1',
  'source:urn:seed:source-1',
  'overflow type:com.',
  'source:urn:seed:',
  'level:w',
  'type:com.example.',
];
/** The viewer named by the request's `x-bench-viewer` header (`all` or `few`). */
const benchViewer: Authenticator = async (c, next) => {
  const subject = c.req.header('x-bench-viewer') ?? '';
  c.set('viewer', { subject, display: subject, groups: [], via: 'proxy' });
  await next();
};

/** The filter parameters of one shape's i-th run; values rotate so runs do not repeat one query. */
function paramsFor(shape: string, i: number, end: Date): URLSearchParams {
  const p = new URLSearchParams();
  const parts = new Set(shape.split('+'));
  if (parts.has('time')) {
    // A 6-hour window somewhere in the six months.
    const start = new Date(end.getTime() - ((i * 5 + 1) % 180) * 86_400_000 - 6 * 3_600_000);
    p.set('from', start.toISOString());
    p.set('to', new Date(start.getTime() + 6 * 3_600_000).toISOString());
  } else p.set('range', 'all');
  if (parts.has('text')) p.set('q', i % 2 === 0 ? 'overflow' : SEED_WORDS[i % SEED_WORDS.length]!);
  if (parts.has('payload')) p.set('payload', `device.id = dev-${(i * 37) % 5000}`);
  if (parts.has('attrs')) p.set('type', `com.example.t${i % 20}`);
  return p;
}

/** Shapes of no index path, measured apart: payload comparison, subject, severity below error. */
const UNINDEXED: Record<string, (i: number) => URLSearchParams> = {
  'payload comparison (temperature >= 99)': () =>
    new URLSearchParams({ payload: 'temperature >= 99', range: 'all' }),
  'subject (exact)': (i) => new URLSearchParams({ subject: `subject-${i % 1000}`, range: 'all' }),
  'severity >= warning': () => new URLSearchParams({ severity: 'warning', range: 'all' }),
  'severity >= error (partial index)': () => new URLSearchParams({ severity: 'error', range: 'all' }),
};

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
}

interface Figures {
  p50: number;
  p95: number;
  failed: number;
}

async function measure(run: (i: number) => Promise<boolean>): Promise<Figures> {
  return (await measureAlternating([run]))[0]!;
}

/**
 * Each run's figures, the runs taken in turn (run i of each before run i + 1 of any, the first of
 * them rotating), so a burst of load on the machine falls on all of them alike and their ratios
 * compare like with like.
 */
async function measureAlternating(runs: ((i: number) => Promise<boolean>)[]): Promise<Figures[]> {
  for (const run of runs) for (let i = 0; i < 3; i++) await run(1000 + i);
  const times = runs.map((): number[] => []);
  const failed = runs.map(() => 0);
  for (let i = 0; i < RUNS; i++) {
    for (let k = 0; k < runs.length; k++) {
      const j = (i + k) % runs.length;
      const t = performance.now();
      if (!(await runs[j]!(i))) failed[j]!++;
      times[j]!.push(performance.now() - t);
    }
  }
  return times.map((t, j) => {
    t.sort((a, b) => a - b);
    return { p50: percentile(t, 50), p95: percentile(t, 95), failed: failed[j]! };
  });
}

async function load(url: string): Promise<{ loadS: number; indexS: number }> {
  const db = new pg.Pool({ connectionString: url, max: 2 });
  db.on('error', () => {});
  const { rows: defs } = await db.query<{ indexname: string; indexdef: string }>(
    // sql-witness: drops indexes, tunes the session and reads plans to measure the store's search queries.
    `SELECT indexname, indexdef FROM pg_indexes
      WHERE schemaname = 'events' AND tablename = 'cloud_event' AND indexname <> 'cloud_event_identity'`,
  );
  for (const d of defs) await db.query(`DROP INDEX events.${d.indexname}`);
  let t = performance.now();
  let done = 0;
  const chunk = 250_000;
  while (done < EVENTS) {
    const count = Math.min(chunk, EVENTS - done);
    // Each call writes rows 1..count of its own span slice, under its own id prefix.
    const sliceEnd = new Date(END.getTime() - (done / EVENTS) * SPAN_MS);
    if (SKEWED)
      await seedSkewed(db, {
        total: EVENTS,
        first: done + 1,
        last: done + count,
        end: END,
        spanMs: SPAN_MS,
        idPrefix: 'k',
      });
    else
      await seedEvents(db, {
        count,
        spanMs: (count / EVENTS) * SPAN_MS,
        end: sliceEnd,
        idPrefix: `b${done}`,
      });
    done += count;
    log(`loaded ${done.toLocaleString('en-US')} rows (${Math.round((performance.now() - t) / 1000)} s)`);
  }
  const loadS = (performance.now() - t) / 1000;
  t = performance.now();
  const c = await db.connect();
  await c.query(`SET maintenance_work_mem = '512MB'`);
  // pg_indexes prints a partitioned table's index as ON ONLY; without ONLY every partition gets it.
  for (const d of defs) {
    await c.query(d.indexdef.replace(' ON ONLY ', ' ON '));
    log(`index ${d.indexname} built`);
  }
  await c.query('VACUUM ANALYZE events.cloud_event');
  c.release();
  await rollupFromEvents(db);
  await db.end();
  return { loadS, indexS: (performance.now() - t) / 1000 };
}

const END = new Date(Math.floor(Date.now() / 3_600_000) * 3_600_000);

interface Pruning {
  /** Partitions the plan names. */
  planned: number;
  /** Partitions of events.cloud_event (the catch-all included). */
  partitions: number;
}

/** How many partitions the plan of a search page's row statement names (EXPLAIN, nothing read). */
async function partitionsPlanned(url: string, params: URLSearchParams): Promise<Pruning> {
  const db = new pg.Client({ connectionString: url });
  await db.connect();
  try {
    const { rows: parts } = await db.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM pg_inherits WHERE inhparent = 'events.cloud_event'::regclass`,
    );
    const { text, values } = searchStatement(parseSearch(params).filter, { limit: 50 });
    const { rows } = await db.query(`EXPLAIN (FORMAT JSON) ${text}`, values);
    const named = JSON.stringify(rows[0]['QUERY PLAN']).matchAll(/"Relation Name":"([^"]+)"/g);
    return { planned: new Set([...named].map((m) => m[1])).size, partitions: parts[0]!.n };
  } finally {
    await db.end();
  }
}

/**
 * The default range (last 24 h) of an unfiltered search must plan one or two partitions, not
 * every one; `range=all` must plan every one, or this check could not fail. Throws otherwise.
 */
async function checkPruning(url: string): Promise<{ defaultRange: Pruning; all: Pruning }> {
  const defaultRange = await partitionsPlanned(url, new URLSearchParams());
  const all = await partitionsPlanned(url, new URLSearchParams({ range: 'all' }));
  if (all.planned !== all.partitions)
    throw new Error(
      `bench/search: range=all plans ${all.planned} of ${all.partitions} partitions; the EXPLAIN check cannot see pruning`,
    );
  if (defaultRange.planned < 1 || defaultRange.planned > 2)
    throw new Error(
      `bench/search: an unfiltered search with the default range plans ${defaultRange.planned} of ${defaultRange.partitions} partitions (at most 2): partition pruning is lost`,
    );
  return { defaultRange, all };
}

/** The store's folder: BENCH_DATA_DIR, else the cache folder of this size and schema. */
async function storeDir(): Promise<string> {
  if (process.env.BENCH_DATA_DIR) return process.env.BENCH_DATA_DIR;
  const hash = createHash('sha256').update(`${EVENTS} ${SPAN_MS}\n`);
  for (const m of await readMigrations(MIGRATIONS.dir ?? DEFAULT_MIGRATIONS_DIR))
    hash.update(`${m.name} ${m.checksum}\n`);
  hash.update(
    readFileSync(
      join(repoRoot(), SKEWED ? 'bench/search/skewed-store.ts' : 'packages/devstack/src/seed-events.ts'),
    ),
  );
  const root = join(repoRoot(), '.cache/bench-search');
  const kind = SKEWED ? 'skewed-' : '';
  const name = `${kind}${EVENTS}-${hash.digest('hex').slice(0, 16)}`;
  // A store of this kind and size under another schema is stale; several GB each, so it goes (unless running).
  for (const old of existsSync(root) ? readdirSync(root) : []) {
    if (old === name || !old.startsWith(`${kind}${EVENTS}-`)) continue;
    if (existsSync(join(root, old, 'pgdata/postmaster.pid')))
      log(`kept ${old}: its PostgreSQL may be running`);
    else rmSync(join(root, old), { recursive: true, force: true });
  }
  return join(root, name);
}

/**
 * Reads the event store into shared buffers, as a store in steady use holds it, oldest month first
 * so that what does not fit is the oldest (pg_prewarm). Each shape's warm-up runs alone would warm
 * only their own parameter values, so a viewer's first reads of the others would be measured.
 */
async function prewarm(url: string): Promise<void> {
  const db = new pg.Client({ connectionString: url });
  await db.connect();
  try {
    await db.query('CREATE EXTENSION IF NOT EXISTS pg_prewarm');
    const t = performance.now();
    const { rows } = await db.query<{ blocks: string }>(
      `SELECT sum(pg_prewarm(c.oid, 'buffer')) AS blocks FROM (
         SELECT c.oid FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
          WHERE n.nspname = 'events' AND c.relkind IN ('r', 'i') ORDER BY c.relname) AS c`,
    );
    const gib = (Number(rows[0]!.blocks) * 8192) / 2 ** 30;
    log(`prewarmed ${gib.toFixed(1)} GiB of the store in ${Math.round((performance.now() - t) / 1000)} s`);
  } finally {
    await db.end();
  }
}

/** Written once a load has finished (rows, indexes, statistics, rollup): only then is a store reused. */
const MARKER = 'bench-store.json';
const complete = (dir: string) =>
  existsSync(join(dir, MARKER)) && JSON.parse(readFileSync(join(dir, MARKER), 'utf8')).events === EVENTS;

const dataDir = await storeDir();
const reuse = complete(dataDir);
// An unfinished or other-sized store is started over from an empty cluster.
if (!reuse) rmSync(join(dataDir, 'pgdata'), { recursive: true, force: true });
/**
 * The server's memory as a store's in production, not the defaults' 128 MB: shared_buffers a
 * quarter of this machine's memory (PostgreSQL's own starting advice), effective_cache_size three
 * quarters. With 128 MB, a page reads its heap pages from the operating system's cache at every
 * turn, and a viewer of a few sources, whose matches lie one a page where everyone's lie several a
 * page, pays that copy ten times over.
 */
const MB = 2 ** 20;
/** This machine's memory, or the container's limit when lower (0 when there is none). */
const MEMORY = Math.min(totalmem(), process.constrainedMemory() || Number.POSITIVE_INFINITY);
const SERVER_MEMORY = {
  shared_buffers: `${Math.floor(MEMORY / 4 / MB)}MB`,
  effective_cache_size: `${Math.floor((MEMORY * 3) / 4 / MB)}MB`,
};
const pgh = await startPostgres({ dataDir, settings: SERVER_MEMORY });
try {
  const url = await createDatabase(pgh.url, 'bench_search');
  let times = { loadS: Number.NaN, indexS: Number.NaN };
  if (reuse) {
    log(`reusing the ${EVENTS.toLocaleString('en-US')} events of ${dataDir}`);
    // A BENCH_DATA_DIR store gets the migrations written since it was loaded (indexes, statistics).
    const t = performance.now();
    const { applied } = await migrate({ url, ...MIGRATIONS });
    if (applied.length > 0)
      log(`applied ${applied.join(', ')} in ${Math.round((performance.now() - t) / 1000)} s`);
  } else {
    await migrate({ url, ...MIGRATIONS });
    log(`loading ${EVENTS.toLocaleString('en-US')} ${STORE} events over 182 days into ${dataDir}`);
    times = await load(url);
    writeFileSync(join(dataDir, MARKER), `${JSON.stringify({ events: EVENTS, loadedAt: new Date() })}\n`);
  }
  const { loadS, indexS } = times;
  await prewarm(url);
  const pruning = await checkPruning(url);
  log(
    `EXPLAIN: the default range plans ${pruning.defaultRange.planned} of ${pruning.defaultRange.partitions} partitions, range=all ${pruning.all.planned}`,
  );
  const { registry } = createMetrics({ service: 'search', version: 'bench' });
  const service = createSearchService({
    config: { allowedHosts: ['localhost'], secret: SECRET },
    databaseUrl: url,
    registry,
  });
  const answer = (app: typeof service.app) => async (params: URLSearchParams) => {
    const res = await app.request(`/events?${params}`, { headers: { host: 'localhost' } });
    return { status: res.status, body: await res.text() };
  };
  const page = async (params: URLSearchParams) => (await answer(service.app)(params)).status === 200;
  // The same pages under row-level security: search as the reader role, two viewers.
  const roles = await createDatabaseRoles(pgh.url, 'bench_search');
  await migrate({
    url: roles.owner.url,
    writerRole: roles.writer.name,
    readerRole: roles.reader.name,
    ...MIGRATIONS,
  });
  const scoped = createSearchService({
    config: { allowedHosts: ['localhost'], secret: SECRET },
    databaseUrl: roles.reader.url,
    registry: createMetrics({ service: 'search', version: 'bench-reader' }).registry,
    authenticate: benchViewer,
    visibility: parseVisibility(VIEWER_RULES, 'bench viewers'),
  });
  const viewerPage = (viewer: 'all' | 'few') => async (params: URLSearchParams) => {
    const res = await scoped.app.request(`/events?${params}`, {
      headers: { host: 'localhost', 'x-bench-viewer': viewer },
    });
    await res.text();
    return res.status === 200;
  };
  const oldest = (await oldestEventTime(service.pool)) ?? END;
  // The page's facet and histogram queries alone (a timeout counts as failed).
  const facets = (params: URLSearchParams) =>
    facetEvents(service.pool, parseSearch(params).filter).then(
      () => true,
      () => false,
    );
  /** How the measured histograms were answered (`rollup`, `table`, `sample N %`), per shape. */
  let sources = new Set<string>();
  const histogram = (params: URLSearchParams) => {
    const parsed = parseSearch(params);
    const to = parsed.filter.to ?? parsed.now;
    const from = parsed.filter.from ?? oldest;
    return histogramEvents(service.pool, parsed.filter, {
      from,
      to,
      bucketMs: bucketFor(to.getTime() - from.getTime()),
    }).then(
      (h) => {
        sources.add(h.source === 'sample' ? `sample ${h.samplePercent} %` : h.source);
        return true;
      },
      () => false,
    );
  };
  if (SKEWED) {
    const explainUrl = new URL(url);
    // Slow statements of these connections log their plans (analysed, with buffers) to postgres.log.
    explainUrl.searchParams.set(
      'options',
      '-c session_preload_libraries=auto_explain -c auto_explain.log_min_duration=250 -c auto_explain.log_analyze=on -c auto_explain.log_buffers=on',
    );
    const explainedPage = () => {
      const explained = createSearchService({
        config: { allowedHosts: ['localhost'], secret: SECRET },
        databaseUrl: explainUrl.toString(),
        registry: createMetrics({ service: 'search', version: 'bench-explain' }).registry,
      });
      return { answer: answer(explained.app), close: () => explained.close() };
    };
    const histogramSources = () => {
      const from = [...sources].sort().join(', ');
      sources = new Set();
      return from;
    };
    const result = await benchSkewed({
      url,
      runs: RUNS,
      measure,
      answer: answer(service.app),
      explainedPage,
      facets,
      histogram,
      histogramSources,
      chosen,
    });
    await service.close();
    await scoped.close();
    run.write(skewedReport({ events: EVENTS, runs: RUNS, loadS, indexS, dataDir, ...result }), {
      // BENCH_REPORT: another file, e.g. for a smoke run.
      file: process.env.BENCH_REPORT ?? 'bench/results/search-skewed.md',
    });
  } else {
    const refPool = new pg.Pool({ connectionString: url, max: 1 });
    const reference = await measure(async (i) => {
      const from = new Date(END.getTime() - ((i * 7 + 3) % 4000) * 3_600_000);
      const res = await refPool.query(
        `SELECT occurred_at, ce_type FROM events.cloud_event
          WHERE occurred_at >= $1 AND occurred_at < $1::timestamptz + interval '1 hour'
          ORDER BY occurred_at DESC LIMIT 51`,
        [from],
      );
      return res.rowCount === 51;
    });
    await refPool.end();
    log(`reference: p50 ${reference.p50.toFixed(1)} ms, p95 ${reference.p95.toFixed(1)} ms`);
    // The query bar's autocomplete (`GET /suggest`) as the reader role: names from the catalog under the scope.
    const suggestRows: string[] = [];
    for (const viewer of ['all', 'few'] as const) {
      const name = `autocomplete (${viewer})`;
      if (!chosen(name) && !chosen('autocomplete')) continue;
      const suggestions = await measure(async (i) => {
        const line = AUTOCOMPLETE_LINES[i % AUTOCOMPLETE_LINES.length]!;
        const res = await scoped.app.request(`/suggest?bar=${encodeURIComponent(line)}`, {
          headers: { host: 'localhost', 'x-bench-viewer': viewer },
        });
        await res.text();
        return res.status === 200;
      });
      const ratio = (suggestions.p95 / reference.p95).toFixed(1);
      suggestRows.push(
        `| ${viewer} | ${suggestions.p50.toFixed(1)} | ${suggestions.p95.toFixed(1)} | ${suggestions.failed} | ${ratio} |`,
      );
      log(
        `${name}: p50 ${suggestions.p50.toFixed(1)} ms, p95 ${suggestions.p95.toFixed(1)} ms, failed ${suggestions.failed}`,
      );
    }
    const rows: string[] = [];
    const viewerRows: string[] = [];
    const shapes: [string, (i: number) => URLSearchParams][] = [
      ...SHAPES.map((shape): [string, (i: number) => URLSearchParams] => [
        shape,
        (i) => paramsFor(shape, i, END),
      ]),
      ['default range (last 24 h)', () => new URLSearchParams()],
    ];
    for (const [shape, params] of shapes.filter(([name]) => chosen(name))) {
      const [whole, all, few] = (await measureAlternating([
        (i) => page(params(i)),
        (i) => viewerPage('all')(params(i)),
        (i) => viewerPage('few')(params(i)),
      ])) as [Figures, Figures, Figures];
      const facet = await measure((i) => facets(params(i)));
      sources = new Set();
      const hist = await measure((i) => histogram(params(i)));
      const cells = [whole, facet, hist].map(
        (f) => `${f.p50.toFixed(1)} | ${f.p95.toFixed(1)} | ${f.failed}`,
      );
      const ratios = [whole, facet, hist].map((f) => (f.p95 / reference.p95).toFixed(0)).join(' / ');
      rows.push(`| ${shape} | ${cells.join(' | ')} | ${[...sources].sort().join(', ')} | ${ratios} |`);
      log(`${shape}: page / facets / histogram p50 | p95 | failed: ${cells.join(' ; ')}`);
      const viewerCells = [whole, all, few].map(
        (f) => `${f.p50.toFixed(1)} | ${f.p95.toFixed(1)} | ${f.failed}`,
      );
      const viewerRatios = `${(all.p95 / whole.p95).toFixed(2)} | ${(few.p95 / all.p95).toFixed(2)}`;
      viewerRows.push(`| ${shape} | ${viewerCells.join(' | ')} | ${viewerRatios} |`);
      log(`${shape}: page as superuser / reader, all / reader, few: ${viewerCells.join(' ; ')}`);
    }
    const unindexed: string[] = [];
    for (const [name, params] of Object.entries(UNINDEXED).filter(([name]) => chosen(name))) {
      const whole = await measure((i) => page(params(i)));
      unindexed.push(`| ${name} | ${whole.p50.toFixed(1)} | ${whole.p95.toFixed(1)} | ${whole.failed} |`);
      log(
        `${name}: page p50 ${whole.p50.toFixed(1)} ms, p95 ${whole.p95.toFixed(1)} ms, failed ${whole.failed}`,
      );
    }
    const text = await registry.metrics();
    await service.close();
    await scoped.close();
    run.write(
      report({
        loadS,
        indexS,
        pruning,
        reference,
        rows,
        suggestRows,
        viewerRows,
        unindexed,
        queryTimes: queryTimesFrom(text),
      }),
    );
  }
} finally {
  await pgh.stop();
}

/** p50/p95 estimates are not in the histogram; the page query's mean per shape is (sum / count). */
function queryTimesFrom(text: string): Map<string, number> {
  const sums = new Map<string, number>();
  const counts = new Map<string, number>();
  for (const line of text.split('\n')) {
    const m = /^search_query_duration_seconds_(sum|count)\{.*shape="([^"]+)".*\} (\S+)$/.exec(line);
    if (!m) continue;
    (m[1] === 'sum' ? sums : counts).set(m[2]!, Number(m[3]));
  }
  const means = new Map<string, number>();
  for (const [shape, n] of counts) if (n > 0) means.set(shape, (sums.get(shape)! / n) * 1000);
  return means;
}

function report(r: {
  loadS: number;
  indexS: number;
  pruning: { defaultRange: Pruning; all: Pruning };
  reference: Figures;
  rows: string[];
  suggestRows: string[];
  viewerRows: string[];
  unindexed: string[];
  queryTimes: Map<string, number>;
}): string {
  return `# Search latency (bench/search)

Store: ${EVENTS.toLocaleString('en-US')} events over 182 days (7 monthly partitions), loaded with
generate_series${Number.isNaN(r.loadS) ? ' (by an earlier run, reused)' : ` in ${Math.round(r.loadS)} s, secondary indexes built in ${Math.round(r.indexS)} s`}.
Page: one \`GET /events\` answered in-process by the search service (rows, facets and histogram
read concurrently on the read pool, the capped total from the facets' count, then rendered); facets and histogram: that
query alone. ${RUNS} runs after 3 warm-up runs, parameter values rotating between runs. Server:
shared_buffers ${SERVER_MEMORY.shared_buffers}, effective_cache_size ${SERVER_MEMORY.effective_cache_size} (a quarter and three quarters of
this machine's memory), the store read into shared buffers first (pg_prewarm, oldest month first).
Milliseconds; target p95 at most 300 for facets and histogram. Histogram from: the hourly rollup,
the table (counted), or a block sample of the months the range touches (estimated, scaled).

Partition pruning (EXPLAIN of the page's row statement): an unfiltered search with the default
range (last 24 h) plans ${r.pruning.defaultRange.planned} of the ${r.pruning.defaultRange.partitions} partitions (at most 2, else the bench fails);
\`range=all\` plans ${r.pruning.all.planned}.

Reference query (raw SQL, untouched by search changes: the newest 51 rows of one hour, another
hour each run): p50 ${r.reference.p50.toFixed(1)}, p95 ${r.reference.p95.toFixed(1)}.

## The 16 shapes (each with an index path)

time: a 6-hour window (else \`range=all\`); text: \`overflow\` (0.1 % of rows) or a common word
(1/7 of rows); payload: \`device.id = dev-N\` (equality, 0.02 %); attrs: \`type = com.example.tN\` (5 %).

| shape | page p50 | page p95 | page failed | facets p50 | facets p95 | facets failed | histogram p50 | histogram p95 | histogram failed | histogram from | p95 / reference p95 (page / facets / histogram) |
|---|---|---|---|---|---|---|---|---|---|---|---|
${r.rows.join('\n')}

Mean of the page query alone (\`search_query_duration_seconds\` sum / count), ms:
${[...r.queryTimes].map(([s, ms]) => `${s} ${ms.toFixed(1)}`).join('; ')}.

## Viewers under row-level security

The page of each shape, as above (search logged in as the superuser, which row-level security
does not apply to), beside a search logged in as the reader role for a viewer who sees every
event (\`all: true\`) and one who sees ${FEW_SOURCES.length} of the 50 seed sources (a tenth of the rows). The three
pages are timed in turn, run by run (the first of them rotating), so that a burst of load on the
machine falls on all three alike. For a few sources, half of the types the shapes rotate through
have no event of the viewer's: those pages are quick, so the p95 is that of the other half.

| shape | superuser p50 | superuser p95 | failed | reader, all p50 | reader, all p95 | failed | reader, few sources p50 | reader, few sources p95 | failed | p95 reader all / superuser | p95 few / all |
|---|---|---|---|---|---|---|---|---|---|---|---|
${r.viewerRows.join('\n')}

## Autocomplete of the query bar

\`GET /suggest\` of the search logged in as the reader role (the names catalog under row-level
security), lines rotating over field names, severities and type and source prefixes; target p95 at
most 100.

| viewer | p50 | p95 | failed | p95 / reference p95 |
|---|---|---|---|---|
${r.suggestRows.join('\n')}

## Filters without an index path (documented in services/search/README.md)

| filter | p50 | p95 | failed (timeout) |
|---|---|---|---|
${r.unindexed.join('\n')}
`;
}
