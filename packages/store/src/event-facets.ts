/**
 * The search page's facets: how many matches carry each type, source, subject, severity and
 * extension name, counted over the whole filtered range up to `FACET_ROW_CAP` matches (the newest
 * ones; beyond that the counts are of those only, and `capped` says so).
 *
 * The matches are read newest first one partition at a time (the bounded partitions the catalog
 * lists, and the stretches between them that the default partition holds), each piece's statement
 * reading at most what the cap still allows and grouping it five ways, until the cap or the
 * range's start; a piece likely to hold far more than that is read newest part first
 * (`newestPart`), and where the hourly rollup answers the filter, the newest hours it says hold the
 * cap are one piece when they reach into the month before (`piecesOf`). The pieces come from the
 * catalog, never from walking the calendar, so a range of any length costs at most as many
 * statements as there are partitions, and one more. One statement over the whole range let the planner sort every
 * match when it expected fewer than the cap: a common word and a type on the 5 M-event bench
 * store (35,700 matches over six months) read 35,700 pages, 1.4 s at p95; month by month it
 * reads the newest one or two months. The cap bounds the heap visits (one a match for a type:
 * 50,000 took 300-520 ms, 10,000 about a fifth of that). A filter whose matches one index holds in
 * time order (`sourcesInIndexOrder`) is the exception: one statement over the range, which stops
 * at the cap by itself.
 *
 * @example
 * const f = await facetEvents(pool, { from, to });
 * f.types[0]; // { value: 'com.example.alarm', count: 4211 }
 */

import type { PlannedStatement } from './cancellable-pool.js';
import { scopeOf } from './cancellable-pool.js';
import {
  guessesAt,
  HOUR_MS,
  oldestEventTime,
  rollupAnswers,
  SAMPLE_LIMITS,
  type SampleLimits,
  samplePercent,
} from './event-histogram.js';
import { rollupNewestHour } from './event-rollup.js';
import {
  canAskTypesOfText,
  clause,
  type EventFilter,
  mergedBySource,
  readFilter,
  SqlParams,
  sortsEveryMatch,
  sourceRanges,
  TOTAL_CAP,
  type WhereOptions,
  whereOf,
} from './event-search.js';
import { listPartitions, piecesByPartition, type TimeSpan } from './partitions.js';
import type { DatabasePool } from './queryable.js';
import { rollupCovers, scopeSources } from './read-scope.js';

/**
 * Matches counted at most (the newest): as many as the total counts (`TOTAL_CAP`), so the facets of
 * a `10,000+` total are shares of the same 10,000. Each costs a heap visit: at 20,000 a common word
 * and a type took 590 ms at p95 on the 5 M-event bench store, the type alone 170 ms.
 */
export const FACET_ROW_CAP = TOTAL_CAP;
/** Values shown per facet. */
export const FACET_VALUES = 10;
/** Values shown of a facet asked for more (`FacetOptions.more`). */
export const FACET_MORE_VALUES = 50;

export interface FacetValue {
  value: string;
  count: number;
}

export interface Facets {
  types: FacetValue[];
  sources: FacetValue[];
  subjects: FacetValue[];
  /** Severity ranks as text (`'50'`), `''` for events without a known severity. */
  severities: FacetValue[];
  extensions: FacetValue[];
  /** More than `FACET_ROW_CAP` matches: the counts are of the newest `FACET_ROW_CAP`. */
  capped: boolean;
  /** Matches counted: every match, or `FACET_ROW_CAP` when capped (what a value's share is of). */
  counted: number;
  /** Per facet, how many of its values the lists leave out. */
  hidden: Record<FacetName, number>;
  /**
   * Estimated from a block sample of this share (percent) of the range's pages, the counts and
   * `counted` scaled (`sampledFacets`); absent when counted.
   */
  samplePercent?: number;
}

export interface FacetOptions {
  /** The facet that lists up to `FACET_MORE_VALUES` values instead of `FACET_VALUES`. */
  more?: FacetName;
  /** When a payload comparison is sampled (`sampledFacets`); tests lower them to sample a small store. */
  limits?: SampleLimits;
}

const FACETS = {
  types: 'ce_type',
  sources: 'ce_source',
  subjects: 'ce_subject',
  severities: "coalesce(severity_rank::text, '')",
} as const;

export const FACET_NAMES = ['types', 'sources', 'subjects', 'severities', 'extensions'] as const;
export type FacetName = (typeof FACET_NAMES)[number];

