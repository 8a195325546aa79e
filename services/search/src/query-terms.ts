/**
 * What one term of the query language means, as the URL parameters the filter form writes:
 *
 * | term | parameter |
 * |---|---|
 * | `type:x`, `source:x`, `subject:x`, `level:x`, `has:x` | that parameter (`type:x.*`, `subject:x/*` match a prefix) |
 * | `id:x`, `events/{source},{id}` (the name ingest answers) | `id` (and `source`): a lookup |
 * | `range:24h`, `from:…`, `to:…` | the time range |
 * | `severity>=error` or `severity:error` | `severity` (a minimum) |
 * | `data.path op value` (op `=` `!=` `<` `<=` `>` `>=`) | `payload` = `path op value` |
 * | `name=value` (name of a-z, 0-9) | `ext` = `name=value` |
 * | a word, `"exact phrase"` | `q` (full text) |
 *
 * A leading `-` negates a term. Comparisons are checked here, where the column is known:
 * `data.amount>abc` is refused (order against a number, a quoted text, a date or a boolean).
 */
import { parseEventName } from '@event-observatory/events';
import type { QueryError, QueryTerm } from './query-language.js';

/** Fields whose negation the URL holds as `not_<field>`. */
export const EXCLUDABLE = ['type', 'source', 'subject', 'level', 'has'];
const FIELDS = [...EXCLUDABLE, 'id', 'severity', 'range', 'from', 'to'];
const TIME_FIELDS = ['range', 'from', 'to'];
const PAYLOAD = /^data\.([^\s=!<>]+)(!=|<=|>=|=|<|>)(.*)$/s;
const EXTENSION = /^([a-z0-9]{1,20})(!=|<=|>=|=|<|>)(.*)$/s;
const SEVERITY = /^severity(>=|:)(.*)$/s;
const FIELD = /^([A-Za-z][\w.-]*):(.*)$/s;
/** Values an order comparison (`<` `<=` `>` `>=`) can mean: a number, quoted text, a date, a boolean. */
export const ORDERABLE =
  /^(-?\d+(\.\d+)?([eE][+-]?\d+)?|".*"|\d{4}-\d{2}-\d{2}([T ][\d:.]+)?(Z|[+-]\d{2}:?\d{2})?|true|false)$/s;

export interface TermMeaning {
  /** `filter`: a condition; `lookup`: an event's id (and source); `text`: full text; `time`: the range. */
  kind: 'filter' | 'lookup' | 'text' | 'time';
  /** Written with a leading `-` (or under `NOT`, which the caller applies). */
  negated: boolean;
  params: [string, string][];
}

/** `"a b"` → `a b` (escapes undone); anything else as it is. */
export function unquote(value: string): string {
  return /^".*"$/s.test(value) ? value.slice(1, -1).replace(/\\(.)/gs, '$1') : value;
}

/** Reads one term, or says where it cannot. */
export function readTerm(term: QueryTerm): TermMeaning | QueryError {
  const negated = term.text.length > 1 && term.text.startsWith('-');
  const t = negated ? term.text.slice(1) : term.text;
  const column = term.column + (negated ? 1 : 0);
  const meaning = (kind: TermMeaning['kind'], ...params: [string, string][]): TermMeaning => ({
    kind,
    negated,
    params,
  });
  if (t.startsWith('events/')) {
    const name = parseEventName(t);
    if (!name) return { error: 'expected events/{source},{id} as ingest answered it', column };
    return meaning('lookup', ['source', name.source], ['id', name.id]);
  }
  const payload = PAYLOAD.exec(t);
  if (payload) {
    const [, path, op, value] = payload as unknown as [string, string, string, string];
    if (value === '') return { error: `data.${path}${op}: a value must follow`, column: column + t.length };
    if (/^[<>]/.test(op) && !ORDERABLE.test(value))
      return {
        error: `data.${path}${op}${value}: ${op} compares numbers, dates, true/false or quoted text; "${value}" is none of them (quote it to compare text)`,
        column: column + t.length - value.length,
      };
    return meaning('filter', ['payload', `${path} ${op} ${value}`]);
  }
  const severity = SEVERITY.exec(t);
  if (severity) {
    const value = unquote(severity[2]!);
    if (value === '') return { error: 'severity: a name must follow, e.g. severity>=error', column };
    return meaning('filter', ['severity', value]);
  }
  const extension = EXTENSION.exec(t);
  if (extension) {
    const [, name, op, value] = extension as unknown as [string, string, string, string];
    if (op !== '=')
      return {
        error: `${name}${op}: extensions compare with = only (data.${name}${op}… compares a payload value)`,
        column: column + name.length,
      };
    return meaning('filter', ['ext', `${name}=${unquote(value)}`]);
  }
  const field = FIELD.exec(t);
  if (field) {
    const [, name, raw] = field as unknown as [string, string, string];
    if (!FIELDS.includes(name))
      return {
        error: `unknown field "${name}" (expected ${FIELDS.join(', ')}, data.path or quote the text)`,
        column,
      };
    const value = unquote(raw);
    if (value === '')
      return { error: `${name}: a value must follow the colon`, column: column + name.length + 1 };
    if (TIME_FIELDS.includes(name)) {
      if (negated) return { error: `-${name}: a time range cannot be negated`, column: term.column };
      return meaning('time', [name, value]);
    }
    return meaning(name === 'id' ? 'lookup' : 'filter', [name, value]);
  }
  return meaning('text', ['q', t]);
}
