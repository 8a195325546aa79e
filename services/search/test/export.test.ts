/**
 * How an export ends, against the real store: a complete one with its row count, one cut short by
 * a database error with the error body and the rows sent before it (one error line in the service
 * log), one whose client leaves with its statements cancelled and no error logged.
 */
import { TextDecoder } from 'node:util';
import type { Logger } from '@event-observatory/service-kit/logger';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Harness, readerStatements, startHarness, withTableLocked } from './harness.js';

/** More rows than the cap; with their long subjects an export (about 20 MB) outgrows what the
 * sockets between the service and the test hold, so it waits on the test reading it. */
const ROWS = 12_000;
const TYPE = 'com.example.export';

interface LogLine {
  level: string;
  obj: Record<string, unknown>;
  msg: string | undefined;
}
const logged: LogLine[] = [];
const recorder = (level: string) => (obj: object, msg?: string) =>
  void logged.push({ level, obj: obj as Record<string, unknown>, msg });
const logger: Logger = {
  debug: recorder('debug'),
  info: recorder('info'),
  warn: recorder('warn'),
  error: recorder('error'),
};
const errors = () => logged.filter((l) => l.level === 'error');

let h: Harness;

beforeAll(async () => {
  // A page deadline far above a loaded machine's first page: these tests end exports by database
  // errors and departures, never by the deadline.
  h = await startHarness('export', { logger, pageTimeoutMs: 60_000 });
  // sql-witness: writes rows with long subjects, which the devstack seed does not make, and ends the reader's backend as a failing database would.
  await h.db.query(
    `INSERT INTO events.cloud_event (occurred_at, ce_source, ce_id, ce_type, ce_subject, raw)
     SELECT now() - g * interval '1 second', 'urn:test:export', 'e-' || g, $2, repeat(md5(g::text), 60),
            jsonb_build_object('id', 'e-' || g)
       FROM generate_series(1, $1::int) AS g`,
    [ROWS, TYPE],
  );
});

afterAll(async () => {
  await h?.close();
});

/** Ends the reader's backends that wait on a lock; true when it ended one. */
async function endWaitingReader(): Promise<boolean> {
  const { rows } = await h.db.query(
    `SELECT pg_terminate_backend(pid) FROM pg_stat_activity
      WHERE datname = current_database() AND application_name = 'observatory-read' AND wait_event_type = 'Lock'`,
  );
  return rows.length > 0;
}

async function readRest(
  reader: ReadableStreamDefaultReader<Uint8Array>,
  decoder: TextDecoder,
): Promise<string> {
  let text = '';
  for (let chunk = await reader.read(); !chunk.done; chunk = await reader.read())
    text += decoder.decode(chunk.value, { stream: true });
  return text + decoder.decode();
}

/** What the stream sends up to and including `needle`; fails (never spins) if it ends first. */
async function readUntil(
  reader: ReadableStreamDefaultReader<Uint8Array>,
  decoder: TextDecoder,
  needle: string,
): Promise<string> {
  let text = '';
  while (!text.includes(needle)) {
    const chunk = await reader.read();
    if (chunk.done) throw new Error(`the export ended before ${needle}: ${text.slice(-500)}`);
    text += decoder.decode(chunk.value, { stream: true });
  }
  return text;
}

/** The data lines and the last line of an export body. */
function split(format: 'ndjson' | 'csv', body: string): { rows: string[]; last: string } {
  const lines = body.split(format === 'csv' ? '\r\n' : '\n');
  expect(lines.pop()).toBe('');
  const last = lines.pop() ?? '';
  return { rows: format === 'csv' ? lines.slice(1) : lines, last };
}

describe('export ending', () => {
  it('ends a complete export with the completion line and its row count, logging nothing', async () => {
    logged.length = 0;
    const ids = 'id=e-7&id=e-8&id=e-9';
    const ndjson = split('ndjson', await (await h.get(`/events.ndjson?${ids}`)).text());
    expect(ndjson.rows).toHaveLength(3);
    expect(JSON.parse(ndjson.last)).toEqual({ export: { complete: true, rows: 3 } });
    const csv = split('csv', await (await h.get(`/events.csv?${ids}`)).text());
    expect(csv.rows).toHaveLength(3);
    expect(csv.last).toBe('# export complete: 3 rows');
    expect(errors()).toEqual([]);
  });

  it('says where the cap cut an export', async () => {
    const csv = split('csv', await (await h.get(`/events.csv?type=${TYPE}`)).text());
    expect(csv.rows).toHaveLength(10_000);
    expect(csv.last).toBe('# export complete: 10000 rows, truncated at the cap of 10000');
  });

  it.each(['ndjson', 'csv'] as const)(
    'ends a %s export cut short by a database error with the error and the rows before it, logged once',
    async (format) => {
      logged.length = 0;
      const res = await h.get(`/events.${format}?type=${TYPE}&source=urn:test:export`);
      expect(res.status).toBe(200);
      const reader = res.body!.getReader();
      const decoder = new TextDecoder();
      // Rows have arrived, so the first page is read; the export now waits on this test reading.
      let body = await readUntil(reader, decoder, 'urn:test:export');
      body += await withTableLocked(h, async () => {
        const rest = readRest(reader, decoder);
        // The next page waits on the lock: end its backend.
        await expect.poll(endWaitingReader, { timeout: 20_000 }).toBe(true);
        return rest;
      });
      const { rows, last } = split(format, body);
      expect(rows.length).toBeGreaterThan(0);
      expect(rows.length).toBeLessThan(10_000);
      const message = 'The event store could not answer this page. Try again in a moment.';
      if (format === 'csv') {
        expect(last).toBe(`# export failed after ${rows.length} rows: UNAVAILABLE ${message}`);
      } else {
        expect(JSON.parse(last)).toEqual({
          export: { complete: false, rows: rows.length },
          error: {
            code: 503,
            message,
            status: 'UNAVAILABLE',
            details: [
              {
                reason: 'export-interrupted',
                domain: 'observatory.events',
                metadata: { rows: String(rows.length) },
              },
            ],
          },
        });
      }
      expect(errors()).toHaveLength(1);
      const [line] = errors();
      expect(line!.msg).toBe('export failed');
      expect(line!.obj).toMatchObject({
        format,
        rows: rows.length,
        filter: { types: [TYPE], sources: ['urn:test:export'] },
      });
      expect(line!.obj.err).toBeInstanceOf(Error);
    },
  );

  it('cancels the statements of a client that leaves, without an error line', async () => {
    logged.length = 0;
    await withTableLocked(h, async () => {
      const client = new AbortController();
      const res = await h.get(`/events.ndjson?type=${TYPE}`, {}, client.signal);
      expect(res.status).toBe(200);
      await expect.poll(() => readerStatements(h), { timeout: 5_000 }).toBeGreaterThan(0);
      client.abort();
      await expect.poll(() => readerStatements(h), { timeout: 5_000 }).toBe(0);
    });
    await expect.poll(() => logged.map((l) => l.msg)).toContain('export cancelled: the client went away');
    expect(errors()).toEqual([]);
  });
});