/** The `FACET_VALUES` most frequent values of each facet among the matches (up to the cap). */
export async function facetEvents(
  db: DatabasePool,
  given: EventFilter,
  options: FacetOptions = {},
): Promise<Facets> {
  const filter = await readFilter(db, given);
  const sampled = await sampledFacets(db, filter, options.limits ?? SAMPLE_LIMITS);
  if (sampled) return listed(sampled.rows, sampled.matched, options, sampled.percent);
  const rows: FacetRow[] = [];
  let matched = 0;
  const pieces = await piecesOf(db, filter);
  /** Matches per millisecond of the last piece read that held any: what the next one may hold. */
  let density = 0;
  while (pieces.length > 0) {
    const piece = pieces.shift()!;
    const limit = FACET_ROW_CAP + 1 - matched;
    const parts = piece.cut ? undefined : newestPart(piece, density, limit);
    if (parts) {
      pieces.unshift(...parts);
      continue;
    }
    for (const r of await pieceFacets(db, { ...filter, ...spanOf(piece) }, limit)) {
      if (r.facet !== 'matched') rows.push(r);
      else {
        matched += r.n;
        if (r.n > 0) density = r.n / lengthMs(piece);
      }
    }
    if (matched > FACET_ROW_CAP) break;
  }
  return listed(rows, matched, options);
}

type FacetRow = { facet: string; value: string; n: number };

/** The facets of grouped rows (summed per value), of `matched` matches; `percent` when sampled. */
function listed(rows: FacetRow[], matched: number, options: FacetOptions, percent?: number): Facets {
  const counts = new Map<string, Map<string, number>>();
  for (const r of rows) {
    const facet = counts.get(r.facet) ?? new Map<string, number>();
    facet.set(r.value, (facet.get(r.value) ?? 0) + r.n);
    counts.set(r.facet, facet);
  }
  const shown = (facet: FacetName) => (facet === options.more ? FACET_MORE_VALUES : FACET_VALUES);
  const top = (facet: FacetName) =>
    [...(counts.get(facet) ?? [])]
      .map(([value, count]) => ({ value, count }))
      .sort((a, b) => b.count - a.count || a.value.localeCompare(b.value))
      .slice(0, shown(facet));
  const hidden = (facet: FacetName) => Math.max(0, (counts.get(facet)?.size ?? 0) - shown(facet));
  return {
    types: top('types'),
    sources: top('sources'),
    subjects: top('subjects'),
    severities: top('severities'),
    extensions: top('extensions'),
    capped: percent === undefined && matched > FACET_ROW_CAP,
    counted: percent === undefined ? Math.min(matched, FACET_ROW_CAP) : matched,
    hidden: Object.fromEntries(FACET_NAMES.map((f) => [f, hidden(f)])) as Record<FacetName, number>,
    ...(percent === undefined ? {} : { samplePercent: percent }),
  };
}

/**
 * The facets of a filter holding a payload comparison (`guessesAt`) over more rows than a sample
 * reads: no index narrows the comparison, so the newest matches were sought row by row back through
 * the range, for as long as they took to reach the cap (`amount > N` over all of a 5 M store, a
 * rare N: 3 to 4 s). Instead the matches of a repeatable block sample of the range (the
 * histogram's share, `samplePercent`) are grouped, each standing for 100 / percent events.
 * Undefined when the filter is counted as any other (its other conditions give at most
 * `sampleRows` rows, or the range holds no more).
 */
async function sampledFacets(
  db: DatabasePool,
  filter: EventFilter,
  limits: SampleLimits,
): Promise<{ rows: FacetRow[]; matched: number; percent: number } | undefined> {
  if (!guessesAt(filter)) return undefined;
  const to = filter.to ?? new Date();
  const from = filter.from ?? (await oldestEventTime(db));
  if (from === undefined || from >= to) return undefined;
  const bounded = { ...filter, from, to };
  const percent = await samplePercent(db, bounded, { ...limits, exactMax: limits.sampleRows });
  if (percent === undefined) return undefined;
  const p = new SqlParams();
  const sample = `SELECT ce_type, ce_source, ce_subject, severity_rank, extensions
      FROM events.cloud_event TABLESAMPLE SYSTEM (${percent}) REPEATABLE (0) ${clause(whereOf(bounded, p))}`;
  const { rows } = await db.query<FacetRow>(
    `WITH kept AS MATERIALIZED (${sample})
    ${groupedFacets('(SELECT count(*) FROM kept)').join('\n    UNION ALL ')}`,
    p.values,
  );
  const scaled = (n: number) => Math.round((n * 100) / percent);
  const matched = rows.find((r) => r.facet === 'matched')?.n ?? 0;
  return {
    rows: rows.filter((r) => r.facet !== 'matched').map((r) => ({ ...r, n: scaled(r.n) })),
    matched: scaled(matched),
    percent,
  };
}

