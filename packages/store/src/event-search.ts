/**
 * The read queries of the search service over `events.cloud_event`: one page of a search (keyset
 * over (occurred_at, event_uid)), the capped total, the capped facets, one event, and the tail.
 * Every value reaches PostgreSQL as a bind parameter; the only text spliced into the SQL comes
 * from this module (column names, operators from a closed set, constants).
 *
 * Index paths (migrations 0002..0005, statistics 0007, 0008): time range -> the identity index,
 * whose leading column is occurred_at (scanned backwards for the keyset order); text, payload
 * equality and extensions -> the one GIN index on (search_doc, data jsonb_path_ops, extensions
 * jsonb_path_ops), which answers any mix of them in one scan; type and source -> B-trees
 * (ce_type | ce_source, occurred_at DESC), newest first for one value, and a type with sources ->
 * (ce_type, ce_source, occurred_at DESC) (0016, a scoped reader's type filter); subject, exact or
 * a prefix -> (ce_subject text_pattern_ops, occurred_at DESC) (0017); ids with their source ->
 * (ce_source, ce_id) (0017); severity >= error (50) -> the partial index cloud_event_severe_idx,
 * with a type the partial (ce_type, occurred_at DESC, severity_rank) (0018).
 * No index path: payload comparisons other than equality, severity below error. Totals are counted up to the
 * cap; the planner's estimate stands in only when it expects twice the cap and the count runs out
 * of its budget (`totalEvents`). A reader whose scope is a list of exact sources reads with those
 * sources as a condition (`withinScope`): the policy is no index path, the source B-tree is.
 *
 * Raw SQL on purpose: each query is written for its index path above and measured by bench/search.
 *
 * @example
 * const page = await searchEvents(pool, { text: 'boiler', types: ['com.example.alarm'] }, { limit: 50 });
 */
import { scopeOf } from './cancellable-pool.js';
import { isStatementTimeout } from './errors.js';
import type { DatabasePool, Queryable } from './queryable.js';
import { type ReadScope, scopeSources } from './read-scope.js';
import type { EventProducerIdentity } from './schema.js';
import { SEVERE_RANK } from './severity.js';
import { inPooledTransaction } from './transactions.js';

export const TOTAL_CAP = 10_000;
/** From this many estimated matches on, the total is counted within `VERIFY_BUDGET_MS` only (`totalEvents`). */
export const ESTIMATE_GATE = 2 * TOTAL_CAP;
/**
 * How long the capped count of a search estimated at `ESTIMATE_GATE` or more may take before the
 * estimate stands in for it. Counting 10,001 matches costs a heap visit each: 2-40 ms for an
 * empty filter or a type (B-trees), 50-300 ms for a common word, ~1 s for a word and a type, on
 * 5 M rows under load; the page waits for the total. 50 against 100 ms on bench/search (two
 * alternating pairs): text p95 96-100 against 135-147 ms, severity >= warning 139-148 against 159-207.
 */
export const VERIFY_BUDGET_MS = 50;
export type PayloadOperator = '=' | '!=' | '<' | '<=' | '>' | '>=';

/** One condition on the payload: the value at `path` (keys, array indexes as digits) against `value`. */
export interface PayloadCondition {
  path: string[];
  op: PayloadOperator;
  value: string | number | boolean | null;
}

export interface EventFilter {
  /** Inclusive lower bound on occurred_at. */
  from?: Date;
  /** Exclusive upper bound on occurred_at. */
  to?: Date;
  /**
   * Free text, PostgreSQL web-search syntax (quotes, `or`, `-`), configuration 'simple'. Plain
   * words (no quotes, `or` or `-`) each also match the types and sources they are a part of
   * (`failed` finds `payment.failed`, which `search_doc` holds as one lexeme).
   */
  text?: string;
  payload?: PayloadCondition[];
  /** Exact types; one ending in `*` matches every type starting with what precedes it. */
  types?: string[];
  sources?: string[];
  /** CloudEvents `id`s (with `sources`, the events/{source},{id} name); read through the index (ce_source, ce_id). */
  ids?: string[];
  /** Exact subject; one ending in `*` matches every subject starting with what precedes it. */
  subject?: string;
  /** Extension name -> value (string equality, as CloudEvents extensions are strings on the wire). */
  extensions?: Record<string, string>;
  /** Minimum severity rank (see severity.ts). */
  minSeverity?: number;
  /** Exact severity ranks (any of them); `null`: no known severity. */
  ranks?: (number | null)[];
  /** Extension names every match carries. */
  hasExtensions?: string[];
  /**
   * Values no match may have (the facets' exclude links; a type ending in `*` a prefix); a null
   * column is never excluded, except a `null` rank, which excludes events without a known severity.
   */
  exclude?: {
    types?: string[];
    sources?: string[];
    /** A subject ending in `*` leaves out every subject starting with what precedes it. */
    subjects?: string[];
    /** Severity ranks; `null`: no known severity. */
    ranks?: (number | null)[];
    /** Extension names. */
    extensions?: string[];
  };
  /** A boolean combination of filters (the query language's AND, OR, NOT), ANDed with the rest. */
  where?: FilterExpression;
  /** The types and sources each plain word of the texts is part of (`withWordParts` fills it). */
  wordParts?: ReadonlyMap<string, WordParts>;
}

/** `all`: every one holds; `any`: one of them does; `not`: it does not (a null comparison counts as not holding). */
export type FilterExpression =
  | { all: FilterExpression[] }
  | { any: FilterExpression[] }
  | { not: FilterExpression }
  | { match: EventFilter };

