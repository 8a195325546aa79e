/**
 * Autocomplete of the query bar: what the line's last term can become, as whole lines (so a
 * `<datalist>` offers them as the input's value). A field name while the term is a bare word, a
 * severity after `severity>=` or `level:`, a range after `range:`, and after `type:` or `source:`
 * the names of the viewer's events (`suggestNames` of the store, under the read scope). Bounded:
 * a line of at most `MAX_SUGGEST_LINE` characters, at most `NAME_SUGGESTION_LIMIT` suggestions,
 * the catalog read within `SUGGEST_TIMEOUT_MS` (the route's deadline).
 */
import { NAME_SUGGESTION_LIMIT, type Queryable, SEVERITY, suggestNames } from '@event-observatory/store';
import { RANGES } from './filters.js';
import { quote } from './query-bar.js';

/** Longest line the route completes (a longer one answers 400). */
export const MAX_SUGGEST_LINE = 500;
/** Deadline of one suggestion's read: a suggestion late by more is of no use to someone typing. */
export const SUGGEST_TIMEOUT_MS = 1_000;

/** The terms a bare word can start, in the order offered. */
const FIELDS = [
  'type:',
  'source:',
  'subject:',
  'id:',
  'level:',
  'has:',
  'severity>=',
  'range:',
  'from:',
  'to:',
  'data.',
] as const;

/** The line up to its last term, and that term (after the last space; a leading `-` or `(` kept with the head). */
function lastTerm(line: string): { head: string; term: string } {
  const cut = line.search(/[^\s]*$/);
  const m = /^[-(]*/.exec(line.slice(cut))![0];
  return { head: line.slice(0, cut + m.length), term: line.slice(cut + m.length) };
}

const startingWith = (values: readonly string[], prefix: string) =>
  values.filter((v) => v.toLowerCase().startsWith(prefix.toLowerCase()) && v !== prefix);

/** The completions of `line`'s last term as whole lines; the catalog read through `db`. */
export async function suggest(db: Queryable, line: string): Promise<string[]> {
  const { head, term } = lastTerm(line);
  if (term === '') return [];
  const named = /^(type|source):(.*)$/.exec(term);
  let completions: string[];
  if (named) {
    const field = named[1] as 'type' | 'source';
    const names = await suggestNames(db, field, named[2]!.replace(/^"/, ''));
    completions = names.map((name) => `${field}:${quote(name)}`);
  } else {
    const valued = /^(level:|severity>=)(.*)$/.exec(term) ?? /^(range:)(.*)$/.exec(term);
    if (valued) {
      const values = valued[1] === 'range:' ? Object.keys(RANGES) : Object.keys(SEVERITY);
      completions = startingWith(values, valued[2]!).map((v) => `${valued[1]}${v}`);
    } else completions = startingWith(FIELDS, term);
  }
  return completions.slice(0, NAME_SUGGESTION_LIMIT).map((c) => `${head}${c}`);
}

/**
 * The suggestions the page renders into the bar's `<datalist>` (no script needed): the current line
 * narrowed by each listed type and source of its facets, names of events the viewer saw already.
 */
export function facetSuggestions(
  line: string,
  facets: { types: { value: string }[]; sources: { value: string }[] },
): string[] {
  const head = line.trim() === '' ? '' : `${line.trim()} `;
  const terms = [
    ...facets.types.map((f) => `type:${quote(f.value)}`),
    ...facets.sources.map((f) => `source:${quote(f.value)}`),
  ].filter((term) => !line.includes(term));
  return terms.slice(0, NAME_SUGGESTION_LIMIT).map((term) => `${head}${term}`);
}
