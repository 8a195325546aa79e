/**
 * The query bar: one line of the query language (`query-language.ts`, `query-terms.ts`) such as
 * `type:com.acme.order.* source:/orders/eu severity>=error data.amount>100 region=eu "exact phrase" -excluded`
 * or `(type:a OR type:b) NOT failed`, read into URL parameters, and the current parameters written
 * back as such a line. A line that cannot be read gives one message and the 1-based column it
 * points at. Nothing here builds SQL: the parameters go through `parseSearch` like the form's.
 *
 * A line that is only terms joined by AND (each maybe negated where the form can say it: text,
 * `-type:` …) becomes the form's own parameters, so both give the same URL. Any other line (OR,
 * parentheses, `NOT severity>=error`, …) becomes `query`, the line itself, which `parseSearch`
 * reads into one boolean condition. Either way:
 *
 * - `range:`, `from:`, `to:` set the time range of the whole search, so they stand outside OR,
 *   NOT and parentheses;
 * - a lookup that every match must satisfy (`id:x`, `events/{source},{id}` as ingest answered it,
 *   or a line that is one pasted id such as `seed-7` or a UUID) searches all time (`range=all`)
 *   unless the line names a time: an id is not looked for in the last 24 hours only.
 *
 * @example
 * readQueryBar('type:a.* severity>=error boiler'); // { params: type=a.*&severity=error&q=boiler }
 * readQueryBar('type:a OR type:b'); // { params: query=type:a OR type:b }
 */

import { splitCondition } from './filters.js';
import {
  conjuncts,
  MAX_QUERY_LENGTH,
  parseQuery,
  type QueryError,
  type QueryNode,
  type QueryTerm,
  writeQuery,
} from './query-language.js';
import { EXCLUDABLE, readTerm, type TermMeaning } from './query-terms.js';