/** A position in the keyset order: `occurred_at` as PostgreSQL prints it (microseconds) and the uid. */
export interface EventKey {
  occurredAt: string;
  uid: string;
}

export interface EventRow {
  key: EventKey;
  /** The CloudEvents `id` the producer gave (unique per `source`). */
  id: string;
  occurredAt: Date;
  type: string;
  source: string;
  subject: string | null;
  severityRank: number | null;
  /** Who sent it to ingest; null for rows stored before it was kept, or without a readable header. */
  producer: EventProducerIdentity | null;
}

export interface EventPage {
  rows: EventRow[];
  /** Rows exist beyond this page in the direction read. */
  more: boolean;
}

/** The order rows come in: newest first (the default) or oldest first. */
export type EventOrder = 'newest' | 'oldest';

export interface PageRequest {
  limit: number;
  /** Rows strictly older than this key ... */
  after?: EventKey;
  /** ... or strictly newer; either way the rows come in `order`. */
  before?: EventKey;
  /** Without a key, the first page of this order: the newest rows or the oldest. */
  order?: EventOrder;
}

/** Whether a page reads older rows (descending): without a key, the newest order's first page does. */
function readsOlder(page: PageRequest): boolean {
  if (page.before !== undefined) return false;
  return page.after !== undefined || (page.order ?? 'newest') === 'newest';
}

/** Bind parameters of one statement: `add` returns the placeholder of a value. */
export class SqlParams {
  readonly values: unknown[] = [];
  add(value: unknown): string {
    this.values.push(value);
    return `$${this.values.length}`;
  }
}

const COMPARATORS: Record<PayloadOperator, string> = {
  '=': '=',
  '!=': '<>',
  '<': '<',
  '<=': '<=',
  '>': '>',
  '>=': '>=',
};

/** The object `{a: {b: value}}` for path [a, b], so equality becomes containment (GIN path). */
function nested(path: string[], value: unknown): unknown {
  return path.reduceRight<unknown>((inner, key) => ({ [key]: inner }), value);
}

/**
 * `column = $n` for one value, `= ANY($n)` for several. Equality makes the B-tree (column,
 * occurred_at DESC) return its rows newest first, so a page or the facet sample stops early; with
 * ANY the index cannot give that order, and a type with a common word walked the time index
 * instead (1,001 facet rows: 17,000 heap pages, 8.6 s cold, against 1,000 pages, 85 ms).
 */
function oneOf(column: 'ce_type' | 'ce_source' | 'ce_subject', values: string[], p: SqlParams): string {
  return values.length === 1
    ? `${column} = ${p.add(values[0])}`
    : `${column} = ANY(${p.add(values)}::text[])`;
}

/** Exact types as `oneOf`; `a.b.*` as a LIKE prefix (its `%`, `_` and `\` escaped), any of them matching. */
function typesOf(types: string[], p: SqlParams): string {
  const exact = types.filter((t) => !t.endsWith('*'));
  const prefixes = types
    .filter((t) => t.endsWith('*'))
    .map((t) => `${t.slice(0, -1).replace(/[\\%_]/g, '\\$&')}%`);
  const any = prefixes.map((like) => `ce_type LIKE ${p.add(like)}`);
  if (exact.length) any.unshift(oneOf('ce_type', exact, p));
  return any.length === 1 ? any[0]! : `(${any.join(' OR ')})`;
}

/**
 * Exact subjects as `oneOf`; `a/b/*` as a prefix, any of them matching. `^@` rather than LIKE: the
 * planner turns it into a range of the subject index (its `text_pattern_ops` whatever the
 * collation), with no wildcard to escape, and it is leakproof, so it stays an index condition under
 * row-level security.
 */
function subjectsOf(subjects: string[], p: SqlParams): string {
  const exact = subjects.filter((s) => !s.endsWith('*'));
  const any = subjects.filter((s) => s.endsWith('*')).map((s) => `ce_subject ^@ ${p.add(s.slice(0, -1))}`);
  if (exact.length) any.unshift(oneOf('ce_subject', exact, p));
  return any.length === 1 ? any[0]! : `(${any.join(' OR ')})`;
}

/** Words of letters, digits and `_`, each maybe negated by `-`: each may be part of a type or source. */
const PLAIN_WORDS = /^-?[\p{L}\p{N}_]+( +-?[\p{L}\p{N}_]+)*$/u;
/** Distinct types (or sources) read to find the words in: far above a real deployment's. */
const NAMES_CAP = 2_000;

/** The types and sources a word is part of, between separators (`failed` in `payment.failed`). */
export interface WordParts {
  types: string[];
  sources: string[];
}

/** The plain words of a text, lower case, without their `-`; none when it uses other web-search syntax. */
function plainWords(text: string): string[] {
  const words = text.trim().toLowerCase();
  if (!PLAIN_WORDS.test(words)) return [];
  const list = words.split(/ +/);
  return list.includes('or') ? [] : list.map((w) => w.replace(/^-/, ''));
}

/** Every text of a filter, its `where` included. */
function textsOf(filter: EventFilter): string[] {
  const texts = filter.text ? [filter.text] : [];
  const walk = (e: FilterExpression): void => {
    if ('match' in e) texts.push(...textsOf(e.match));
    else if ('not' in e) walk(e.not);
    else for (const item of 'all' in e ? e.all : e.any) walk(item);
  };
  if (filter.where) walk(filter.where);
  return texts;
}

