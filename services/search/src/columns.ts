/**
 * The results table's columns, chosen in the URL with repeatable `col`: an attribute (`time`,
 * `type`, `source`, `subject`, `severity`, `id`), `summary` (the payload on one line), a
 * payload path (`data.device.id`) or an extension (`ext.region`), in the order given. The time
 * always comes first: it is the link to the event. Without `col`, the attribute columns.
 *
 * @example
 * parseColumns(['type', 'data.device.id'], problems); // time, type and the payload path
 */
import type { CellRequest } from '@event-observatory/store';

/** The attribute columns and their headings, in the order the chooser lists them. */
export const ATTRIBUTE_COLUMNS = {
  time: 'Time',
  severity: 'Severity',
  type: 'Type',
  source: 'Source',
  id: 'Id',
  subject: 'Subject',
  summary: 'Payload',
} as const;
export type AttributeColumn = keyof typeof ATTRIBUTE_COLUMNS;

/** The columns without `col`: every attribute, no payload. */
export const DEFAULT_COLUMNS: readonly AttributeColumn[] = [
  'time',
  'severity',
  'type',
  'source',
  'id',
  'subject',
];

export type Column =
  | { kind: 'attribute'; name: AttributeColumn }
  | { kind: 'data'; name: string; path: string[] }
  | { kind: 'ext'; name: string; extension: string };

const MAX_PATH_DEPTH = 16;
/** A payload key in a column name: what a dotted path can say without quoting. */
const KEY = /^[A-Za-z0-9_$@:-]{1,100}$/;
const EXTENSION = /^[a-z0-9]{1,20}$/;

function isAttribute(raw: string): raw is AttributeColumn {
  return Object.hasOwn(ATTRIBUTE_COLUMNS, raw);
}

/** One `col` value as a column, or the sentence saying why it is none. */
export function parseColumn(raw: string): Column | string {
  if (isAttribute(raw)) return { kind: 'attribute', name: raw };
  if (raw.startsWith('data.')) {
    const path = raw.slice('data.'.length).split('.');
    if (path.length <= MAX_PATH_DEPTH && path.every((k) => KEY.test(k)))
      return { kind: 'data', name: raw, path };
    return `col "${raw}": a payload path is names of letters, digits and _ $ @ : - separated by single dots`;
  }
  if (raw.startsWith('ext.')) {
    const extension = raw.slice('ext.'.length);
    if (EXTENSION.test(extension)) return { kind: 'ext', name: raw, extension };
    return `col "${raw}": an extension name is 1 to 20 of a-z and 0-9`;
  }
  return `col "${raw}": expected one of ${Object.keys(ATTRIBUTE_COLUMNS).join(', ')}, data.<dotted.path> or ext.<name>`;
}

/** The columns of these `col` values (each once, the time first), a problem for each bad one. */
export function parseColumns(values: readonly string[], problems: string[]): Column[] {
  const names = values.length ? values : DEFAULT_COLUMNS;
  const columns: Column[] = [{ kind: 'attribute', name: 'time' }];
  for (const raw of names) {
    const column = parseColumn(raw);
    if (typeof column === 'string') problems.push(column);
    else if (!columns.some((c) => c.name === column.name)) columns.push(column);
  }
  return columns;
}

/** What the store reads for these columns beyond the row; `expand`: each row's whole event too. */
export function cellRequest(columns: readonly Column[], expand: boolean): CellRequest {
  return {
    dataPaths: columns.flatMap((c) => (c.kind === 'data' ? [c.path] : [])),
    extensions: columns.flatMap((c) => (c.kind === 'ext' ? [c.extension] : [])),
    summary: columns.some((c) => c.name === 'summary'),
    document: expand,
  };
}