/** The parameters a query bar replaces; the time range and page size stay as they were unless it names them. */
export const BAR_PARAMS = [
  'q',
  'id',
  'severity',
  'payload',
  'ext',
  'query',
  ...EXCLUDABLE,
  ...EXCLUDABLE.map((name) => `not_${name}`),
];
export const MAX_BAR_LENGTH = MAX_QUERY_LENGTH;
/** A word that is most likely an id someone pasted: a UUID, or letters and digits with a digit, 6 characters or more. */
const PASTED_ID = /^(?=[^"]*\d)[A-Za-z0-9][\w.:-]{5,127}$/;

export type BarResult = { params: URLSearchParams } | QueryError;

/** Every term of the tree read, in order; the first one that cannot be read is the error. */
function readTerms(tree: QueryNode, meanings: Map<QueryTerm, TermMeaning>): QueryError | undefined {
  if (tree.kind === 'term') {
    const m = readTerm(tree);
    if ('error' in m) return m;
    meanings.set(tree, m);
    return undefined;
  }
  for (const child of tree.kind === 'not' ? [tree.item] : tree.items) {
    const error = readTerms(child, meanings);
    if (error) return error;
  }
  return undefined;
}

/** The time terms of a tree, each of which must be a top-level conjunct. */
function timeTerms(tree: QueryNode, meanings: Map<QueryTerm, TermMeaning>): QueryTerm[] | QueryError {
  const top = new Set(conjuncts(tree));
  const found: QueryTerm[] = [];
  for (const [term, m] of meanings) {
    if (m.kind !== 'time') continue;
    if (!top.has(term))
      return {
        error: `${m.params[0]![0]}: the time range applies to the whole line; write it outside OR, NOT and parentheses`,
        column: term.column,
      };
    found.push(term);
  }
  return found;
}

/** A term, or NOT of a term, with its meaning and whether it is negated overall. */
function signedTerm(
  node: QueryNode,
  meanings: Map<QueryTerm, TermMeaning>,
): { meaning: TermMeaning; negated: boolean } | undefined {
  if (node.kind === 'term') return { meaning: meanings.get(node)!, negated: meanings.get(node)!.negated };
  if (node.kind === 'not') {
    const inner = signedTerm(node.item, meanings);
    return inner && { ...inner, negated: !inner.negated };
  }
  return undefined;
}

/** The form's parameters for conjuncts it can say, or undefined when one of them needs `query`. */
function formParams(
  items: QueryNode[],
  meanings: Map<QueryTerm, TermMeaning>,
): { params: [string, string][]; text: string[] } | undefined {
  const params: [string, string][] = [];
  const text: string[] = [];
  for (const item of items) {
    const signed = signedTerm(item, meanings);
    if (!signed) return undefined;
    const { meaning, negated } = signed;
    if (meaning.kind === 'text') text.push(negated ? `-${meaning.params[0]![1]}` : meaning.params[0]![1]);
    else if (!negated) params.push(...meaning.params);
    else if (meaning.kind === 'filter' && EXCLUDABLE.includes(meaning.params[0]![0]))
      params.push([`not_${meaning.params[0]![0]}`, meaning.params[0]![1]]);
    else return undefined;
  }
  return { params, text };
}

/** Reads a query-bar line into search parameters, or says where it cannot. */
export function readQueryBar(line: string): BarResult {
  if (line.length > MAX_BAR_LENGTH)
    return { error: `the line is longer than ${MAX_BAR_LENGTH} characters`, column: MAX_BAR_LENGTH + 1 };
  const tree = parseQuery(line);
  if ('error' in tree) return tree;
  const meanings = new Map<QueryTerm, TermMeaning>();
  const unreadable = readTerms(tree, meanings);
  if (unreadable) return unreadable;
  const times = timeTerms(tree, meanings);
  if (!Array.isArray(times)) return times;
  const params = new URLSearchParams();
  for (const term of times) {
    const [name, value] = meanings.get(term)!.params[0]!;
    params.set(name, value);
  }
  const rest = conjuncts(tree).filter((node) => !times.includes(node as QueryTerm));
  const only = rest.length === 1 ? signedTerm(rest[0]!, meanings) : undefined;
  const pasted =
    only?.meaning.kind === 'text' && !only.negated && PASTED_ID.test(only.meaning.params[0]![1])
      ? only.meaning.params[0]![1]
      : undefined;
  const lookup =
    pasted !== undefined ||
    rest.some((node) => {
      const signed = signedTerm(node, meanings);
      return signed?.meaning.kind === 'lookup' && !signed.negated;
    });
  const form = pasted === undefined ? formParams(rest, meanings) : undefined;
  if (form) {
    for (const [name, value] of form.params) {
      if (name === 'severity') params.set(name, value);
      else params.append(name, value);
    }
    if (form.text.length) params.set('q', form.text.join(' '));
  } else if (pasted !== undefined) {
    params.set('query', `id:${pasted} OR ${pasted}`);
  } else {
    params.set('query', writeQuery(rest.length === 1 ? rest[0]! : { kind: 'and', items: rest, column: 1 }));
  }
  if (lookup && times.length === 0) params.set('range', 'all');
  return { params };
}

/** Quotes a value that holds a space, a quote or nothing. */
export function quote(value: string): string {
  return value === '' || /[\s"]/.test(value) ? `"${value.replace(/(["\\])/g, '\\$1')}"` : value;
}

/** The query-bar line of the filters in `params` (what `readQueryBar` reads back into them). */
export function writeQueryBar(params: URLSearchParams): string {
  const parts: string[] = [];
  const all = (name: string) =>
    params
      .getAll(name)
      .map((v) => v.trim())
      .filter((v) => v !== '');
  for (const name of ['type', 'source', 'subject', 'id', 'level', 'has'])
    for (const v of all(name)) parts.push(`${name}:${quote(v)}`);
  for (const name of EXCLUDABLE) for (const v of all(`not_${name}`)) parts.push(`-${name}:${quote(v)}`);
  for (const v of all('severity')) parts.push(`severity>=${quote(v)}`);
  for (const v of all('payload')) {
    const m = splitCondition(v);
    if (m)
      parts.push(
        `data.${m.path}${m.op}${/[\s]/.test(m.value) && !/^".*"$/s.test(m.value) ? quote(m.value) : m.value}`,
      );
  }
  for (const v of all('ext')) {
    const eq = v.indexOf('=');
    if (eq > 0) parts.push(`${v.slice(0, eq).trim().toLowerCase()}=${quote(v.slice(eq + 1).trim())}`);
  }
  parts.push(...all('q'));
  for (const v of all('query')) {
    const tree = parseQuery(v);
    parts.push('error' in tree || tree.kind !== 'or' || parts.length === 0 ? v : `(${v})`);
  }
  return parts.join(' ');
}

/**
 * The URL a query-bar submission stands for: `current` without the filters the bar replaces (and
 * without `bar` and `cursor`), plus what the bar says. A bar that names a time replaces the other
 * form of it (`range` against `from`/`to`).
 */
export function mergeQueryBar(current: URLSearchParams, bar: URLSearchParams): URLSearchParams {
  const next = new URLSearchParams(current);
  for (const name of [...BAR_PARAMS, 'bar', 'cursor']) next.delete(name);
  if (bar.has('range')) for (const name of ['from', 'to']) next.delete(name);
  if (bar.has('from') || bar.has('to')) next.delete('range');
  for (const name of ['range', 'from', 'to']) if (bar.has(name)) next.delete(name);
  for (const [name, value] of bar) next.append(name, value);
  return next;
}