/**
 * The distinct types and sources of the events `db` may see, at most `NAMES_CAP` each, from the
 * names catalog (migration 0012) rather than the event table: its rows are under the same scope
 * predicate as the events, so a word meets only names of events the viewer sees, and reading them
 * costs the catalog's size whatever the scope (DESIGN.md, "Names under a scope"). Both lists come
 * from one pass (grouping sets), so what is kept is the distinct names, not a row per month, type,
 * source and producer: on the skewed 5 M-event bench store (72,000 catalog rows) 18 ms instead of
 * 37 ms, which every page with free text waits for before its reads start. Tests EXPLAIN it.
 */
export const VISIBLE_NAMES_SQL = `WITH names AS MATERIALIZED (
    SELECT ce_type, ce_source FROM events.event_name GROUP BY GROUPING SETS ((ce_type), (ce_source))
  )
  SELECT array(SELECT ce_type FROM names WHERE ce_type IS NOT NULL ORDER BY 1 LIMIT ${NAMES_CAP}) AS types,
         array(SELECT ce_source FROM names WHERE ce_source IS NOT NULL ORDER BY 1 LIMIT ${NAMES_CAP}) AS sources`;

async function visibleNames(db: Queryable): Promise<WordParts> {
  const { rows } = await db.query<WordParts>(VISIBLE_NAMES_SQL);
  return rows[0]!;
}

const resolved = new WeakMap<EventFilter, Promise<EventFilter>>();

/**
 * The filter with `wordParts` filled: for each plain word of its texts, the types and sources it is
 * part of. `search_doc` holds a dotted type or a path as one lexeme, so the text index alone cannot
 * find `failed` in `payment.failed`. Read once per filter object (a page's four reads share it); a
 * filter without plain words is returned as it is, and its statements are unchanged.
 */
export function withWordParts(db: Queryable, filter: EventFilter): Promise<EventFilter> {
  const words = [...new Set(textsOf(filter).flatMap(plainWords))];
  if (words.length === 0 || filter.wordParts) return Promise.resolve(filter);
  let found = resolved.get(filter);
  if (!found) {
    found = (async () => {
      const { types, sources } = await visibleNames(db);
      const parts = new Map<string, WordParts>();
      for (const w of words) {
        const part = new RegExp(`(^|[^\\p{L}\\p{N}])${w}([^\\p{L}\\p{N}]|$)`, 'iu');
        parts.set(w, {
          types: types.filter((t) => part.test(t)),
          sources: sources.filter((s) => part.test(s)),
        });
      }
      return { ...filter, wordParts: parts };
    })();
    resolved.set(filter, found);
  }
  return found;
}

/**
 * `filter` with its sources narrowed to those `scope` admits, when they are all it admits
 * (`scopeSources`): the same rows (the policy admits no others), read through the source index in
 * proportion to what the viewer sees instead of walking other viewers' rows. A filter whose
 * sources are all outside the scope stays as it is: the policy admits none of its rows.
 */
export function withinScope(filter: EventFilter, scope: ReadScope | undefined): EventFilter {
  const visible = scopeSources(scope);
  if (visible === undefined) return filter;
  if (!filter.sources?.length) return { ...filter, sources: [...visible] };
  const kept = filter.sources.filter((s) => visible.includes(s));
  return kept.length > 0 ? { ...filter, sources: kept } : filter;
}

/** The filter every read of `db` plans: word parts filled (`withWordParts`), sources within its scope (`withinScope`). */
export async function readFilter(db: DatabasePool, given: EventFilter): Promise<EventFilter> {
  return withinScope(await withWordParts(db, given), scopeOf(db));
}

/**
 * Free text: web search on `search_doc`; each plain word (or `-word`) also as a part of the types
 * and sources `withWordParts` found (without them, as the text index alone).
 */
function textOf(
  text: string,
  parts: ReadonlyMap<string, WordParts> | undefined,
  p: SqlParams,
  within: (query: string) => string = (query) => query,
): string[] {
  const words = text.trim().toLowerCase();
  if (!PLAIN_WORDS.test(words) || words.split(/ +/).includes('or'))
    return [`search_doc @@ ${within(`websearch_to_tsquery('simple', ${p.add(text)})`)}`];
  return words.split(/ +/).map((signed) => {
    const w = signed.replace(/^-/, '');
    const any = [`search_doc @@ ${within(`plainto_tsquery('simple', ${p.add(w)})`)}`];
    const part = parts?.get(w);
    if (part?.types.length) any.push(`ce_type = ANY(${p.add(part.types)}::text[])`);
    if (part?.sources.length) any.push(`ce_source = ANY(${p.add(part.sources)}::text[])`);
    const found = any.length === 1 ? any[0]! : `(${any.join(' OR ')})`;
    return signed.startsWith('-') ? `NOT ${found}` : found;
  });
}

/** A boolean combination as one condition; `NOT` of a condition that is null (a missing column) holds. */
function expressionOf(e: FilterExpression, parts: EventFilter['wordParts'], p: SqlParams): string {
  if ('match' in e) {
    const where = whereOf({ ...e.match, ...(parts ? { wordParts: parts } : {}) }, p);
    return where.length ? `(${where.join(' AND ')})` : 'TRUE';
  }
  if ('not' in e) return `NOT COALESCE(${expressionOf(e.not, parts, p)}, FALSE)`;
  const items = 'all' in e ? e.all : e.any;
  if (items.length === 0) return 'all' in e ? 'TRUE' : 'FALSE';
  return `(${items.map((item) => expressionOf(item, parts, p)).join('all' in e ? ' AND ' : ' OR ')})`;
}

