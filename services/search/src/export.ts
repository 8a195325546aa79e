/**
 * Export of the current search: `GET /events.ndjson` and `GET /events.csv` with the search page's
 * parameters stream the matching events newest first, `EXPORT_PAGE` rows a query (keyset pages, so
 * each query is the page query), at most `EXPORT_CAP` rows. A response cut by the cap ends with a
 * last line saying so (NDJSON: `{"truncated":true,"cap":…}`; CSV: a `# truncated at …` line).
 */
import { ApiError } from '@event-observatory/service-kit/errors';
import {
  cancellablePool,
  type DatabasePool,
  type EventKey,
  type EventRow,
  searchEvents,
  severityName,
} from '@event-observatory/store';
import type { Context } from 'hono';
import { stream } from 'hono/streaming';
import { parseSearch } from './filters.js';

export const EXPORT_CAP = 10_000;
const EXPORT_PAGE = 1_000;
const COLUMNS = ['time', 'id', 'source', 'type', 'subject', 'severity', 'uid'] as const;

function record(r: EventRow): Record<(typeof COLUMNS)[number], string | null> {
  return {
    time: r.occurredAt.toISOString(),
    id: r.id,
    source: r.source,
    type: r.type,
    subject: r.subject,
    severity: r.severityRank === null ? null : (severityName(r.severityRank) ?? String(r.severityRank)),
    uid: r.key.uid,
  };
}

/** One CSV field: quoted when needed; a leading = + - @ gets a ' so spreadsheets do not run it as a formula. */
export function csvField(value: string | null): string {
  if (value === null) return '';
  const safe = /^[=+\-@\t\r]/.test(value) ? `'${value}` : value;
  return /[",\r\n]/.test(safe) || safe !== value ? `"${safe.replace(/"/g, '""')}"` : safe;
}

export function exportHandler(pool: DatabasePool, format: 'ndjson' | 'csv') {
  return (c: Context) => {
    const parsed = parseSearch(new URL(c.req.url).searchParams);
    if (parsed.problems.length > 0) {
      throw new ApiError('InvalidArgument', parsed.problems.join('; '), { reason: 'invalid-filter' });
    }
    c.header('content-type', format === 'csv' ? 'text/csv; charset=utf-8' : 'application/x-ndjson');
    c.header('content-disposition', `attachment; filename="events.${format}"`);
    // No page deadline (an export streams many pages), but nothing runs for a client that left.
    const reads = cancellablePool(pool, c.req.raw.signal);
    return stream(c, async (out) => {
      if (format === 'csv') await out.write(`${COLUMNS.join(',')}\r\n`);
      let after: EventKey | undefined;
      let sent = 0;
      while (sent < EXPORT_CAP && !out.aborted) {
        const limit = Math.min(EXPORT_PAGE, EXPORT_CAP - sent);
        const page = await searchEvents(reads, parsed.filter, after ? { limit, after } : { limit });
        const lines = page.rows.map((r) => {
          const rec = record(r);
          return format === 'csv'
            ? `${COLUMNS.map((k) => csvField(rec[k])).join(',')}\r\n`
            : `${JSON.stringify(rec)}\n`;
        });
        if (lines.length) await out.write(lines.join(''));
        sent += page.rows.length;
        after = page.rows.at(-1)?.key;
        if (!page.more) return;
      }
      if (sent >= EXPORT_CAP)
        await out.write(
          format === 'csv'
            ? `# truncated at ${EXPORT_CAP} rows\r\n`
            : `${JSON.stringify({ truncated: true, cap: EXPORT_CAP })}\n`,
        );
    });
  };
}
