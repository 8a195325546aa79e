/**
 * Export of the current search: `GET /events.ndjson` and `GET /events.csv` with the search page's
 * parameters stream the matching events in the page's order (`sort`, newest first by default), `EXPORT_PAGE` rows a query (keyset pages, so
 * each query is the page query), at most `EXPORT_CAP` rows. An NDJSON line is the CloudEvent as
 * stored, in the JSON event format ingest accepts back; a CSV line has the columns `columns` names
 * (export-columns.ts). The status (200) is sent before the first row, so the body's last line says
 * how the export ended (README, "Export"): complete, with its row count (and the cap when it cut
 * the export), or failed, with the error and the rows sent before it; in NDJSON it is the one line
 * without `specversion`. A body without that line was cut in transit. A failure is logged once
 * through the service logger; a client that leaves cancels the statements and is not an error.
 */
import { ApiError, type ErrorResponseBody, errorBody } from '@event-observatory/service-kit/errors';
import type { Logger } from '@event-observatory/service-kit/logger';
import {
  type DatabasePool,
  type EventDocumentRow,
  type EventKey,
  type PageRequest,
  type ReadScope,
  scopedPool,
  searchEventDocuments,
} from '@event-observatory/store';
import type { Context } from 'hono';
import { stream } from 'hono/streaming';
import type { StreamingApi } from 'hono/utils/stream';
import { type CsvColumn, parseColumns } from './export-columns.js';
import { failureOf } from './failures.js';
import { parseSearch } from './filters.js';
import { holderOf, type StreamSlots } from './stream-slots.js';
import type { SearchEnv } from './viewer.js';

export const EXPORT_CAP = 10_000;

/** What exports may hold: open at once per viewer and per pod (one more answers 429), and for how long. */
export interface ExportLimits {
  perViewer: number;
  perPod: number;
  maxAgeMs: number;
}

export const EXPORT_LIMITS: ExportLimits = {
  perViewer: 3,
  perPod: 10,
  /**
   * An export still running after this long is cut (its connection closed, its statements
   * cancelled): 10,000 rows take seconds, and a client that stops reading would otherwise hold its
   * slot and a page of rows, up to 250 payloads, for as long as it keeps the connection open.
   */
  maxAgeMs: 5 * 60_000,
};
/** Rows a query: a page holds its events' payloads (up to ingest's 1 MiB each) in memory at once. */
const EXPORT_PAGE = 250;

type ExportFormat = 'ndjson' | 'csv';

/** The CSV export's columns; undefined for NDJSON, whose lines are whole events (400 if `columns` is given). */
function csvColumns(format: ExportFormat, values: string[]): CsvColumn[] | undefined {
  if (format === 'csv') return parseColumns(values);
  if (values.length === 0) return undefined;
  throw new ApiError(
    'InvalidArgument',
    'columns: NDJSON lines are whole CloudEvents; columns chooses CSV columns',
    {
      reason: 'invalid-column',
      metadata: { column: values[0]!.slice(0, 100) },
    },
  );
}

/** One event as a CSV line; the stored CloudEvent is parsed only when a column reads it. */
function csvLine(columns: readonly CsvColumn[], row: EventDocumentRow): string {
  let parsed: Record<string, unknown> | undefined;
  const doc = () => {
    parsed ??= JSON.parse(row.document) as Record<string, unknown>;
    return parsed;
  };
  return `${columns.map((k) => csvField(k.cell(row, doc))).join(',')}\r\n`;
}

/**
 * One CSV field: quoted when needed; a leading = + - @ gets a ' so spreadsheets do not run it as a
 * formula; a leading # is quoted, so no row starts like the `# export` line.
 */