export interface WhereOptions {
  /**
   * The text's queries also ask for the lexemes of the filter's types, when they are all exact:
   * `search_doc` holds every row's type, so the rows are the same, but the text index then
   * intersects a common word's postings with a type's inside the index, instead of handing every
   * row with the word to a bitmap that the type index's bitmap is intersected with. A common word
   * and a type, one month of the 5 M-event bench store: 81 ms before, 32 ms after. The planner
   * multiplies the two conditions' shares as if independent, so it then expects a fraction of
   * the rows: a statement that would read a common type in time order and stop (33 ms) reads and
   * sorts every match instead (300 ms). Hence only where every match is read anyway: the
   * histogram's count, a capped total expected under the estimate gate, and a page or facets
   * statement whose plain plan sorts every match (`sortsEveryMatch`).
   */
  typeLexemes?: boolean;
}

/** Every type exact (no `*` prefix): only then can the text index be asked for them (`typeLexemes`). */
export function allTypesExact(types: string[] | undefined): types is string[] {
  return types !== undefined && types.length > 0 && !types.some((t) => t.endsWith('*'));
}

/** Whether a filter has both a text and only exact types: only then can `typeLexemes` change its statements. */
export function canAskTypesOfText(filter: EventFilter): boolean {
  return filter.text !== undefined && allTypesExact(filter.types);
}

/**
 * `query` also asking for the lexemes of `types` (those of any one of them), when every type is
 * exact. An empty query on either side (a text of no words, such as `_`, which matches nothing; a
 * type of none, such as `---` or a tag-like `<x>`, whose rows must stay) would drop out of the
 * `&&` or the `||`, so then the query stays as it was. The parameters are known when the statement
 * is planned, so PostgreSQL folds this to one constant query for the index.
 */
function typesInQuery(types: string[] | undefined, p: SqlParams): ((query: string) => string) | undefined {
  if (!allTypesExact(types)) return undefined;
  const queries = types.map((t) => `plainto_tsquery('simple', ${p.add(t)})`);
  return (query) => {
    const empty = `0 IN (${[query, ...queries].map((q) => `numnode(${q})`).join(', ')})`;
    return `CASE WHEN ${empty} THEN ${query} ELSE ${query} && (${queries.join(' || ')}) END`;
  };
}

/** The conditions of a filter on `events.cloud_event` (also read by the histogram and facets). */
export function whereOf(filter: EventFilter, p: SqlParams, options: WhereOptions = {}): string[] {
  const where: string[] = [];
  if (filter.from) where.push(`occurred_at >= ${p.add(filter.from)}`);
  if (filter.to) where.push(`occurred_at < ${p.add(filter.to)}`);
  if (filter.text) {
    const within = options.typeLexemes ? typesInQuery(filter.types, p) : undefined;
    where.push(...textOf(filter.text, filter.wordParts, p, within));
  }
  if (filter.where) where.push(expressionOf(filter.where, filter.wordParts, p));
  for (const c of filter.payload ?? []) {
    if (c.op === '=') {
      where.push(`data @> ${p.add(JSON.stringify(nested(c.path, c.value)))}::jsonb`);
      continue;
    }
    // Comparisons hold only between values of one JSON type (jsonb orders types before values).
    const at = `(data #> ${p.add(c.path)}::text[])`;
    const value = `${p.add(JSON.stringify(c.value))}::jsonb`;
    where.push(`jsonb_typeof(${at}) = jsonb_typeof(${value}) AND ${at} ${COMPARATORS[c.op]} ${value}`);
  }
  if (filter.types?.length) where.push(typesOf(filter.types, p));
  if (filter.sources?.length) where.push(oneOf('ce_source', filter.sources, p));
  if (filter.ids?.length) where.push(`ce_id = ANY(${p.add(filter.ids)}::text[])`);
  if (filter.subject !== undefined) where.push(subjectsOf([filter.subject], p));
  if (filter.extensions && Object.keys(filter.extensions).length > 0) {
    where.push(`extensions @> ${p.add(JSON.stringify(filter.extensions))}::jsonb`);
  }
  if (filter.ranks?.length) where.push(ranksOf(filter.ranks, p));
  if (filter.hasExtensions?.length) where.push(`extensions ?& ${p.add(filter.hasExtensions)}::text[]`);
  const x = filter.exclude ?? {};
  if (x.types?.length) where.push(`NOT (${typesOf(x.types, p)})`);
  if (x.sources?.length) where.push(`ce_source <> ALL(${p.add(x.sources)}::text[])`);
  if (x.subjects?.length) where.push(`(ce_subject IS NULL OR NOT ${subjectsOf(x.subjects, p)})`);
  if (x.ranks?.length) where.push(`NOT coalesce(${ranksOf(x.ranks, p)}, FALSE)`);
  if (x.extensions?.length) where.push(`NOT (extensions ?| ${p.add(x.extensions)}::text[])`);
  if (filter.minSeverity !== undefined) {
    where.push(`severity_rank >= ${p.add(filter.minSeverity)}`);
    // The constant lets the planner prove the partial index's predicate whatever the plan cache does.
    if (filter.minSeverity >= SEVERE_RANK) where.push(`severity_rank >= ${SEVERE_RANK}`);
  }
  return where;
}

