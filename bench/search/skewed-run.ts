/**
 * The shapes of bench/search on the skewed store (`BENCH_STORE=skewed`, skewed-store.ts): the
 * filters that real stores made slow (subject, payload comparison, severity, type + severity,
 * text + attrs, the lookup by source and id, `range=all`), each as the whole page, its facets and
 * its histogram alone, beside a reference SQL of the same run (events per type over the last 7
 * days) so runs at different machine loads compare by ratio. Filter values come from the store
 * (rows sampled with TABLESAMPLE, so popular subjects and types come up as often as they occur).
 *
 * Then each shape past the target is run once more with auto_explain (ANALYZE, BUFFERS) on, so its
 * slow statements' plans land in the store's postgres.log.
 */
import { relative } from 'node:path';
import { repoRoot } from '@event-observatory/devstack';
import pg from 'pg';
import { SKEWED_WORDS } from './skewed-store.js';

export interface Figures {
  p50: number;
  p95: number;
  failed: number;
}

export interface PageAnswer {
  status: number;
  body: string;
}

/** What a page says when its count, facets or histogram ran out of time (views of services/search). */
const UNAVAILABLE = /count unavailable|Facets unavailable|Histogram unavailable/;

export interface SkewedBench {
  url: string;
  runs: number;
  measure: (run: (i: number) => Promise<boolean>) => Promise<Figures>;
  /** One whole page (`GET /events`): its status and HTML. */
  answer: (params: URLSearchParams) => Promise<PageAnswer>;
  /** Pages of a service whose connections explain their slow statements into postgres.log. */
  explainedPage: () => {
    answer: (params: URLSearchParams) => Promise<PageAnswer>;
    close: () => Promise<void>;
  };
  facets: (params: URLSearchParams) => Promise<boolean>;
  histogram: (params: URLSearchParams) => Promise<boolean>;
  /** Where the measured histograms came from since the last call (`rollup`, `table`, `sample N %`). */
  histogramSources: () => string;
  chosen: (name: string) => boolean;
}

/** The page's target, ms at p95. */
const TARGET_MS = 300;

interface Samples {
  subjects: string[];
  recentSubjects: string[];
  types: string[];
  names: { source: string; id: string }[];
  customers: string[];
}

/** Filter values drawn from the rows (popular values as often as they occur). */
async function sample(db: pg.Pool): Promise<Samples> {
  // sql-witness: draws filter values, times a reference no search code touches, describes the store.
  const column = async (sql: string) => (await db.query<{ v: string }>(sql)).rows.map((r) => r.v);
  const subjects = await column(
    `SELECT ce_subject AS v FROM events.cloud_event TABLESAMPLE SYSTEM (0.05) REPEATABLE (1)
      WHERE ce_subject IS NOT NULL LIMIT 40`,
  );
  const recentSubjects = await column(
    `SELECT ce_subject AS v FROM events.cloud_event
      WHERE occurred_at > now() - interval '24 hours' AND ce_subject IS NOT NULL
      ORDER BY hashtext(ce_id) LIMIT 40`,
  );
  const types = await column(
    `SELECT ce_type AS v FROM events.cloud_event TABLESAMPLE SYSTEM (0.05) REPEATABLE (2) LIMIT 40`,
  );
  const customers = await column(
    `SELECT data -> 'customer' ->> 'id' AS v FROM events.cloud_event TABLESAMPLE SYSTEM (0.05) REPEATABLE (3) LIMIT 40`,
  );
  const { rows: names } = await db.query<{ source: string; id: string }>(
    `SELECT ce_source AS source, ce_id AS id FROM events.cloud_event TABLESAMPLE SYSTEM (0.05) REPEATABLE (4) LIMIT 40`,
  );
  return { subjects, recentSubjects, types, names, customers };
}

const at = <T>(values: T[], i: number): T => values[i % values.length]!;

