/**
 * The search page's export links, following the table: the search's filters and `sort` (the
 * export's order), and for CSV the table's chosen columns (`col`) as the export's `columns`. NDJSON
 * lines are whole events (payload and extensions included), so they take no columns.
 */
import type { Column } from './columns.js';
import { searchFilters } from './filters.js';

/** The CSV export's name of a results-table column (`export-columns.ts`). */
function csvColumnOf(column: Column): string {
  switch (column.kind) {
    case 'data':
      return column.name;
    case 'ext':
      return column.extension;
    case 'attribute':
      // The table's one-line payload is the payload itself in the export.
      return column.name === 'summary' ? 'data' : column.name;
  }
}

/** Links to the NDJSON and CSV exports of the search in `params`, shown in `columns` when `col` chose them. */
export function exportHrefs(
  params: URLSearchParams,
  columns: readonly Column[],
): { ndjson: string; csv: string } {
  const query = searchFilters(params);
  for (const name of ['col', 'tz', 'refresh']) query.delete(name);
  const csv = new URLSearchParams(query);
  if (params.has('col')) csv.set('columns', columns.map(csvColumnOf).join(','));
  const href = (path: string, q: URLSearchParams) => (q.size ? `${path}?${q}` : path);
  return { ndjson: href('/events.ndjson', query), csv: href('/events.csv', csv) };
}