/** Severity is one of `ranks`; a `null` among them matches events without a known severity. */
function ranksOf(ranks: (number | null)[], p: SqlParams): string {
  const known = ranks.filter((r) => r !== null);
  const anyOf = `severity_rank = ANY(${p.add(known)}::int[])`;
  return known.length === ranks.length ? anyOf : `(severity_rank IS NULL OR ${anyOf})`;
}

/** `occurred_at <= t` first, so the time index bounds the scan; then the tie on the uid. */
function keysetOf(key: EventKey, older: boolean, p: SqlParams): string {
  const t = `${p.add(key.occurredAt)}::timestamptz`;
  const u = `${p.add(key.uid)}::uuid`;
  return older
    ? `occurred_at <= ${t} AND (occurred_at < ${t} OR event_uid < ${u})`
    : `occurred_at >= ${t} AND (occurred_at > ${t} OR event_uid > ${u})`;
}

export const ROW_COLUMNS =
  'occurred_at::text AS key_time, event_uid::text AS uid, ce_id, occurred_at, ce_type, ce_source, ce_subject, severity_rank, producer';

export interface RawRow {
  key_time: string;
  uid: string;
  ce_id: string;
  occurred_at: Date;
  ce_type: string;
  ce_source: string;
  ce_subject: string | null;
  severity_rank: number | null;
  producer: EventProducerIdentity | null;
}

export function rowOf(r: RawRow): EventRow {
  return {
    key: { occurredAt: r.key_time, uid: r.uid },
    id: r.ce_id,
    occurredAt: r.occurred_at,
    type: r.ce_type,
    source: r.ce_source,
    subject: r.ce_subject,
    severityRank: r.severity_rank,
    producer: r.producer,
  };
}

export function clause(where: string[]): string {
  return where.length ? `WHERE ${where.join(' AND ')}` : '';
}

/** The select list of a page: SQL text, or written with bind parameters of the statement. */
type Columns = string | ((p: SqlParams) => string);

/**
 * Most sources read as ranges of their own, merged (a page's `pageSources`, the facets'
 * `sourceRanges`); more are one `= ANY`.
 */
export const MERGED_SOURCES_MAX = 8;

/**
 * The sources of a filter of nothing but a range, at most one exact type and 1 to
 * `MERGED_SOURCES_MAX` sources (a viewer's scope, `withinScope`, or the filter's), each once: the
 * matches of each lie in one range of `(ce_type, ce_source, occurred_at DESC)` or
 * `(ce_source, occurred_at DESC)`, in time order, so reading them one source after the other,
 * merged, reads no row but those returned. Undefined for any other filter: a word or a payload
 * value has a narrower index of its own, which the planner chooses best over `= ANY`.
 */
export function sourceRanges(filter: EventFilter): string[] | undefined {
  if (!onlyTimeTypesAndSources(filter) || (filter.types?.length ?? 0) > 1) return undefined;
  return distinctSources(filter);
}

/**
 * Whether `filter` holds nothing but a time range, exact types and sources: what the hourly rollup
 * answers (`rollupAnswers`) and what `sourceRanges` reads in index order.
 */
export function onlyTimeTypesAndSources(filter: EventFilter): boolean {
  return (
    filter.text === undefined &&
    filter.where === undefined &&
    !filter.payload?.length &&
    !filter.ids?.length &&
    filter.subject === undefined &&
    Object.keys(filter.extensions ?? {}).length === 0 &&
    filter.minSeverity === undefined &&
    !filter.ranks?.length &&
    !filter.hasExtensions?.length &&
    !Object.values(filter.exclude ?? {}).some((values) => values?.length) &&
    !filter.types?.some((t) => t.endsWith('*'))
  );
}

/** The filter's sources, each once (a branch per repeat would return its rows as often), when 1 to `MERGED_SOURCES_MAX`. */
function distinctSources(filter: EventFilter): string[] | undefined {
  const distinct = [...new Set(filter.sources ?? [])];
  return distinct.length > 0 && distinct.length <= MERGED_SOURCES_MAX ? distinct : undefined;
}

/**
 * The sources a page reads one by one, each in time order, merged: those of a filter of one exact
 * type and 2 to `MERGED_SOURCES_MAX` sources, without a condition that has an index of its own (a
 * word, a payload value, an id, a subject, an extension value), which the planner reads best as
 * one statement with `= ANY`. With `= ANY` beside the type alone, the B-tree
 * `(ce_type, ce_source, occurred_at DESC)` answers the sources' ranges one after the other, out of
 * time order, so the planner walks the type's index newest first instead and drops the other
 * sources' rows: a viewer of five sources out of fifty read five heap pages per row shown
 * (packages/store/DESIGN.md, "A path by source").
 */
function pageSources(filter: EventFilter): string[] | undefined {
  const { types, text, payload, ids, subject, extensions } = filter;
  if (!(types?.length === 1 && allTypesExact(types))) return undefined;
  const ownIndex =
    text !== undefined ||
    !!payload?.length ||
    !!ids?.length ||
    subject !== undefined ||
    Object.keys(extensions ?? {}).length > 0;
  if (ownIndex) return undefined;
  const sources = distinctSources(filter);
  return sources !== undefined && sources.length > 1 ? sources : undefined;
}

