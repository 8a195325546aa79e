/**
 * How an export ends, against the real store: a complete one with its row count, one cut short by
 * a database error with the error body and the rows sent before it (one error line in the service
 * log), one whose client leaves with its statements cancelled and no error logged. What it carries:
 * NDJSON lines that the real ingest service takes back as a batch, unchanged; CSV columns chosen
 * by name, extension and payload path; an unknown column refused; the page's export links and the
 * export's order following the table (`sort`, `col`).
 */
import { randomUUID } from 'node:crypto';
import { rmSync } from 'node:fs';
import { TextDecoder } from 'node:util';
import { createTopic, readRecords, startServiceProcess, tempDataDir } from '@event-observatory/devstack';
import { CONTEXT_ATTRIBUTES, decodeKafkaRecord, encodeStructured } from '@event-observatory/events';
import { signDevToken } from '@event-observatory/service-kit/auth';
import type { Logger } from '@event-observatory/service-kit/logger';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
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
     SELECT t, 'urn:test:export', 'e-' || g, $2::text, subj,
            jsonb_build_object('specversion', '1.0', 'id', 'e-' || g, 'source', 'urn:test:export', 'type', $2,
              'time', to_char(t AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"'), 'subject', subj)
       FROM (SELECT g, now() - g * interval '1 second' AS t, repeat(md5(g::text), 60) AS subj
               FROM generate_series(1, $1::int) AS g) AS s`,
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

const REINGEST = 'urn:test:reingest';
const minutesAgo = (m: number) => new Date(Date.now() - m * 60_000).toISOString();
/** Events as producers sent them: a JSON payload, a binary one, a text one, none; with extensions. */
const ORIGINALS: Record<string, unknown>[] = [
  {
    specversion: '1.0',
    id: 'order-1',
    source: REINGEST,
    type: 'com.example.order.placed',
    time: minutesAgo(4),
    subject: 'orders/1',
    datacontenttype: 'application/json',
    dataschema: 'https://example.com/schemas/order.json',
    region: 'eu',
    tenant: 'acme',
    data: { amount: 12.5, currency: 'EUR', items: [{ sku: 'A-1', qty: 2 }], note: 'a "quoted", comma\nline' },
  },
  {
    specversion: '1.0',
    id: 'blob-1',
    source: REINGEST,
    type: 'com.example.blob',
    time: minutesAgo(3),
    datacontenttype: 'application/octet-stream',
    region: 'us',
    data_base64: Buffer.from([0, 1, 2, 254, 255]).toString('base64'),
  },
  {
    specversion: '1.0',
    id: 'text-1',
    source: REINGEST,
    type: 'com.example.note',
    time: minutesAgo(2),
    datacontenttype: 'text/plain',
    data: 'plain text, with a comma',
  },
  {
    specversion: '1.0',
    id: 'bare-1',
    source: REINGEST,
    type: 'com.example.ping',
    time: minutesAgo(1),
    priority: 'high',
  },
];
const NEWEST_FIRST = ['bare-1', 'text-1', 'blob-1', 'order-1'];
const byId = (events: Record<string, unknown>[]) =>
  [...events].sort((a, b) => String(a.id).localeCompare(String(b.id)));

/** Stores one event as the consumer does: the attributes' columns, the payload, the extensions, `raw`. */
async function plant(event: Record<string, unknown>): Promise<void> {
  const extensions = Object.fromEntries(
    Object.entries(event).filter(
      ([k]) => !(CONTEXT_ATTRIBUTES as readonly string[]).includes(k) && k !== 'data' && k !== 'data_base64',
    ),
  );
  // sql-witness: plants CloudEvents with binary, text and JSON payloads and extensions, which the devstack seed does not make.
  await h.db.query(
    `INSERT INTO events.cloud_event (occurred_at, ce_source, ce_id, ce_type, ce_subject, ce_datacontenttype,
       ce_dataschema, raw, data, extensions)
     SELECT (d->>'time')::timestamptz, d->>'source', d->>'id', d->>'type', d->>'subject', d->>'datacontenttype',
            d->>'dataschema', d, d->'data', $2::jsonb
       FROM (SELECT $1::jsonb AS d) AS planted`,
    [JSON.stringify(event), JSON.stringify(extensions)],
  );
}

describe('what an export carries', () => {
  beforeAll(async () => {
    for (const event of ORIGINALS) await plant(event);
  });

  it('writes each event as a CloudEvent that the ingest service takes back unchanged', async () => {
    const res = await h.get(`/events.ndjson?range=all&source=${REINGEST}`);
    expect(res.headers.get('content-type')).toBe('application/x-ndjson');
    const lines = (await res.text()).split('\n');
    expect(lines.pop()).toBe('');
    // The README's rule: a line with `specversion` is an event, the one without it the status line.
    const events = lines.filter((l) => 'specversion' in JSON.parse(l));
    const [status, ...others] = lines.filter((l) => !events.includes(l));
    expect(others).toEqual([]);
    expect(lines.at(-1)).toBe(status);
    expect(JSON.parse(status!)).toEqual({ export: { complete: true, rows: 4 } });
    const exported = events.map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(exported.map((e) => e.id)).toEqual(NEWEST_FIRST);
    expect(byId(exported)).toEqual(byId(ORIGINALS));

    const { bootstrapServers } = inject('stack');
    const topic = `reingest-${randomUUID()}`;
    await createTopic(bootstrapServers, topic, 1);
    const dataDir = tempDataDir('search-reingest');
    const secret = 'reingest-test-secret-0123456789-abcdefghijklmnop';
    const ingest = await startServiceProcess({
      name: 'ingest',
      dataDir,
      env: {
        BROKER_BOOTSTRAP_SERVERS: bootstrapServers,
        BROKER_TOPIC: topic,
        AUTH_SECRET: secret,
        INGEST_MAX_EVENT_BYTES: '262144',
        OTEL_SDK_DISABLED: 'true',
        LOG_LEVEL: 'warn',
      },
    });
    try {
      const token = await signDevToken({ secret, scopes: ['events:write'] });
      const posted = await fetch(`${ingest.url}/v1/events:batchCreate`, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/cloudevents-batch+json' },
        body: `[${events.join(',')}]`,
      });
      const answer = (await posted.json()) as { created: number; failed: number };
      expect(posted.status, JSON.stringify(answer)).toBe(200);
      expect(answer).toMatchObject({ created: 4, failed: 0 });
      const records = await readRecords(bootstrapServers, topic, (rs) => rs.length >= 4);
      const reingested = records.map(
        (r) => JSON.parse(encodeStructured(decodeKafkaRecord(r).event)) as Record<string, unknown>,
      );
      expect(byId(reingested)).toEqual(byId(ORIGINALS));
    } finally {
      await ingest.stop();
      rmSync(dataDir, { recursive: true, force: true });
    }
  });

  it('writes the CSV columns asked for: attributes, extensions, payload paths', async () => {
    const columns = 'id,datacontenttype,region,priority,data.amount,data.items.0.sku,data.note,data_base64';
    const res = await h.get(
      `/events.csv?range=all&source=${REINGEST}&columns=${encodeURIComponent(columns)}`,
    );
    expect(res.status).toBe(200);
    expect((await res.text()).split('\r\n')).toEqual([
      columns,
      'bare-1,,,high,,,,',
      'text-1,text/plain,,,,,,',
      `blob-1,application/octet-stream,us,,,,,${Buffer.from([0, 1, 2, 254, 255]).toString('base64')}`,
      'order-1,application/json,eu,,12.5,A-1,"a ""quoted"", comma\nline",',
      '# export complete: 4 rows',
      '',
    ]);
    // The whole payload as JSON text (jsonb orders the keys its own way), a text payload as its text.
    const payloads = (
      await (await h.get(`/events.csv?source=${REINGEST}&id=order-1&id=text-1&columns=data`)).text()
    )
      .split('\r\n')
      .slice(1, 3);
    expect(payloads[0]).toBe('"plain text, with a comma"');
    expect(JSON.parse(payloads[1]!.slice(1, -1).replaceAll('""', '"'))).toEqual(ORIGINALS[0]!.data);
    const standard = (await (await h.get(`/events.csv?range=all&source=${REINGEST}`)).text()).split('\r\n');
    expect(standard[0]).toBe('time,id,source,type,subject,severity,uid,producer');
  });

  it("follows the table: the page's links carry its order and columns, and the rows come in that order", async () => {
    const page = await (
      await h.get(
        `/events?type=${TYPE}&sort=oldest&col=type&col=summary&col=data.amount&col=ext.region&tz=browser&refresh=1m`,
      )
    ).text();
    const link = (format: string) =>
      new URL(
        new RegExp(`<a href="(/events\\.${format}[^"]*)"`).exec(page)![1]!.replaceAll('&amp;', '&'),
        'http://x',
      ).searchParams;
    const csvLink = link('csv');
    expect(Object.fromEntries(csvLink)).toEqual({
      type: TYPE,
      sort: 'oldest',
      columns: 'time,type,data,data.amount,region',
    });
    expect(Object.fromEntries(link('ndjson'))).toEqual({ type: TYPE, sort: 'oldest' });
    // Oldest first across the export's 40 pages of 250, as the table would page.
    const csv = split('csv', await (await h.get(`/events.csv?${csvLink}`)).text());
    expect(csv.rows).toHaveLength(10_000);
    const times = csv.rows.map((line) => line.slice(0, line.indexOf(',')));
    expect(times).toEqual([...times].sort());
    expect(new Set(times).size).toBe(10_000);
    expect(csv.rows[0]).toMatch(/^[^,]+,com\.example\.export,,,$/);
    const newest = split(
      'ndjson',
      await (await h.get(`/events.ndjson?type=${TYPE}&id=e-1&id=e-2&id=e-3`)).text(),
    );
    expect(newest.rows.map((l) => (JSON.parse(l) as { id: string }).id)).toEqual(['e-1', 'e-2', 'e-3']);
    const oldest = split(
      'ndjson',
      await (await h.get(`/events.ndjson?type=${TYPE}&id=e-1&id=e-2&id=e-3&sort=oldest`)).text(),
    );
    expect(oldest.rows.map((l) => (JSON.parse(l) as { id: string }).id)).toEqual(['e-3', 'e-2', 'e-1']);
  });

  it.each([
    ['/events.csv?columns=id,Region', 'Region'],
    ['/events.csv?columns=id,data.', 'data.'],
    ['/events.csv?columns=id&columns=data..amount', 'data..amount'],
    ['/events.csv?columns=extensionnamelongerthan20', 'extensionnamelongerthan20'],
    ['/events.ndjson?columns=id', 'id'],
  ])('refuses %s with 400 naming the column', async (path, column) => {
    const res = await h.get(path);
    expect(res.status).toBe(400);
    expect(await res.json()).toMatchObject({
      error: {
        code: 400,
        status: 'INVALID_ARGUMENT',
        message: expect.stringMatching(/^columns: /),
        details: [{ reason: 'invalid-column', metadata: { column } }],
      },
    });
  });
});