/** The shapes: name (no comma: BENCH_SHAPES is a comma-separated list of them) and the URL parameters of the i-th run. */
function shapes(s: Samples): [string, (i: number) => URLSearchParams][] {
  const p = (o: Record<string, string>) => new URLSearchParams(o);
  return [
    ['type (7 days)', (i) => p({ type: at(s.types, i), range: '7d' })],
    ['subject exact (all time)', (i) => p({ subject: at(s.subjects, i), range: 'all' })],
    ['subject exact (24 h)', (i) => p({ subject: at(s.recentSubjects, i), range: '24h' })],
    // A tenant's subjects (`tenant-N/*`): about 1 % of the rows each.
    [
      'subject prefix tenant-N/* (all time)',
      (i) => p({ subject: `${at(s.subjects, i).split('/')[0]}/*`, range: 'all' }),
    ],
    [
      'payload data.amount > N (all time)',
      (i) => p({ payload: `amount > ${at([9000, 9900, 5000], i)}`, range: 'all' }),
    ],
    [
      'payload nested customer.id = c-N (all time)',
      (i) => p({ payload: `customer.id = ${at(s.customers, i)}`, range: 'all' }),
    ],
    ['severity >= error (all time)', () => p({ severity: 'error', range: 'all' })],
    [
      'type + severity >= error (all time)',
      (i) => p({ type: at(s.types, i), severity: 'error', range: 'all' }),
    ],
    [
      'text + attrs (all time)',
      (i) => p({ q: at([...SKEWED_WORDS], i), type: at(s.types, i), range: 'all' }),
    ],
    [
      'lookup by source + id (the name ingest answers)',
      (i) => {
        const n = at(s.names, i);
        return p({
          query: `events/${encodeURIComponent(n.source)},${encodeURIComponent(n.id)}`,
          range: 'all',
        });
      },
    ],
    ['range=all (no filter)', () => p({ range: 'all' })],
    ['no filter (default range: last 24 h)', () => p({})],
  ];
}

/** Events per type over the last 7 days, straight SQL: the reference of the run. */
async function reference(b: SkewedBench): Promise<Figures> {
  const db = new pg.Pool({ connectionString: b.url, max: 1 });
  try {
    return await b.measure(async () => {
      const res = await db.query(
        `SELECT ce_type, count(*) FROM events.cloud_event
          WHERE occurred_at >= now() - interval '7 days' GROUP BY ce_type`,
      );
      return (res.rowCount ?? 0) > 0;
    });
  } finally {
    await db.end();
  }
}

const ms = (f: Figures) => `${f.p50.toFixed(0)} | ${f.p95.toFixed(0)} | ${f.failed}`;

/** What the store holds: the skew as loaded, and its size on disk. */
async function storeFacts(db: pg.Pool): Promise<string> {
  const { rows } = await db.query<Record<string, string>>(
    `SELECT (SELECT count(*) FROM events.cloud_event) AS events,
            (SELECT count(DISTINCT ce_subject) FROM events.cloud_event) AS subjects,
            (SELECT count(DISTINCT ce_source) FROM events.event_name) AS sources,
            (SELECT count(DISTINCT ce_type) FROM events.event_name) AS types,
            (SELECT count(*) FROM (SELECT DISTINCT ce_type, ce_source FROM events.event_name) AS p) AS pairs,
            (SELECT count(*) FROM events.event_rollup_hourly) AS rollup_rows,
            (SELECT max(event_count) FROM (SELECT sum(event_count) AS event_count FROM events.event_rollup_hourly
               GROUP BY bucket_start) AS h) AS busiest_hour,
            (SELECT round(100.0 * max(n) / sum(n), 1) FROM (SELECT count(*) AS n FROM events.cloud_event
               TABLESAMPLE SYSTEM (1) REPEATABLE (5) GROUP BY ce_source) AS s) AS top_source_percent,
            pg_size_pretty(pg_database_size(current_database())) AS size`,
  );
  const f = rows[0]!;
  const n = (k: string) => Number(f[k]).toLocaleString('en-US');
  return `${n('events')} events; ${n('sources')} sources (the most frequent ${f.top_source_percent} % of the rows, from a 1 % sample), ${n('types')} types, ${n('pairs')} type-source pairs; ${n('subjects')} distinct subjects; ${n('rollup_rows')} rows in the hourly rollup; busiest hour ${n('busiest_hour')} events (average ${Math.round(Number(f.events) / 4368).toLocaleString('en-US')}); database ${f.size}`;
}

