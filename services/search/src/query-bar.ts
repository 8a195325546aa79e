/**
 * The query bar: one line such as
 * `type:com.acme.order.* source:/orders/eu severity>=error data.amount>100 region=eu "exact phrase" -excluded`
 * read into the same URL parameters the filter form writes (so both give the same URL), and the
 * current parameters written back as such a line. A line that cannot be read gives one message
 * and the 1-based column it points at. Nothing here builds SQL: the parameters go through
 * `parseSearch` like the form's.
 *
 * | term | parameter |
 * |---|---|
 * | `type:x`, `source:x`, `subject:x`, `id:x`, `range:24h`, `from:…`, `to:…` | the parameter of that name (`type:x.*` matches a prefix) |
 * | `severity>=error` or `severity:error` | `severity` (a minimum) |
 * | `level:warn`, `has:region` | an exact severity level; an extension name that must be present |
 * | `-type:x`, `-source:x`, `-subject:x`, `-level:x`, `-has:x` | `not_type` … (excluded values) |
 * | `data.path op value` (op `=` `!=` `<` `<=` `>` `>=`) | `payload` = `path op value` |
 * | `name=value` (name of a-z, 0-9) | `ext` = `name=value` |
 * | `events/{source},{id}` (the name ingest answers) | `source` and `id`, with `range=all` unless the line names a time |
 * | words, `"exact phrase"`, `-word`, `or` | `q` (full text) |
 *
 * @example
 * readQueryBar('type:a.* severity>=error boiler'); // { params: type=a.*&severity=error&q=boiler }
 */

import { parseEventName } from '@event-observatory/events';
import { splitCondition } from './filters.js';

/** The parameters a query bar replaces; the time range and page size stay as they were unless it names them. */
/** Fields a leading `-` excludes (`not_<field>` in the URL). */
const EXCLUDABLE = ['type', 'source', 'subject', 'level', 'has'];
export const BAR_PARAMS = [
  'q',
  'id',
  'severity',
  'payload',
  'ext',
  ...EXCLUDABLE,
  ...EXCLUDABLE.map((name) => `not_${name}`),
];
const FIELDS = [...EXCLUDABLE, 'id', 'severity', 'range', 'from', 'to'];
const PAYLOAD = /^data\.([^\s=!<>]+)(!=|<=|>=|=|<|>)(.*)$/s;
const EXTENSION = /^([a-z0-9]{1,20})(!=|<=|>=|=|<|>)(.*)$/s;
const SEVERITY = /^severity(>=|:)(.*)$/s;
const FIELD = /^(-?)([A-Za-z][\w.-]*):(.*)$/s;
/** Longest line read: room for every filter the page holds; each value is then bounded by `parseSearch`. */
export const MAX_BAR_LENGTH = 2_000;

export type BarResult = { params: URLSearchParams } | { error: string; column: number };

interface Token {
  text: string;
  /** 1-based column of its first character. */
  column: number;
}

/** Splits on spaces outside double quotes; a backslash escapes the next character inside quotes. */
function tokens(line: string): Token[] | { error: string; column: number } {
  const out: Token[] = [];
  let i = 0;
  while (i < line.length) {
    if (/\s/.test(line[i]!)) {
      i++;
      continue;
    }
    const start = i;
    let quoteAt = -1;
    while (i < line.length && (quoteAt >= 0 || !/\s/.test(line[i]!))) {
      if (line[i] === '\\' && quoteAt >= 0) i++;
      else if (line[i] === '"') quoteAt = quoteAt >= 0 ? -1 : i;
      i++;
    }
    if (quoteAt >= 0) return { error: 'this quote is never closed', column: quoteAt + 1 };
    out.push({ text: line.slice(start, i), column: start + 1 });
  }
  return out;
}

/** `"a b"` → `a b` (escapes undone); anything else as it is. */
function unquote(value: string): string {
  return /^".*"$/s.test(value) ? value.slice(1, -1).replace(/\\(.)/gs, '$1') : value;
}

/** Reads a query-bar line into search parameters, or says where it cannot. */
export function readQueryBar(line: string): BarResult {
  if (line.length > MAX_BAR_LENGTH)
    return { error: `the line is longer than ${MAX_BAR_LENGTH} characters`, column: MAX_BAR_LENGTH + 1 };
  const found = tokens(line);
  if (!Array.isArray(found)) return found;
  const namesTime = /(^|\s)(range|from|to):/.test(line);
  const params = new URLSearchParams();
  const text: string[] = [];
  for (const { text: t, column } of found) {
    const payload = PAYLOAD.exec(t);
    const severity = SEVERITY.exec(t);
    const extension = EXTENSION.exec(t);
    const field = FIELD.exec(t);
    const name = t.startsWith('events/') ? parseEventName(t) : undefined;
    const valueColumn = (prefix: number) => column + prefix;
    if (t.startsWith('events/')) {
      // The name ingest answered: one event's identity, looked up over all time unless a range is named.
      if (!name) return { error: 'expected events/{source},{id} as ingest answered it', column };
      params.append('source', name.source);
      params.append('id', name.id);
      if (!namesTime) params.set('range', 'all');
    } else if (payload) {
      const [, path, op, value] = payload as unknown as [string, string, string, string];
      if (value === '')
        return { error: `data.${path}${op}: a value must follow`, column: valueColumn(t.length) };
      params.append('payload', `${path} ${op} ${value}`);
    } else if (severity) {
      const value = unquote(severity[2]!);
      if (value === '') return { error: 'severity: a name must follow, e.g. severity>=error', column };
      params.set('severity', value);
    } else if (extension) {
      const [, name, op, value] = extension as unknown as [string, string, string, string];
      if (op !== '=')
        return {
          error: `${name}${op}: extensions compare with = only (data.${name}${op}… compares a payload value)`,
          column: valueColumn(name.length),
        };
      params.append('ext', `${name}=${unquote(value)}`);
    } else if (field) {
      const [, minus, name, raw] = field as unknown as [string, string, string, string];
      if (!FIELDS.includes(name))
        return {
          error: `unknown field "${name}" (expected ${FIELDS.join(', ')}, data.path or quote the text)`,
          column: column + minus.length,
        };
      if (minus && !EXCLUDABLE.includes(name))
        return { error: `-${name}: only ${EXCLUDABLE.join(', ')} can be excluded`, column };
      const value = unquote(raw);
      if (value === '')
        return {
          error: `${name}: a value must follow the colon`,
          column: valueColumn(minus.length + name.length + 1),
        };
      if (minus) params.append(`not_${name}`, value);
      else if (name === 'severity' || name === 'range' || name === 'from' || name === 'to')
        params.set(name, value);
      else params.append(name, value);
    } else {
      text.push(t);
    }
  }
  if (text.length) params.set('q', text.join(' '));
  return { params };
}

/** Quotes a value that holds a space, a quote or nothing. */
function quote(value: string): string {
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
