/**
 * The search page's URL: every filter is a query parameter, so a search can be bookmarked and
 * shared. Parsing checks every value and collects one message per bad one; nothing here builds SQL.
 *
 * | parameter | meaning |
 * |---|---|
 * | `range` | relative time range ending now: `15m`, `1h`, `24h` (the default), `7d`, `30d`, or `all` |
 * | `from`, `to` | absolute time range on the event's own time (either one replaces `range`); ISO 8601 (`2026-11-24T08:00Z`), a time without offset is UTC |
 * | `q` | free text (PostgreSQL web-search syntax: words, "quoted phrase", or, -word); a plain word also finds the types and sources it is a part of |
 * | `query` | a query-language line (`query-language.ts`): terms with AND, OR, NOT and parentheses, as the query bar writes it |
 * | `payload` | repeated; `path op value`, e.g. `device.id = boiler-7`, `temperature >= 30` |
 * | `type`, `source` | repeated; exact CloudEvents attribute (a type ending in `*` matches a prefix) |
 * | `id` | repeated; CloudEvents `id` (with `source`: one event's identity) |
 * | `subject` | CloudEvents subject: exact, or ending in `*` a prefix |
 * | `ext` | repeated; `name=value` on a CloudEvents extension attribute |
 * | `severity` | minimum severity name (`warning`, `error`, ...) |
 * | `level` | repeated; exact severity level, `unknown` for events without a known severity |
 * | `has` | repeated; extension name every match carries |
 * | `not_type`, `not_source`, `not_subject`, `not_level`, `not_has` | repeated; values excluded (`not_level=unknown`: events without a known severity) |
 * | `off_<filter>` | a filter switched off (`off_type=a`): kept in the URL, shown as a disabled pill, ignored by the search |
 * | `more` | the facet listing more values: `types`, `sources`, `subjects`, `severities`, `extensions` |
 * | `limit` | rows per page, 1..250 (default 50) |
 * | `sort` | `newest` (the default) or `oldest` first; a cursor belongs to one of them |
 * | `col` | repeated; the results table's columns (`columns.ts`) |
 * | `tz` | times shown in `utc` (the default) or the `browser`'s time zone |
 * | `refresh` | the page reloads its results every `10s`, `30s`, `1m`, `5m`, or not (`off`, the default) |
 * | `cursor` | opaque position, from the page links |
 *
 * @example
 * const parsed = parseSearch(new URL('http://x/events?q=boiler&severity=error').searchParams);
 * parsed.shape; // 'text+attrs'
 */
import { plausibleTimeProblem } from '@event-observatory/events';
import {
  type EventFilter,
  type EventOrder,
  FACET_NAMES,
  type FacetName,
  type FilterExpression,
  type PayloadCondition,
  type PayloadOperator,
  type ReceiptQuery,
  SEVERITY,
  SEVERITY_ALIASES,
} from '@event-observatory/store';
import { type Column, parseColumns } from './columns.js';
import { MAX_QUERY_LENGTH, parseQuery, type QueryNode } from './query-language.js';
import { ORDERABLE, readTerm } from './query-terms.js';
import { isRefresh, REFRESH, type RefreshName } from './time-toolbar.js';

export const DEFAULT_LIMIT = 50;
export const MAX_LIMIT = 250;
const MAX_TEXT = 500;
/** Longest value of any parameter: far above a real source, type or payload condition, far below a slow parse. */
export const MAX_VALUE_LENGTH = 1_000;
const MAX_VALUES = 20;
const MAX_PATH_DEPTH = 16;

export type Shape = string;

/** The `level` value of events without a known severity. */
export const UNKNOWN_LEVEL = 'unknown';

/** The 16 values of the `shape` tag: time, text, payload, attrs joined by `+`, or `none`. */
export const SHAPES: readonly Shape[] = Array.from({ length: 16 }, (_, bits) => shapeOf(bits));

function shapeOf(bits: number): Shape {
  const parts = ['time', 'text', 'payload', 'attrs'].filter((_, i) => bits & (1 << i));
  return parts.length ? parts.join('+') : 'none';
}

/** The shape of a filter: which of the four decisions it uses (a `where` its terms'). Severity counts as an attribute. */
export function filterShape(f: EventFilter): Shape {
  return shapeOf(shapeBits(f));
}