/** Measures every chosen shape: the reference, one table row per shape, the shapes explained. */
export async function benchSkewed(
  b: SkewedBench,
): Promise<{ ref: Figures; rows: string[]; explained: string[]; facts: string }> {
  const db = new pg.Pool({ connectionString: b.url, max: 2 });
  const samples = await sample(db);
  const facts = await storeFacts(db);
  await db.end();
  process.stdout.write(`[bench] store: ${facts}\n`);
  const ref = await reference(b);
  process.stdout.write(
    `[bench] reference (events per type, 7 days): p50 ${ref.p50.toFixed(1)} ms, p95 ${ref.p95.toFixed(1)} ms\n`,
  );
  const rows: string[] = [];
  const slow: [string, (i: number) => URLSearchParams][] = [];
  for (const [name, params] of shapes(samples).filter(([n]) => b.chosen(n))) {
    // Pages answered 200 that say a part is unavailable, of the measured runs (warm-ups run i >= 1000).
    let partial = 0;
    const page = await b.measure(async (i) => {
      const a = await b.answer(params(i));
      if (i < 1000 && a.status === 200 && UNAVAILABLE.test(a.body)) partial++;
      return a.status === 200;
    });
    const facets = await b.measure((i) => b.facets(params(i)));
    b.histogramSources();
    const histogram = await b.measure((i) => b.histogram(params(i)));
    const from = b.histogramSources();
    const ratios = [page, facets, histogram].map((f) => (f.p95 / ref.p95).toFixed(1)).join(' / ');
    const over = [page, facets, histogram].some((f) => f.p95 > TARGET_MS || f.failed > 0);
    rows.push(
      `| ${name} | ${ms(page)} | ${partial} | ${ms(facets)} | ${ms(histogram)} | ${from} | ${ratios} | ${over ? 'no' : 'yes'} |`,
    );
    process.stdout.write(
      `[bench] ${name}: page / facets / histogram p50 | p95 | failed: ${ms(page)} (partial ${partial}) ; ${ms(facets)} ; ${ms(histogram)}\n`,
    );
    if (over) slow.push([name, params]);
  }
  // Once each, explained: the plans of its statements past 250 ms go to postgres.log.
  const explained = b.explainedPage();
  try {
    for (const [name, params] of slow) {
      process.stdout.write(`[bench] explain: ${name}\n`);
      await explained.answer(params(0));
    }
  } finally {
    await explained.close();
  }
  return { ref, rows, explained: slow.map(([n]) => n), facts };
}

export function skewedReport(r: {
  events: number;
  runs: number;
  loadS: number;
  indexS: number;
  dataDir: string;
  ref: Figures;
  rows: string[];
  explained: string[];
  facts: string;
}): string {
  const loaded = Number.isNaN(r.loadS)
    ? 'loaded by an earlier run (reused)'
    : `loaded in ${Math.round(r.loadS)} s, secondary indexes built and analysed in ${Math.round(r.indexS)} s`;
  return `# Search latency on a skewed store (bench/search, BENCH_STORE=skewed)

Store (bench/search/skewed-store.ts): ${r.events.toLocaleString('en-US')} events over 182 days, ${loaded}, kept in
\`${relative(repoRoot(), r.dataDir)}\`. ${r.facts}.

Page: one \`GET /events\` answered in-process by the search service (superuser, no row-level
security); facets and histogram: that query alone. ${r.runs} runs after 3 warm-up runs, filter
values rotating over values sampled from the rows. Milliseconds; failed: not answered 200 (the page)
or an error (a statement timeout); partial: answered 200 but saying its count, facets or histogram
is unavailable (ran out of time). Target: p95 at most ${TARGET_MS} for each of the three.

Reference (raw SQL, no search code: events per type over the last 7 days): p50 ${r.ref.p50.toFixed(1)}, p95 ${r.ref.p95.toFixed(1)}.

| shape | page p50 | page p95 | page failed | page partial | facets p50 | facets p95 | facets failed | histogram p50 | histogram p95 | histogram failed | histogram from | p95 / reference p95 (page / facets / histogram) | within target |
|---|---|---|---|---|---|---|---|---|---|---|---|---|---|
${r.rows.join('\n')}

Explained once more with auto_explain (plans of statements past 250 ms in the store's postgres.log):
${r.explained.length ? r.explained.join('; ') : 'none'}.
`;
}
