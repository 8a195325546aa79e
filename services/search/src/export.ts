/**
 * Export of the current search: `GET /events.ndjson` and `GET /events.csv` with the search page's
 * parameters stream the matching events newest first, `EXPORT_PAGE` rows a query (keyset pages, so
 * each query is the page query), at most `EXPORT_CAP` rows. The status (200) is sent before the
 * first row, so the body's last line says how the export ended (README, "Export"): complete, with
 * its row count (and the cap when it cut the export), or failed, with the error and the rows sent
 * before it. A body without that line was cut in transit. A failure is logged once through the
 * service logger; a client that leaves cancels the statements and is not an error.
 */
import { ApiError, type ErrorResponseBody, errorBody } from '@event-observatory/service-kit/errors';
import type { Logger } from '@event-observatory/service-kit/logger';
import {
  type DatabasePool,
  type EventKey,
  type EventProducerIdentity,
  type EventRow,
  type ReadScope,
  scopedPool,
  searchEvents,
  severityName,
} from '@event-observatory/store';
import type { Context } from 'hono';
import { stream } from 'hono/streaming';
import { failureOf } from './failures.js';
import { parseSearch } from './filters.js';
import type { SearchEnv } from './viewer.js';

export const EXPORT_CAP = 10_000;
const EXPORT_PAGE = 1_000;
const COLUMNS = ['time', 'id', 'source', 'type', 'subject', 'severity', 'uid', 'producer'] as const;

type ExportFormat = 'ndjson' | 'csv';

type Column = (typeof COLUMNS)[number];

/**
 * One exported event. `producer` is the stored object (null when not recorded): NDJSON carries it
 * as an object, CSV as its JSON text.
 */
type ExportRecord = Record<Exclude<Column, 'producer'>, string | null> & {
  producer: EventProducerIdentity | null;
};

function record(r: EventRow): ExportRecord {
  return {
    time: r.occurredAt.toISOString(),
    id: r.id,
    source: r.source,
    type: r.type,
    subject: r.subject,
    severity: r.severityRank === null ? null : (severityName(r.severityRank) ?? String(r.severityRank)),
    uid: r.key.uid,
    producer: r.producer,
  };
}

/** A CSV cell's text: the producer as JSON, any other column as it is. */
function cellText(value: string | EventProducerIdentity | null): string | null {
  return value === null || typeof value === 'string' ? value : JSON.stringify(value);
}

/** One CSV field: quoted when needed; a leading = + - @ gets a ' so spreadsheets do not run it as a formula. */
export function csvField(value: string | null): string {
  if (value === null) return '';
  const safe = /^[=+\-@\t\r]/.test(value) ? `'${value}` : value;
  return /[",\r\n]/.test(safe) || safe !== value ? `"${safe.replace(/"/g, '""')}"` : safe;
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

export function exportHandler(
  pool: DatabasePool,
  format: ExportFormat,
  scopeOf: (c: Context<SearchEnv>) => ReadScope,
  logger?: Logger,
) {
  return (c: Context<SearchEnv>) => {
    const parsed = parseSearch(new URL(c.req.url).searchParams);
    if (parsed.problems.length > 0) {
      throw new ApiError('InvalidArgument', parsed.problems.join('; '), { reason: 'invalid-filter' });
    }
    c.header('content-type', format === 'csv' ? 'text/csv; charset=utf-8' : 'application/x-ndjson');
    c.header('content-disposition', `attachment; filename="events.${format}"`);
    // No page deadline (an export streams many pages), but nothing runs for a client that left.
    const signal = c.req.raw.signal;
    const reads = scopedPool(pool, scopeOf(c), signal);
    return stream(c, async (out) => {
      const gone = () => out.aborted || signal.aborted;
      if (format === 'csv') await out.write(`${COLUMNS.join(',')}\r\n`);
      let after: EventKey | undefined;
      let sent = 0;
      let more = true;
      try {
        while (more && sent < EXPORT_CAP) {
          const limit = Math.min(EXPORT_PAGE, EXPORT_CAP - sent);
          const page = await searchEvents(reads, parsed.filter, after ? { limit, after } : { limit });
          if (gone()) return;
          const lines = page.rows.map((r) => {
            const rec = record(r);
            return format === 'csv'
              ? `${COLUMNS.map((k) => csvField(cellText(rec[k]))).join(',')}\r\n`
              : `${JSON.stringify(rec)}\n`;
          });
          if (lines.length) await out.write(lines.join(''));
          sent += page.rows.length;
          after = page.rows.at(-1)?.key;
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
    });
  };
}