/** The statements grouping `kept` five ways, and `matched` (a count) as the row `matched`. */
function groupedFacets(matched: string): string[] {
  return [
    ...Object.entries(FACETS).map(
      ([facet, expr]) =>
        `SELECT '${facet}' AS facet, ${expr} AS value, count(*)::int AS n FROM kept WHERE ${expr} IS NOT NULL GROUP BY 2`,
    ),
    `SELECT 'extensions', k, count(*)::int FROM kept, jsonb_object_keys(kept.extensions) AS k GROUP BY 2`,
    `SELECT 'matched', '', ${matched}::int`,
  ];
}

/** A piece of the range; `cut` when its bounds were chosen for the cap (`newestPart`, `piecesOf`). */
interface Piece extends TimeSpan {
  cut?: true;
}

/**
 * The pieces of the filter's range, newest first: one a partition (`piecesByPartition`), except
 * that when the hourly rollup answers the filter (`rollupAnswers`), is refreshed into the partition
 * that holds the range's end (or now, before a range that ends later), and counts the cap within
 * that partition and the one before but not within the first alone, the hours from where it counts
 * the cap are one piece, then the partitions before them. Read month by month, a viewer of few
 * sources counts part of the cap of a word in the newest month and the rest in a part of the month before
 * whose length is guessed from the first month's density (`newestPart`); the rollup's counts put
 * the bound where the cap is reached, in one statement fewer. The rollup may count fewer than the
 * table (rows since its last refresh) or more (whole hours at the range's ends, a detached month):
 * the piece then holds more than the cap, which its limit stops, or fewer, and the older pieces
 * follow. Two partitions at most: a rollup that is far behind would otherwise make one statement
 * read and sort every match of the months it has not counted.
 */
async function piecesOf(db: DatabasePool, filter: EventFilter): Promise<Piece[]> {
  // Read in index order, the newest matches of the whole range are one statement that stops at the cap.
  if (sourcesInIndexOrder(db, filter)) return [{ ...spanOf(filter), cut: true }];
  const partitions = await listPartitions(db);
  const pieces: Piece[] = piecesByPartition(partitions, filter);
  if (!rollupAnswers(filter, HOUR_MS) || !rollupCovers(scopeOf(db))) return pieces;
  // The pieces after now hold at most what ingest accepts ahead of time.
  const end = Math.min(filter.to?.getTime() ?? Number.POSITIVE_INFINITY, Date.now());
  const at = pieces.findIndex((p) => p.from === undefined || p.from.getTime() < end);
  const [current, before] = [pieces[at], pieces[at + 1]];
  if (current?.from === undefined || before?.from === undefined) return pieces;
  const hour = await rollupNewestHour(db, { ...filter, from: before.from }, FACET_ROW_CAP + 1, current.from);
  if (hour === undefined || hour >= current.from) return pieces;
  const start = new Date(Math.max(hour.getTime(), before.from.getTime()));
  return [
    { from: start, ...(filter.to && { to: filter.to }), cut: true },
    ...piecesByPartition(partitions, { ...filter, to: start }),
  ];
}

/** The bounds of `span` that are set. */
function spanOf(span: TimeSpan): TimeSpan {
  return { ...(span.from && { from: span.from }), ...(span.to && { to: span.to }) };
}

/** Where a bounded piece's events end: now, for the piece that holds now (nothing later yet). */
function endMs(from: Date, to: Date): number {
  const now = Date.now();
  return from.getTime() < now && now < to.getTime() ? now : to.getTime();
}

/**
 * The time a piece spans, up to now (`endMs`); one open at either end as long as can be (its
 * density then 0: the piece after it is read whole, never cut on a guess from rows that may lie
 * ahead of now).
 */
function lengthMs({ from, to }: TimeSpan): number {
  if (from === undefined || to === undefined) return Number.POSITIVE_INFINITY;
  return Math.max(1, endMs(from, to) - from.getTime());
}