/** The statement of one page (`searchEvents`, with `columns` beyond the row's `searchEventDocuments`); tests EXPLAIN it. */
export function searchStatement(
  filter: EventFilter,
  page: PageRequest,
  columns: Columns = ROW_COLUMNS,
  options: WhereOptions = {},
): { text: string; values: unknown[] } {
  const p = new SqlParams();
  const older = readsOlder(page);
  const dir = older ? 'DESC' : 'ASC';
  const limit = page.limit + 1;
  const select = (f: EventFilter, extra = '') => {
    const selected = typeof columns === 'string' ? columns : columns(p);
    const where = whereOf(f, p, options);
    const key = page.before ?? page.after;
    if (key) where.push(keysetOf(key, older, p));
    return `SELECT ${selected}${extra} FROM events.cloud_event ${clause(where)}
    ORDER BY occurred_at ${dir}, event_uid ${dir} LIMIT ${p.add(limit)}`;
  };
  const sources = pageSources(filter);
  if (sources === undefined) return { text: select(filter), values: p.values };
  // `page_uid` carries the order's second key out of the branches.
  const branches = sources.map((source) =>
    select({ ...filter, sources: [source] }, ', event_uid AS page_uid'),
  );
  const text = mergedBySource(branches, `occurred_at ${dir}, page_uid ${dir}`, p.add(limit));
  return { text, values: p.values };
}

/**
 * One statement per source (`branches`, each ordered by `orderBy` and limited), merged in that
 * order: the merge reads each source's range only as far as the result reaches into it.
 */
export function mergedBySource(branches: string[], orderBy: string, limit: string): string {
  return `SELECT * FROM (${branches.map((b) => `(${b})`).join('\n    UNION ALL ')}) AS by_source
    ORDER BY ${orderBy} LIMIT ${limit}`;
}

/** One page of matches, in the page's order (newest first by default). */
export async function searchEvents(
  db: DatabasePool,
  given: EventFilter,
  page: PageRequest,
): Promise<EventPage> {
  return readPage<RawRow, EventRow>(db, given, page, ROW_COLUMNS, rowOf);
}

/** A match with the CloudEvent as stored (`raw`), as the JSON text PostgreSQL prints: one line. */
export interface EventDocumentRow extends EventRow {
  document: string;
}

/** One page of matches with their stored CloudEvents, newest first (the exports). */
export async function searchEventDocuments(
  db: DatabasePool,
  given: EventFilter,
  page: PageRequest,
): Promise<{ rows: EventDocumentRow[]; more: boolean }> {
  return readPage<RawRow & { document: string }, EventDocumentRow>(
    db,
    given,
    page,
    `${ROW_COLUMNS}, raw::text AS document`,
    (r) => ({ ...rowOf(r), document: r.document }),
  );
}

/** Longest text of one cell `searchEventCells` returns; a longer value is cut to it and flagged by one more character. */
export const CELL_CHARS = 300;
/** Largest stored CloudEvent `searchEventCells` returns whole (`document`); a larger one is only measured. */
export const DOCUMENT_BYTES = 16_384;

/** What a results table reads beyond the row's attributes. */
export interface CellRequest {
  /** Payload paths (each as its keys): the text of the value there (`data #>> path`). */
  dataPaths?: readonly (readonly string[])[];
  /** Extension attribute names: the text of each one's value. */
  extensions?: readonly string[];
  /** The payload as one line of JSON text. */
  summary?: boolean;
  /** The stored CloudEvent, when it is at most `DOCUMENT_BYTES`. */
  document?: boolean;
}

/**
 * A row with its cells: each text at most `CELL_CHARS + 1` characters (more than `CELL_CHARS`
 * means it was cut), null where the event has no such value.
 */
export interface CellRow extends EventRow {
  data: (string | null)[];
  extensions: (string | null)[];
  summary: string | null;
  /** The stored CloudEvent as JSON text, null when larger than `DOCUMENT_BYTES` (or not asked for). */
  document: string | null;
  /** The stored CloudEvent's size as JSON text, in bytes (0 when not asked for). */
  documentBytes: number;
}

/** One page of matches in the page's order, with the cells `cells` asks for (every value a bind parameter). */
export async function searchEventCells(
  db: DatabasePool,
  given: EventFilter,
  page: PageRequest,
  cells: CellRequest,
): Promise<EventPage & { rows: CellRow[] }> {
  type Raw = RawRow & {
    data_cells: (string | null)[] | null;
    extension_cells: (string | null)[] | null;
    summary: string | null;
    document: string | null;
    document_bytes: number | null;
  };
  const cut = `${CELL_CHARS + 1}`;
  const columns = (p: SqlParams) => {
    const data = (cells.dataPaths ?? []).map((path) => `left(data #>> ${p.add(path)}::text[], ${cut})`);
    const ext = (cells.extensions ?? []).map((name) => `left(extensions ->> ${p.add(name)}::text, ${cut})`);
    return [
      ROW_COLUMNS,
      `ARRAY[${data.join(', ')}]::text[] AS data_cells`,
      `ARRAY[${ext.join(', ')}]::text[] AS extension_cells`,
      cells.summary ? `left(data::text, ${cut}) AS summary` : 'NULL::text AS summary',
      cells.document
        ? `octet_length(raw::text) AS document_bytes, CASE WHEN octet_length(raw::text) <= ${DOCUMENT_BYTES} THEN raw::text END AS document`
        : '0 AS document_bytes, NULL::text AS document',
    ].join(', ');
  };
  return readPage<Raw, CellRow>(db, given, page, columns, (r) => ({
    ...rowOf(r),
    data: r.data_cells ?? [],
    extensions: r.extension_cells ?? [],
    summary: r.summary,
    document: r.document,
    documentBytes: r.document_bytes ?? 0,
  }));
}