function shapeBits(f: EventFilter): number {
  const time = f.from !== undefined || f.to !== undefined;
  const text = f.text !== undefined;
  const payload = (f.payload?.length ?? 0) > 0;
  const attrs =
    (f.types?.length ?? 0) > 0 ||
    (f.sources?.length ?? 0) > 0 ||
    (f.ids?.length ?? 0) > 0 ||
    f.subject !== undefined ||
    Object.keys(f.extensions ?? {}).length > 0 ||
    f.minSeverity !== undefined ||
    (f.ranks?.length ?? 0) > 0 ||
    (f.hasExtensions?.length ?? 0) > 0 ||
    f.exclude !== undefined;
  const own = (time ? 1 : 0) | (text ? 2 : 0) | (payload ? 4 : 0) | (attrs ? 8 : 0);
  return f.where ? own | expressionBits(f.where) : own;
}

function expressionBits(e: FilterExpression): number {
  if ('match' in e) return shapeBits(e.match);
  if ('not' in e) return expressionBits(e.not);
  return ('all' in e ? e.all : e.any).reduce((bits, item) => bits | expressionBits(item), 0);
}

/** The relative ranges of the time picker and their length; `all` puts no bound on the time. */
export const RANGES = {
  '15m': { label: 'Last 15 minutes', ms: 15 * 60_000 },
  '1h': { label: 'Last hour', ms: 3_600_000 },
  '24h': { label: 'Last 24 hours', ms: 86_400_000 },
  '7d': { label: 'Last 7 days', ms: 7 * 86_400_000 },
  '30d': { label: 'Last 30 days', ms: 30 * 86_400_000 },
  all: { label: 'All time', ms: undefined },
} as const;
export type RangeName = keyof typeof RANGES;
/** Without `range`, `from` or `to`, a search reads the last 24 hours: one or two partitions, not all. */
export const DEFAULT_RANGE: RangeName = '24h';

export function isRange(raw: string): raw is RangeName {
  return Object.hasOwn(RANGES, raw);
}

export interface ParsedSearch {
  filter: EventFilter;
  /** The relative range in force, or undefined when `from`/`to` give an absolute one. */
  range: RangeName | undefined;
  /** The moment the relative range was resolved against. */
  now: Date;
  shape: Shape;
  limit: number;
  /** The order of the rows (`sort`). */
  sort: EventOrder;
  /** The results table's columns (`col`), the time first. */
  columns: Column[];
  /** Where times are shown: in UTC, or rewritten to the browser's zone by the page script (`tz`). */
  timeZone: TimeZone;
  /** How often the page reloads its results (`refresh`); `time-toolbar.ts` says when it may. */
  refresh: RefreshName;
  cursor: string | undefined;
  /** The facet listing more values (`more`). */
  more: FacetName | undefined;
  /** One line per parameter that could not be used; the page answers 400 with them. */
  problems: string[];
}

const OPERATORS: readonly PayloadOperator[] = ['!=', '<=', '>=', '=', '<', '>'];
/** Matched against trimmed text, so no part of it backtracks over spaces: linear time. */
const CONDITION = /^([^\s=!<>]+)\s*(!=|<=|>=|=|<|>)\s*(.*)$/s;

/** `path op value` split apart (the text trimmed), or undefined when it is not one. */
export function splitCondition(raw: string): { path: string; op: string; value: string } | undefined {
  const m = CONDITION.exec(raw.trim());
  return m ? { path: m[1]!, op: m[2]!, value: m[3]! } : undefined;
}