/**
 * A piece expected, at the density of the last piece read (`density`, matches per millisecond), to
 * hold more than twice the matches the facets still count, cut in two where its newest `limit`
 * would begin at that density, with half as many again for the unevenness: the newer part first,
 * then the rest, which is read only if the newer part held fewer. A plan that reads every match of
 * a piece and sorts them (a bitmap) then reads about the newer part's: on the 5 M-event bench store,
 * a viewer of 5 of the 50 sources counted 8,500 rows of a type in its newest month, then 1,500 in
 * the month before, whose 8,500 it read whole (such a filter is now read in index order,
 * `sourcesInIndexOrder`; one of a word still is so). Undefined for a piece open at either end, or
 * one not worth cutting.
 */
function newestPart(piece: TimeSpan, density: number, limit: number): Piece[] | undefined {
  const { from, to } = piece;
  const length = lengthMs(piece);
  if (from === undefined || to === undefined || density * length <= 2 * limit) return undefined;
  const at = new Date(endMs(from, to) - Math.ceil((1.5 * limit) / density));
  return [
    { from: at, to, cut: true },
    { from, to: at, cut: true },
  ];
}

/**
 * The newest `limit` matches of one piece grouped five ways, and how many were read (`matched`).
 * `limit` is what the cap still allows plus one: that last row is never grouped, it only says that
 * more match.
 */
async function pieceFacets(db: DatabasePool, filter: EventFilter, limit: number): Promise<FacetRow[]> {
  const { rows } = await db.query<FacetRow>(await facetStatement(db, filter, limit));
  return rows;
}

/** The statement of one piece's facets (`pieceFacets`) as `db` would send it; tests EXPLAIN it. */
export async function facetStatement(
  db: DatabasePool,
  filter: EventFilter,
  limit: number,
): Promise<PlannedStatement> {
  const bySource = sourcesInIndexOrder(db, filter);
  const typeLexemes =
    !bySource && canAskTypesOfText(filter) && (await sortsEveryMatch(db, plainNewestMatches(filter, limit)));
  const p = new SqlParams();
  const matched = bySource
    ? mergedBySource(
        bySource.map((source) => newestMatches({ ...filter, sources: [source] }, limit, p)),
        'occurred_at DESC',
        p.add(limit),
      )
    : newestMatches(filter, limit, p, { typeLexemes });
  const groups = groupedFacets('(SELECT count(*) FROM matched)');
  return {
    text: `WITH matched AS MATERIALIZED (${matched}),
    kept AS MATERIALIZED (SELECT * FROM matched LIMIT ${p.add(limit - 1)})
    ${groups.join('\n    UNION ALL ')}`,
    values: p.values,
    ...(bySource && { planner: { enable_bitmapscan: 'off' } }),
  };
}

/**
 * The sources whose facets are read in index order (`sourceRanges`), each source's range newest
 * first, merged (`mergedBySource`), so a piece reads the matches it counts and no other row. The
 * planner is told not to use a bitmap for it: it takes a type and a source for independent,
 * expects a tenth of the matches when they go together, and then reads every match of the piece
 * through two wider indexes and sorts them; on the 5 M-event bench store (in shared buffers) a
 * viewer of 5 of the 50 sources counted one type's newest 10,000 in 55-100 ms that way, 44-54 ms
 * in index order, most of it the grouping. Undefined, besides the filters `sourceRanges` leaves
 * out, on a pool that would not pass the setting on (one `scopedPool` did not make), where one
 * statement over the range would read and sort every match of it, and for sources whose rows
 * the scope's policy does not all admit.
 */
function sourcesInIndexOrder(db: DatabasePool, filter: EventFilter): string[] | undefined {
  const scope = scopeOf(db);
  const sources = scope && sourceRanges(filter);
  if (scope?.all || sources === undefined) return sources;
  // Only where the policy admits every row the index gives: else each branch would walk its
  // source's range over the whole range, dropping the rows the viewer does not see.
  const visible = scopeSources(scope);
  return visible && sources.every((s) => visible.includes(s)) ? sources : undefined;
}

/** The statement of a piece's newest `limit` matches, with the columns the facets group. */
function newestMatches(filter: EventFilter, limit: number, p: SqlParams, options: WhereOptions = {}): string {
  return `SELECT ce_type, ce_source, ce_subject, severity_rank, extensions, occurred_at FROM events.cloud_event
      ${clause(whereOf(filter, p, options))} ORDER BY occurred_at DESC LIMIT ${p.add(limit)}`;
}

/** `newestMatches` as its own statement, the text alone asked of the text index. */
function plainNewestMatches(filter: EventFilter, limit: number): { text: string; values: unknown[] } {
  const p = new SqlParams();
  return { text: newestMatches(filter, limit, p), values: p.values };
}