export function csvField(value: string | null): string {
  if (value === null) return '';
  const safe = /^[=+\-@\t\r]/.test(value) ? `'${value}` : value;
  return /[",\r\n]|^#/.test(safe) || safe !== value ? `"${safe.replace(/"/g, '""')}"` : safe;
}

/** How an export ended: its last line. */
type Ending =
  | { complete: true; rows: number; capped: boolean }
  | { complete: false; rows: number; error: ErrorResponseBody };

/** The export's last line: NDJSON an `export` object (with the error body on failure), CSV a `#` line. */
function endLine(format: ExportFormat, end: Ending): string {
  if (!end.complete) {
    const { error } = end;
    return format === 'ndjson'
      ? `${JSON.stringify({ export: { complete: false, rows: end.rows }, ...error })}\n`
      : `# export failed after ${end.rows} rows: ${error.error.status} ${error.error.message}\r\n`;
  }
  if (format === 'ndjson') {
    const cap = end.capped ? { truncated: true, cap: EXPORT_CAP } : {};
    return `${JSON.stringify({ export: { complete: true, rows: end.rows, ...cap } })}\n`;
  }
  return `# export complete: ${end.rows} rows${end.capped ? `, truncated at the cap of ${EXPORT_CAP}` : ''}\r\n`;
}

/** The error body of a failed export: what a page would have said, and the rows sent before it. */
function exportError(err: unknown, rows: number): ErrorResponseBody {
  const f = failureOf(err);
  return errorBody(f.status === 504 ? 'DeadlineExceeded' : 'Unavailable', f.message, {
    reason: 'export-interrupted',
    metadata: { rows },
  });
}

/** What an export route reads with and within. */
export interface ExportRoute {
  pool: DatabasePool;
  format: ExportFormat;
  /** The request's viewer's scope. */
  scopeOf: (c: Context<SearchEnv>) => ReadScope;
  /** The open exports (`ExportLimits`), one count for both formats. */
  slots: StreamSlots;
  /** An export still running at this age is cut. */
  maxAgeMs: number;
  logger?: Logger | undefined;
}

export function exportHandler({ pool, format, scopeOf, slots, maxAgeMs, logger }: ExportRoute) {
  return (c: Context<SearchEnv>) => {
    const parsed = parseSearch(new URL(c.req.url).searchParams);
    if (parsed.problems.length > 0) {
      throw new ApiError('InvalidArgument', parsed.problems.join('; '), { reason: 'invalid-filter' });
    }
    const columns = csvColumns(format, c.req.queries('columns') ?? []);
    c.header('content-type', format === 'csv' ? 'text/csv; charset=utf-8' : 'application/x-ndjson');
    c.header('content-disposition', `attachment; filename="events.${format}"`);
    // HEAD gets GET's headers: no body would be read, so no query runs for it.
    if (c.req.method === 'HEAD') return c.body(null, 200);
    const holder = holderOf(c);
    if (!slots.take(holder)) {
      throw new ApiError('TooManyRequests', 'too many exports running; wait for one to end and try again', {
        reason: 'export-limit',
      });
    }
    // No page deadline (an export streams many pages), but one for the whole export, and nothing
    // runs for a client that left.
    const cut = new AbortController();
    const signal = AbortSignal.any([c.req.raw.signal, cut.signal]);
    const reads = scopedPool(pool, scopeOf(c), signal);
    return stream(c, async (out) => {
      // Aborting the stream also fails a write waiting on a client that stopped reading.
      const watchdog = setTimeout(() => {
        logger?.warn({ format, maxAgeMs }, 'export cut: still running at its age limit');
        cut.abort();
        out.abort();
      }, maxAgeMs);
      try {
        await exportRows(out);
      } finally {
        clearTimeout(watchdog);
        slots.give(holder);
      }
    });

    async function exportRows(out: StreamingApi): Promise<void> {
      const gone = () => out.aborted || signal.aborted;
      if (columns) await out.write(`${columns.map((k) => csvField(k.name)).join(',')}\r\n`);
      // The page's order (`sort`): each page continues past the last row sent, in that order.
      let last: EventKey | undefined;
      const next = (limit: number): PageRequest =>
        last === undefined
          ? { limit, order: parsed.sort }
          : parsed.sort === 'oldest'
            ? { limit, before: last, order: 'oldest' }
            : { limit, after: last };
      let sent = 0;
      let more = true;
      try {
        while (more && sent < EXPORT_CAP) {
          const limit = Math.min(EXPORT_PAGE, EXPORT_CAP - sent);
          const page = await searchEventDocuments(reads, parsed.filter, next(limit));
          if (gone()) return;
          const lines = page.rows.map((r) => (columns ? csvLine(columns, r) : `${r.document}\n`));
          if (lines.length) await out.write(lines.join(''));
          sent += page.rows.length;
          last = page.rows.at(-1)?.key;
          more = page.more;
        }
      } catch (err) {
        if (gone()) {
          logger?.debug({ format, rows: sent }, 'export cancelled: the client went away');
          return;
        }
        // The filter as parsed, not the query string: only search parameters, nothing else the URL carried.
        logger?.error({ err, format, filter: parsed.filter, rows: sent }, 'export failed');
        await out.write(endLine(format, { complete: false, rows: sent, error: exportError(err, sent) }));
        return;
      }
      if (!gone()) await out.write(endLine(format, { complete: true, rows: sent, capped: more }));
    }
  };
}