/** `device.id = boiler-7`: a dotted path, an operator, a JSON scalar or bare text. */
export function parsePayloadCondition(raw: string): PayloadCondition | string {
  const m = splitCondition(raw);
  if (!m)
    return `payload "${raw}": expected path, operator (= != < <= > >=) and value, e.g. temperature >= 30`;
  const { path: dotted, op, value: text } = m as { path: string; op: PayloadOperator; value: string };
  const path = dotted.split('.');
  if (path.some((k) => k === '') || path.length > MAX_PATH_DEPTH) {
    return `payload "${raw}": the path must be names separated by single dots`;
  }
  if (!OPERATORS.includes(op)) return `payload "${raw}": unknown operator`;
  // Only scalars are read as JSON (a leading `{` or `[` stays text), so containment stays one level deep.
  let value: unknown = text;
  if (/^(-?\d|true$|false$|null$|")/.test(text)) {
    try {
      value = JSON.parse(text);
    } catch {
      value = text;
    }
  }
  if (value !== null && typeof value === 'object')
    return `payload "${raw}": compare with a number, text, true, false or null`;
  if (typeof value === 'string' && value.includes('\u0000'))
    return `payload "${raw}": text values must not contain the NUL character`;
  if (value === null && op !== '=' && op !== '!=') return `payload "${raw}": null compares with = or != only`;
  if (/^[<>]/.test(op) && !ORDERABLE.test(text))
    return `payload "${raw}": ${op} compares numbers, dates, true/false or quoted text; quote "${text}" to compare text`;
  return { path, op, value: value as PayloadCondition['value'] };
}

/** The time with `Z` added when it names no offset (and `T00:00` when it is a date only). */
function withUtc(raw: string): string {
  return /(Z|[+-]\d{2}:?\d{2})$/i.test(raw) ? raw : /T/.test(raw) ? `${raw}Z` : `${raw}T00:00Z`;
}

/** A time from `from`/`to`: ISO 8601; no offset means UTC (what a datetime-local input sends). */
export function parseTime(raw: string): Date | undefined {
  const withZone = withUtc(raw);
  if (!/^\d{4}-\d{2}-\d{2}(T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?)?(Z|[+-]\d{2}:?\d{2})$/i.test(withZone))
    return undefined;
  const d = new Date(withZone);
  return Number.isNaN(d.getTime()) ? undefined : d;
}

/** What a time outside the plausible window is told (`plausibleTimeProblem` of the events package). */
const WINDOW_HINT = 'times run from 1970-01-01 to 7 days after now';

/**
 * One problem per parameter no parse should see: a value longer than `MAX_VALUE_LENGTH` (a
 * `query` line: `MAX_QUERY_LENGTH`; not echoed back), or one holding U+0000 (PostgreSQL text cannot: the query would fail in the store,
 * not in the filter).
 */
function unusableValues(params: URLSearchParams): string[] {
  const problems = new Map<string, string>();
  for (const [name, value] of params) {
    const key = name.length > 40 ? `${name.slice(0, 40)}…` : name;
    const max = name === 'query' ? MAX_QUERY_LENGTH : MAX_VALUE_LENGTH;
    if (value.length > max) problems.set(key, `${key}: at most ${max} characters`);
    else if (value.includes('\u0000') && !problems.has(key))
      problems.set(key, `${key}: must not contain the NUL character`);
  }
  return [...problems.values()];
}

export function parseSearch(params: URLSearchParams, now: Date = new Date()): ParsedSearch {
  const problems = unusableValues(params);
  if (problems.length > 0) {
    return {
      filter: {},
      range: undefined,
      now,
      shape: 'none',
      limit: DEFAULT_LIMIT,
      sort: 'newest',
      columns: parseColumns([], []),
      timeZone: 'utc',
      refresh: 'off',
      cursor: undefined,
      more: undefined,
      problems,
    };
  }
  const { one, many } = readers(params, problems);
  const filter: EventFilter = {};
  for (const bound of ['from', 'to'] as const) {
    const raw = one(bound);
    if (raw === undefined) continue;
    const d = parseTime(raw);
    const outside = d && plausibleTimeProblem(d.getTime(), now.getTime());
    if (!d) problems.push(`${bound}: "${raw}" is not a date and time such as 2026-11-24T08:00Z`);
    else if (outside) problems.push(`${bound}: "${raw}" is ${outside}; ${WINDOW_HINT}`);
    else filter[bound] = d;
  }
  if (filter.from && filter.to && filter.from >= filter.to) problems.push('from: must be before to');
  // An absolute bound (even a bad one) replaces the relative range.
  let range: RangeName | undefined;
  if (one('from') === undefined && one('to') === undefined) {
    const raw = one('range') ?? DEFAULT_RANGE;
    if (!isRange(raw)) problems.push(`range: expected one of ${Object.keys(RANGES).join(', ')}`);
    else {
      range = raw;
      const ms = RANGES[raw].ms;
      // Bounded at now too: an open end would plan every partition ahead of now and the default one.
      if (ms !== undefined) Object.assign(filter, { from: new Date(now.getTime() - ms), to: now });
    }
  }
  Object.assign(filter, readConditions(params, problems));
  const query = one('query');
  if (query !== undefined) {
    const where = expressionOf(query, problems);
    if (where) filter.where = where;
  }
  let limit = DEFAULT_LIMIT;
  const rawLimit = one('limit');
  if (rawLimit !== undefined) {
    const n = /^\d{1,6}$/.test(rawLimit) ? Number(rawLimit) : Number.NaN;
    if (!(n >= 1 && n <= MAX_LIMIT)) problems.push(`limit: expected a whole number from 1 to ${MAX_LIMIT}`);
    else limit = n;
  }
  const more = one('more');
  if (more !== undefined && !isFacetName(more))
    problems.push(`more: expected one of ${FACET_NAMES.join(', ')}`);
  const sort = one('sort') ?? 'newest';
  if (!isOrder(sort)) problems.push(`sort: expected one of ${ORDERS.join(', ')}`);
  const columns = parseColumns(many('col'), problems);
  const timeZone = one('tz') ?? 'utc';
  if (!isTimeZone(timeZone)) problems.push(`tz: expected one of ${TIME_ZONES.join(', ')}`);
  const refresh = one('refresh') ?? 'off';
  if (!isRefresh(refresh)) problems.push(`refresh: expected one of ${Object.keys(REFRESH).join(', ')}`);
  return {
    filter,
    range,
    now,
    shape: filterShape(filter),
    limit,
    sort: isOrder(sort) ? sort : 'newest',
    columns,
    timeZone: isTimeZone(timeZone) ? timeZone : 'utc',
    refresh: isRefresh(refresh) ? refresh : 'off',
    cursor: one('cursor'),
    more: more !== undefined && isFacetName(more) ? more : undefined,
    problems,
  };
}

/** The values of `sort`, the default first. */
export const ORDERS: readonly EventOrder[] = ['newest', 'oldest'];

function isOrder(raw: string): raw is EventOrder {
  return (ORDERS as readonly string[]).includes(raw);
}

/** The values of `tz`, the default first: the server writes UTC; `browser` has the page script rewrite it. */
export const TIME_ZONES = ['utc', 'browser'] as const;
export type TimeZone = (typeof TIME_ZONES)[number];

function isTimeZone(raw: string): raw is TimeZone {
  return (TIME_ZONES as readonly string[]).includes(raw);
}

function isFacetName(raw: string): raw is FacetName {
  return (FACET_NAMES as readonly string[]).includes(raw);
}

/** `one(name)`: the trimmed value, if not empty; `many(name)`: the non-empty values, at most `MAX_VALUES`. */
function readers(params: URLSearchParams, problems: string[]) {
  const one = (name: string): string | undefined => {
    const v = params.get(name)?.trim();
    return v === undefined || v === '' ? undefined : v;
  };
  const many = (name: string): string[] => {
    const values = params
      .getAll(name)
      .map((v) => v.trim())
      .filter((v) => v !== '');
    if (values.length > MAX_VALUES) problems.push(`${name}: at most ${MAX_VALUES} values`);
    return values.slice(0, MAX_VALUES);
  };
  return { one, many };
}

/** Everything of a filter but its time: text, payload, attributes, severity, exclusions. */
function readConditions(params: URLSearchParams, problems: string[]): EventFilter {
  const { one, many } = readers(params, problems);
  const filter: EventFilter = {};
  const text = one('q');
  if (text !== undefined) {
    if (text.length > MAX_TEXT) problems.push(`q: at most ${MAX_TEXT} characters`);
    else filter.text = text;
  }
  const payload: PayloadCondition[] = [];
  for (const raw of many('payload')) {
    const c = parsePayloadCondition(raw);
    if (typeof c === 'string') problems.push(c);
    else payload.push(c);
  }
  if (payload.length) filter.payload = payload;
  const subject = one('subject');
  if (subject !== undefined) filter.subject = subject;
  const extensions: Record<string, string> = {};
  for (const raw of many('ext')) {
    const eq = raw.indexOf('=');
    const name = raw.slice(0, eq).trim().toLowerCase();
    // CloudEvents attribute names: lower-case letters and digits.
    if (eq < 1 || !/^[a-z0-9]{1,20}$/.test(name))
      problems.push(`ext "${raw}": expected name=value, name of a-z and 0-9`);
    else extensions[name] = raw.slice(eq + 1).trim();
  }
  if (Object.keys(extensions).length) filter.extensions = extensions;
  // Own keys only: `constructor` or `__proto__` must not reach the query as a "rank".
  const rankOf = (name: string) => (raw: string) => {
    const key = raw.toLowerCase();
    if (Object.hasOwn(SEVERITY_ALIASES, key)) return [SEVERITY_ALIASES[key]!];
    // An exact level can be "none known"; a minimum cannot.
    if (key === UNKNOWN_LEVEL && name !== 'severity') return [null];
    const names = [...Object.keys(SEVERITY), ...(name === 'severity' ? [] : [UNKNOWN_LEVEL])];
    problems.push(`${name}: expected one of ${names.join(', ')}`);
    return [];
  };
  const severity = one('severity');
  const [min] = severity === undefined ? [] : rankOf('severity')(severity);
  if (typeof min === 'number') filter.minSeverity = min;
  const extName = (name: string) => (raw: string) => {
    const lower = raw.toLowerCase();
    if (/^[a-z0-9]{1,20}$/.test(lower)) return [lower];
    problems.push(`${name} "${raw}": an extension name is a-z and 0-9`);
    return [];
  };
  const exclude: NonNullable<EventFilter['exclude']> = {};
  type Reader = (name: string) => (raw: string) => unknown[];
  // Repeatable parameters: where each non-empty list goes, and how its values are read.
  const lists: [string, object, string, Reader?][] = [
    ['type', filter, 'types'],
    ['source', filter, 'sources'],
    ['id', filter, 'ids'],
    ['level', filter, 'ranks', rankOf],
    ['has', filter, 'hasExtensions', extName],
    ['not_type', exclude, 'types'],
    ['not_source', exclude, 'sources'],
    ['not_subject', exclude, 'subjects'],
    ['not_level', exclude, 'ranks', rankOf],
    ['not_has', exclude, 'extensions', extName],
  ];
  for (const [param, target, key, read] of lists) {
    const values = read ? many(param).flatMap(read(param)) : many(param);
    if (values.length) (target as Record<string, unknown>)[key] = values;
  }
  if (Object.keys(exclude).length) filter.exclude = exclude;
  return filter;
}

/**
 * The condition of a `query` line: its tree with each term read as the parameters it stands for
 * (`query-terms.ts`), those read as a filter. Problems name the column; time terms have no place
 * in it (the query bar takes them out into `range`, `from`, `to`).
 */
function expressionOf(line: string, problems: string[]): FilterExpression | undefined {
  const tree = parseQuery(line);
  if ('error' in tree) {
    problems.push(`query: column ${tree.column}: ${tree.error}`);
    return undefined;
  }
  const before = problems.length;
  const walk = (node: QueryNode): FilterExpression => {
    if (node.kind === 'not') return { not: walk(node.item) };
    if (node.kind !== 'term')
      return node.kind === 'and' ? { all: node.items.map(walk) } : { any: node.items.map(walk) };
    const term = readTerm(node);
    if ('error' in term) problems.push(`query: column ${term.column}: ${term.error}`);
    else if (term.kind === 'time')
      problems.push(`query: column ${node.column}: the time range belongs in range, from or to`);
    else {
      const termProblems: string[] = [];
      const match = readConditions(new URLSearchParams(term.params), termProblems);
      for (const p of termProblems) problems.push(`query: column ${node.column}: ${p}`);
      return term.negated ? { not: { match } } : { match };
    }
    return { all: [] };
  };
  const where = walk(tree);
  return problems.length > before ? undefined : where;
}

/** The parameters of the table above that choose events (not `limit`, `cursor`): what an event's links carry. */
export const FILTER_PARAMS: readonly string[] = [
  'range',
  'from',
  'to',
  'q',
  'query',
  'payload',
  'type',
  'source',
  'id',
  'subject',
  'ext',
  'severity',
  'level',
  'has',
  'not_type',
  'not_source',
  'not_subject',
  'not_level',
  'not_has',
];

/** Prefix of a switched-off filter: `off_type=a` is `type=a`, kept in the URL but ignored (filter-pills.ts). */
export const OFF_PREFIX = 'off_';

/** Whether `name` is a switched-off filter parameter. */
export function isDisabledFilter(name: string): boolean {
  return name.startsWith(OFF_PREFIX) && FILTER_PARAMS.includes(name.slice(OFF_PREFIX.length));
}

/**
 * The parameters of how the results table shows the events (not which) and how often it reloads
 * them: kept by every form and link of the page.
 */
export const TABLE_PARAMS: readonly string[] = ['sort', 'col', 'tz', 'refresh'];

/**
 * The filters of a search's URL (the search an event was opened from, a saved search), switched-off
 * ones included, and how its table showed them (`TABLE_PARAMS`, so a way back to the search keeps
 * them), nothing else it carried.
 */
export function searchFilters(params: URLSearchParams): URLSearchParams {
  return new URLSearchParams(
    [...params].filter(
      ([name]) => FILTER_PARAMS.includes(name) || isDisabledFilter(name) || TABLE_PARAMS.includes(name),
    ),
  );
}

/** The query string of `params` with `cursor` replaced (or removed when undefined). */
export function withCursor(params: URLSearchParams, cursor: string | undefined): string {
  const next = new URLSearchParams(params);
  next.delete('cursor');
  if (cursor !== undefined) next.set('cursor', cursor);
  const s = next.toString();
  return s ? `?${s}` : '';
}

/**
 * The same search with its relative range written as absolute `from`/`to` (to = `now`): a shared
 * link that shows the same events tomorrow. The cursor is dropped (it belongs to the first link).
 */
export function absoluteQuery(params: URLSearchParams, parsed: ParsedSearch): string {
  const next = new URLSearchParams(params);
  next.delete('cursor');
  if (parsed.range !== undefined) {
    next.delete('range');
    if (parsed.filter.from) next.set('from', parsed.filter.from.toISOString());
    next.set('to', parsed.now.toISOString());
  }
  return next.toString();
}

/**
 * The same search over a wider time: the next larger quick range (`15m` → `1h` → … → `all`), or all
 * time for an absolute `from`/`to`; undefined when it already reads all time. `label` names the
 * range ("the last 24 hours", "all time"). The cursor is dropped.
 */
export function widerRange(
  params: URLSearchParams,
  parsed: ParsedSearch,
): { params: URLSearchParams; label: string } | undefined {
  const names = Object.keys(RANGES) as RangeName[];
  const next = parsed.range === undefined ? 'all' : names[names.indexOf(parsed.range) + 1];
  if (next === undefined) return undefined;
  const wider = new URLSearchParams(params);
  for (const name of ['cursor', 'from', 'to']) wider.delete(name);
  wider.set('range', next);
  return { params: wider, label: RANGES[next].label.replace(/^Last/, 'the last').replace(/^All/, 'all') };
}

/**
 * The receipt view's parameters: `topic`, `partition`, `offset` as ingest answered them, `time`
 * optional (ingest's microseconds kept).
 */
export function parseReceipt(params: URLSearchParams): ReceiptQuery | { problems: string[] } {
  const problems: string[] = [];
  const topic = params.get('topic')?.trim() ?? '';
  if (!/^[A-Za-z0-9._-]{1,249}$/.test(topic))
    problems.push('topic: a Kafka topic name (letters, digits, . _ -)');
  const partition = params.get('partition')?.trim() ?? '';
  if (!/^\d{1,9}$/.test(partition)) problems.push('partition: a whole number');
  const offset = params.get('offset')?.trim() ?? '';
  if (!/^\d{1,19}$/.test(offset)) problems.push('offset: a whole number');
  const rawTime = params.get('time')?.trim();
  const time = rawTime && rawTime.length <= MAX_VALUE_LENGTH ? parseTime(rawTime) : undefined;
  const outside = time && plausibleTimeProblem(time.getTime(), Date.now());
  if (rawTime && !time) problems.push('time: not a date and time such as 2026-11-24T08:00Z');
  else if (outside) problems.push(`time: ${outside}; ${WINDOW_HINT}`);
  if (problems.length) return { problems };
  // The text itself goes to the store, which compares it at its own precision (a Date keeps milliseconds only).
  return {
    topic,
    partition: Number(partition),
    offset,
    ...(time && rawTime ? { time: withUtc(rawTime) } : {}),
  };
}