async function readPage<Raw extends RawRow, Row>(
  db: DatabasePool,
  given: EventFilter,
  page: PageRequest,
  columns: Columns,
  toRow: (r: Raw) => Row,
): Promise<{ rows: Row[]; more: boolean }> {
  const filter = await readFilter(db, given);
  let statement = searchStatement(filter, page, columns);
  if (canAskTypesOfText(filter) && (await sortsEveryMatch(db, statement))) {
    statement = searchStatement(filter, page, columns, { typeLexemes: true });
  }
  const { rows } = await db.query<Raw>(statement.text, statement.values);
  const more = rows.length > page.limit;
  const kept = rows.slice(0, page.limit).map(toRow);
  const newestFirst = (page.order ?? 'newest') === 'newest';
  return { rows: readsOlder(page) === newestFirst ? kept : kept.reverse(), more };
}

/**
 * Whether the planner answers a statement of `ORDER BY ... LIMIT` by reading every match and
 * sorting them (a Sort under the Limit: bitmaps, a word rarer than the order's index can serve),
 * rather than along an index in time order, stopping at the limit. Only then may the text index
 * also be asked for the types (`typeLexemes`): the rows are the same and every match is read
 * anyway, while the planner, which then expects a fraction of them, would trade a short ordered
 * read for reading and sorting every match. One EXPLAIN, nothing read.
 */
export async function sortsEveryMatch(
  db: Queryable,
  statement: { text: string; values: unknown[] },
): Promise<boolean> {
  const { rows } = await db.query<{ 'QUERY PLAN': [{ Plan: PlanNode }] }>(
    `EXPLAIN (FORMAT JSON) ${statement.text}`,
    statement.values,
  );
  const root = rows[0]!['QUERY PLAN'][0].Plan;
  // The Limit's input, not its InitPlans: under row-level security the policy's sub-selects come
  // first in its list of children.
  const input = root.Plans?.find((child) => child['Parent Relationship'] === 'Outer');
  return root['Node Type'] === 'Limit' && input?.['Node Type'] === 'Sort';
}

interface PlanNode {
  'Node Type': string;
  'Parent Relationship'?: string;
  Plans?: PlanNode[];
}

/**
 * A search's total: exact up to `TOTAL_CAP`, else `capped`; `estimated` when the capped count ran
 * out of its budget and the planner's estimate stands in for it, or when it was scaled from a
 * block sample (facets with `samplePercent`).
 */
export interface EventTotal {
  total: number;
  capped: boolean;
  estimated: boolean;
}

/**
 * The planner's estimate of the matches (EXPLAIN, nothing read). Free next to a count: an exact
 * capped count of a common match pays one heap visit per match (GIN answers bitmaps, which cannot
 * be answered from the index alone), 10,001 random page reads over every partition.
 */
export async function estimateEvents(db: DatabasePool, given: EventFilter): Promise<number> {
  return estimateRows(db, await readFilter(db, given));
}

/** `estimateEvents` of a filter as given, its word parts filled already and its sources not narrowed. */
export async function estimateRows(db: DatabasePool, filter: EventFilter): Promise<number> {
  const p = new SqlParams();
  const where = whereOf(filter, p);
  const { rows } = await db.query<{ 'QUERY PLAN': [{ Plan: { 'Plan Rows': number } }] }>(
    `EXPLAIN (FORMAT JSON) SELECT 1 FROM events.cloud_event ${clause(where)}`,
    p.values,
  );
  return rows[0]!['QUERY PLAN'][0].Plan['Plan Rows'];
}

/** The statement of the capped count (`countEvents`), of a filter its reads prepared (`readFilter`); tests EXPLAIN it. */
export function countStatement(
  filter: EventFilter,
  options: WhereOptions = {},
): { text: string; values: unknown[] } {
  const p = new SqlParams();
  const where = whereOf(filter, p, options);
  const text = `SELECT count(*)::int AS n FROM
    (SELECT 1 FROM events.cloud_event ${clause(where)} LIMIT ${p.add(TOTAL_CAP + 1)}) AS capped`;
  return { text, values: p.values };
}

/**
 * Number of matches, counting at most `TOTAL_CAP + 1` rows; `capped` when there are more than the
 * cap. With `budgetMs` the count runs under that statement timeout instead of the session's (in
 * its own transaction, so the pooled session keeps its setting) and fails with SQLSTATE 57014 when
 * it runs out. `options` as `whereOf`'s.
 */
export async function countEvents(
  db: DatabasePool,
  given: EventFilter,
  budgetMs?: number,
  options: WhereOptions = {},
): Promise<{ total: number; capped: boolean }> {
  const { text, values } = countStatement(await readFilter(db, given), options);
  const count = (q: Queryable) => q.query<{ n: number }>(text, values);
  const { rows } =
    budgetMs === undefined
      ? await count(db)
      : await inPooledTransaction(db, count, { statementTimeoutMs: budgetMs });
  const n = rows[0]!.n;
  return { total: Math.min(n, TOTAL_CAP), capped: n > TOTAL_CAP };
}

/**
 * The total a page shows. Counted (`countEvents`, exact up to the cap) whenever the planner expects
 * fewer than `ESTIMATE_GATE` matches, under the session's statement timeout. When it expects more,
 * the capped count still runs, within `verifyBudgetMs`: it confirms `10,000+` (or finds the estimate
 * wrong and gives the exact number); only a count that runs out of that budget leaves the estimate,
 * `TOTAL_CAP` capped and `estimated`. So `10,000+` stands for fewer than 10,001 matches only when
 * the planner expected at least 20,000 and counting 10,001 of them took longer than the budget.
 */
