/**
 * The CSV export's columns, chosen by the `columns` parameter (comma-separated, repeatable):
 * the search's own columns (`time`, `id`, `source`, `type`, `subject`, `severity`, `uid`,
 * `producer`, the default), the other CloudEvents attributes (`specversion`, `datacontenttype`,
 * `dataschema`, `data`, `data_base64`), an extension by its name (a-z, 0-9, at most 20) and a
 * payload value by its path (`data.amount`, `data.items.0.sku`). Anything else is refused with
 * 400 naming the column. A cell is a string as it is, any other JSON value as its JSON text,
 * empty when the event has no such value.
 *
 * @example
 * const columns = parseColumns(['time,id', 'data.amount']);
 * columns.map((c) => c.name); // ['time', 'id', 'data.amount']
 */
import { ApiError } from '@event-observatory/service-kit/errors';
import { type EventDocumentRow, severityName } from '@event-observatory/store';

export const DEFAULT_COLUMNS = ['time', 'id', 'source', 'type', 'subject', 'severity', 'uid', 'producer'];
const MAX_COLUMNS = 50;
const MAX_PATH_DEPTH = 16;
const EXTENSION = /^[a-z0-9]{1,20}$/;
/** Attributes read from the stored CloudEvent (the row carries the search's own columns). */
const DOCUMENT_ATTRIBUTES = new Set(['specversion', 'datacontenttype', 'dataschema', 'data', 'data_base64']);

export interface CsvColumn {
  name: string;
  /** The cell's text, or null for an empty cell; `doc` parses the stored CloudEvent once per row. */
  cell: (row: EventDocumentRow, doc: () => Record<string, unknown>) => string | null;
}

const ROW_CELLS: Record<string, CsvColumn['cell']> = {
  time: (r) => r.occurredAt.toISOString(),
  id: (r) => r.id,
  source: (r) => r.source,
  type: (r) => r.type,
  subject: (r) => r.subject,
  severity: (r) =>
    r.severityRank === null ? null : (severityName(r.severityRank) ?? String(r.severityRank)),
  uid: (r) => r.key.uid,
  producer: (r) => (r.producer === null ? null : JSON.stringify(r.producer)),
};

/** A JSON value as a cell: a string as it is, anything else as JSON, nothing as an empty cell. */
function text(value: unknown): string | null {
  if (value === undefined || value === null) return null;
  return typeof value === 'string' ? value : JSON.stringify(value);
}

/** The value at `path` below `value` (own members only, array elements by their index). */
function at(value: unknown, path: readonly string[]): unknown {
  let here = value;
  for (const key of path) {
    if (here === null || typeof here !== 'object' || !Object.hasOwn(here, key)) return undefined;
    here = (here as Record<string, unknown>)[key];
  }
  return here;
}

function column(name: string): CsvColumn | undefined {
  const own = Object.hasOwn(ROW_CELLS, name) ? ROW_CELLS[name] : undefined;
  if (own) return { name, cell: own };
  if (DOCUMENT_ATTRIBUTES.has(name) || EXTENSION.test(name))
    return { name, cell: (_, doc) => text(doc()[name]) };
  if (!name.startsWith('data.')) return undefined;
  const path = name.slice('data.'.length).split('.');
  if (path.length > MAX_PATH_DEPTH || path.some((k) => k === '')) return undefined;
  return { name, cell: (_, doc) => text(at(doc().data, path)) };
}

function refused(name: string, message: string): ApiError {
  return new ApiError('InvalidArgument', `columns: ${message}`, {
    reason: 'invalid-column',
    metadata: { column: name.slice(0, 100) },
  });
}

/** The columns the `columns` parameter's values name (the default without any); throws 400 on an unknown one. */
export function parseColumns(values: readonly string[]): CsvColumn[] {
  const names = values
    .flatMap((v) => v.split(','))
    .map((n) => n.trim())
    .filter((n) => n !== '');
  if (names.length > MAX_COLUMNS)
    throw refused(names[MAX_COLUMNS]!, `at most ${MAX_COLUMNS} columns, got ${names.length}`);
  return (names.length ? names : DEFAULT_COLUMNS).map((name) => {
    const found = column(name);
    if (found) return found;
    throw refused(
      name,
      `unknown column "${name.slice(0, 100)}": expected ${DEFAULT_COLUMNS.join(', ')}, ${[...DOCUMENT_ATTRIBUTES].join(', ')}, an extension name (a-z, 0-9, at most 20) or data.path`,
    );
  });
}