export async function totalEvents(
  db: DatabasePool,
  filter: EventFilter,
  verifyBudgetMs: number = VERIFY_BUDGET_MS,
): Promise<EventTotal> {
  if ((await estimateEvents(db, filter)) < ESTIMATE_GATE) {
    // Expected under the cap, so every match is counted anyway: the text index may also be asked
    // for the types (`typeLexemes`), which only the planner's expectations could make worse.
    const typeLexemes = canAskTypesOfText(filter);
    return { ...(await countEvents(db, filter, undefined, { typeLexemes })), estimated: false };
  }
  try {
    return { ...(await countEvents(db, filter, verifyBudgetMs)), estimated: false };
  } catch (error) {
    if (!isStatementTimeout(error)) throw error;
    return { total: TOTAL_CAP, capped: true, estimated: true };
  }
}

export interface StoredEvent extends EventRow {
  /** The verbatim CloudEvent as stored. */
  raw: Record<string, unknown>;
  ingestedAt: Date;
  tags: string[];
  deviceId: string | null;
  /** Where the consumer read it: topic, partition, offset (null for rows stored before they were kept). */
  broker: { topic: string; partition: number; offset: string } | null;
}

/** The event with this uid, or undefined. No index on event_uid: the time bound (from the link) narrows it. */
export async function getEvent(
  db: DatabasePool,
  uid: string,
  occurredAt?: string,
): Promise<StoredEvent | undefined> {
  const p = new SqlParams();
  const where = [`event_uid = ${p.add(uid)}::uuid`];
  if (occurredAt) where.push(`occurred_at = ${p.add(occurredAt)}::timestamptz`);
  const { rows } = await db.query<
    RawRow & {
      raw: Record<string, unknown>;
      ingested_at: Date;
      tags: string[];
      device_id: string | null;
      broker_topic: string | null;
      broker_partition: number | null;
      broker_offset: string | null;
    }
  >(
    `SELECT ${ROW_COLUMNS}, raw, ingested_at, tags, device_id, broker_topic, broker_partition, broker_offset
       FROM events.cloud_event ${clause(where)} LIMIT 1`,
    p.values,
  );
  const r = rows[0];
  if (!r) return undefined;
  const broker =
    r.broker_topic === null || r.broker_partition === null || r.broker_offset === null
      ? null
      : { topic: r.broker_topic, partition: r.broker_partition, offset: r.broker_offset };
  return { ...rowOf(r), raw: r.raw, ingestedAt: r.ingested_at, tags: r.tags, deviceId: r.device_id, broker };
}

/**
 * A position in ingestion order (the live tail's): `ingested_at` and `occurred_at` as PostgreSQL
 * prints them, and the uid. The rows of one consumer transaction share `ingested_at`; among them,
 * event time.
 */
export interface IngestKey {
  ingestedAt: string;
  occurredAt: string;
  uid: string;
}

export interface TailRow extends EventRow {
  ingestKey: IngestKey;
  ingestedAt: Date;
}

/**
 * Matches ingested after `since`, in ingestion order (`ingested_at`, `occurred_at`, `event_uid`), oldest first:
 * the live tail. Not event time: an event dated ahead of now (ingest accepts 24 h of skew) would
 * hold a position by event time past every event stored after it. Read through the `ingested_at`
 * index of each partition, merged.
 */
export async function tailEvents(
  db: DatabasePool,
  given: EventFilter,
  since: IngestKey | undefined,
  limit: number,
): Promise<TailRow[]> {
  const filter = await readFilter(db, given);
  const p = new SqlParams();
  const where = whereOf(filter, p);
  if (since) {
    // The first column alone bounds the scan of the ingested_at index; the row comparison decides.
    const t = `${p.add(since.ingestedAt)}::timestamptz`;
    where.push(
      `ingested_at >= ${t} AND (ingested_at, occurred_at, event_uid) > (${t}, ${p.add(since.occurredAt)}::timestamptz, ${p.add(since.uid)}::uuid)`,
    );
  }
  const { rows } = await db.query<RawRow & { ingest_time: string; ingested_at: Date }>(
    `SELECT ${ROW_COLUMNS}, ingested_at::text AS ingest_time, ingested_at FROM events.cloud_event ${clause(where)}
     ORDER BY ingested_at ASC, occurred_at ASC, event_uid ASC LIMIT ${p.add(limit)}`,
    p.values,
  );
  return rows.map((r) => ({
    ...rowOf(r),
    ingestKey: { ingestedAt: r.ingest_time, occurredAt: r.key_time, uid: r.uid },
    ingestedAt: r.ingested_at,
  }));
}

/** The position of the match ingested last: where a tail starts. */
export async function newestIngestKey(db: DatabasePool, given: EventFilter): Promise<IngestKey | undefined> {
  const filter = await readFilter(db, given);
  const p = new SqlParams();
  const { rows } = await db.query<{ ingest_time: string; key_time: string; uid: string }>(
    `SELECT ingested_at::text AS ingest_time, occurred_at::text AS key_time, event_uid::text AS uid
       FROM events.cloud_event ${clause(whereOf(filter, p))}
      ORDER BY ingested_at DESC, occurred_at DESC, event_uid DESC LIMIT 1`,
    p.values,
  );
  const r = rows[0];
  return r && { ingestedAt: r.ingest_time, occurredAt: r.key_time, uid: r.uid };
}
