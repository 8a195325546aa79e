/**
 * The search service over HTTP on a seeded store: hostile input is harmless, failures read as
 * words, the page views stay within seven read connections, readiness and metrics.
 */
import { request } from 'node:http';
import { createMetrics } from '@event-observatory/service-kit/metrics';
import { searchStatement } from '@event-observatory/store';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { csvField } from '../src/export.js';
import { parseSearch } from '../src/filters.js';
import { createSearchService } from '../src/index.js';
import { type Harness, SECRET, startHarness } from './harness.js';

const SEED = 600;
let h: Harness;

beforeAll(async () => {
  h = await startHarness('http', { seed: SEED });
});

afterAll(async () => {
  await h?.close();
});

/** A GET with a Host header of our choosing (fetch does not let a caller set Host). */
function getWithHost(url: string, path: string, host: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request(`${url}${path}`, { headers: { host } }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk) => {
        body += chunk;
      });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on('error', reject);
    req.end();
  });
}

const SQLISH = [
  "'; DROP TABLE events.cloud_event; --",
  "x' OR '1'='1",
  "'); SELECT pg_sleep(5); --",
  '$1::text) OR true --',
  '" || (SELECT version()) || "',
];

async function storedRows(): Promise<number> {
  // sql-witness: plants rows, locks the table and reads plans in its own SQL to drive and check the reads under test.
  const { rows } = await h.db.query<{ n: number }>('SELECT count(*)::int AS n FROM events.cloud_event');
  return rows[0]!.n;
}

function looksHandled(status: number, body: string): void {
  expect(status === 200 || status === 400, `status ${status}`).toBe(true);
  expect(body).toContain('Search events');
  expect(body).not.toMatch(/\bat .+\.(ts|js):\d+/);
  expect(body).not.toMatch(/syntax error|SQLSTATE|ERROR:/i);
}

describe('hostile input', () => {
  it('finds nothing and breaks nothing with SQL-ish text in every free-form filter', async () => {
    for (const s of SQLISH) {
      for (const params of <Record<string, string>[]>[
        { q: s },
        { type: s },
        { source: s },
        { subject: s },
        { payload: `device.id = ${s}` },
        { payload: `${s.replace(/[\s=!<>]/g, '')} = 1` },
        { ext: `region=${s}` },
      ]) {
        const res = await h.get(`/events?${new URLSearchParams(params)}`);
        const body = await res.text();
        looksHandled(res.status, body);
        expect(res.status, JSON.stringify(params)).toBe(200);
        expect(body, JSON.stringify(params)).toContain('No events match these filters.');
      }
    }
    expect(await storedRows()).toBe(SEED);
  });

  it('answers 400 naming the filter for SQL-ish text in the typed filters', async () => {
    for (const s of SQLISH) {
      for (const name of ['from', 'to', 'severity', 'limit', 'cursor', 'ext']) {
        const res = await h.get(`/events?${new URLSearchParams({ [name]: s })}`);
        const body = await res.text();
        looksHandled(res.status, body);
        expect(res.status, `${name}=${s}`).toBe(400);
        expect(body).toContain(`${name}:`.replace('ext:', 'ext &quot;'));
      }
    }
    expect(await storedRows()).toBe(SEED);
  });

  it('refuses a tampered cursor with 400 and a sentence, and accepts the untouched one', async () => {
    const first = await (await h.get('/events?limit=5')).text();
    const next = /href="([^"]*)" rel="next"/.exec(first)?.[1]?.replace(/&amp;/g, '&');
    const token = new URLSearchParams(next?.split('?')[1]).get('cursor')!;
    expect((await h.get(`/events?limit=5&cursor=${encodeURIComponent(token)}`)).status).toBe(200);
    const flipped = `${token.slice(0, 3)}${token[3] === 'A' ? 'B' : 'A'}${token.slice(4)}`;
    const res = await h.get(`/events?limit=5&cursor=${encodeURIComponent(flipped)}`);
    expect(res.status).toBe(400);
    expect(await res.text()).toContain('cursor: not a cursor of this service');
  });

  it('refuses a huge page request and an oversized text, and serves the largest page allowed', async () => {
    for (const limit of ['251', '100000', '99999999999999999999', '-1', '1e9']) {
      const res = await h.get(`/events?limit=${limit}`);
      expect(res.status, limit).toBe(400);
      expect(await res.text()).toContain('limit: expected a whole number from 1 to 250');
    }
    const long = await h.get(`/events?q=${'a'.repeat(5_000)}`);
    expect(long.status).toBe(400);
    const max = await (await h.get('/events?limit=250&range=all')).text();
    expect(max.match(/<tr class="event">/g)?.length).toBe(250);
  });

  it('answers 400 in the error body to an unknown Host header, and serves an allowed one', async () => {
    for (const host of ['evil.example', 'localhost.evil.example', `evil.example:${h.server.port}`]) {
      const res = await getWithHost(h.url, '/events', host);
      expect(res.status, host).toBe(400);
      expect(JSON.parse(res.body)).toEqual({
        error: {
          code: 400,
          status: 'INVALID_ARGUMENT',
          message: 'this host name is not allowed (ALLOWED_HOSTS)',
          details: [{ reason: 'host-not-allowed', domain: 'observatory.events', metadata: { host } }],
        },
      });
    }
    expect((await getWithHost(h.url, '/', `printer.local:${h.server.port}`)).status).toBe(200);
    expect((await getWithHost(h.url, '/health/live', '10.1.2.3:9000')).status).toBe(200);
  });
});

describe('failures', () => {
  it('shows a clear message, not a stack, when a query hits the 2 s statement timeout', async () => {
    const locker = await h.db.connect();
    try {
      await locker.query('BEGIN');
      await locker.query('LOCK TABLE events.cloud_event IN ACCESS EXCLUSIVE MODE');
      const started = Date.now();
      const res = await h.get('/events?q=alpha');
      const body = await res.text();
      expect(Date.now() - started).toBeLessThan(4_000);
      expect(res.status).toBe(504);
      expect(body).toContain('The search took too long');
      expect(body).toContain('stopped this query after 2 s');
      expect(body).not.toMatch(/canceling statement|\bat .+\.(ts|js):\d+/);
    } finally {
      await locker.query('ROLLBACK');
      locker.release();
    }
  });

  it('answers 404 with a page for an unknown or malformed event id', async () => {
    expect((await h.get('/events/00000000-0000-4000-8000-000000000000')).status).toBe(404);
    expect((await h.get("/events/1';--")).status).toBe(404);
  });
});

describe('read connections', () => {
  it('an overview page view and a search page view each take at most seven of the eight connections', async () => {
    for (const path of ['/?range=30d', '/events?q=alpha&payload=temperature%3E10']) {
      const { registry } = createMetrics({ service: 'search', version: 'test' });
      const fresh = createSearchService({
        config: { allowedHosts: ['localhost'], secret: SECRET },
        databaseUrl: h.databaseUrl,
        registry,
      });
      try {
        const res = await fresh.app.request(path, { headers: { host: 'localhost' } });
        expect(res.status).toBe(200);
        // Connections open only on demand: the count is the page view's peak concurrency.
        expect(fresh.pool.totalCount, path).toBeGreaterThan(0);
        expect(fresh.pool.totalCount, path).toBeLessThanOrEqual(7);
      } finally {
        await fresh.close();
      }
    }
  });
});

describe('the overview', () => {
  it('says how many stored events the rollup has not counted yet, rather than showing fewer', async () => {
    const plain = async () =>
      (await (await h.get('/?range=24h')).text()).replace(/<[^>]+>/g, ' ').replace(/\s+/g, ' ');
    await h.db.query(
      `INSERT INTO events.cloud_event (occurred_at, ce_source, ce_id, ce_type, raw)
       SELECT now() - g * interval '1 second', 'urn:test:backlog', 'b-' || g, 'com.example.backlog', '{}'
         FROM generate_series(1, 3) AS g`,
    );
    expect(await plain()).toMatch(
      /\d+ event\(s\) stored since the last refresh are not counted here yet: Search lists them/,
    );
  });
});

describe('readiness and metrics', () => {
  it('is ready when the read pool hands out a connection, and not when the store is unreachable', async () => {
    const ready = await h.get('/health/ready');
    expect(ready.status).toBe(200);
    expect(await ready.json()).toEqual({ status: 'UP', database: 'UP' });
    const { registry } = createMetrics({ service: 'search', version: 'test' });
    const broken = createSearchService({
      config: { allowedHosts: ['localhost'], secret: SECRET },
      databaseUrl: 'postgres://observatory@127.0.0.1:1/none',
      registry,
    });
    try {
      const res = await broken.app.request('/health/ready');
      expect(res.status).toBe(503);
      expect(((await res.json()) as { status: string }).status).toBe('DOWN');
    } finally {
      await broken.close();
    }
  });

  it('leaves /metrics to the metrics listener: the UI port answers it 404', async () => {
    const res = await h.get('/metrics');
    expect(res.status).toBe(404);
    await res.body?.cancel();
  });

  it('publishes the search meters with all 16 shapes, the page kinds and the read pool', async () => {
    await h.get('/events?q=alpha&severity=error&range=all');
    const text = await h.registry.metrics();
    const shapes = new Set(
      [...text.matchAll(/search_query_duration_seconds_count\{[^}]*shape="([^"]+)"/g)].map((m) => m[1]),
    );
    expect(shapes.size).toBe(16);
    expect(text).toMatch(/search_query_duration_seconds_bucket\{[^}]*le="10"[^}]*shape="text\+attrs"/);
    expect(
      await h.metric(/^search_query_duration_seconds_count\{.*shape="text\+attrs"/),
    ).toBeGreaterThanOrEqual(1);
    expect(await h.metric(/^search_results_returned_count\{.*shape="text\+attrs"/)).toBeGreaterThanOrEqual(1);
    expect(text).toMatch(/search_results_returned_bucket\{[^}]*le="250"/);
    expect(await h.metric(/^search_pages_total\{.*page="first"/)).toBeGreaterThanOrEqual(1);
    expect(await h.metric(/^search_pages_total\{.*page="continuation"/)).toBeGreaterThanOrEqual(1);
    expect(text).toMatch(/^search_facets_capped_total/m);
    expect(text).toMatch(/^tail_connections/m);
    expect(text).toMatch(/^tail_events_delivered_total/m);
    expect(await h.metric(/^pool_connections_max\{.*pool="observatory-read"/)).toBe(8);
    expect(text).toMatch(/http_server_requests_seconds_count\{[^}]*uri="\/events"/);
  });
});

describe('time range', () => {
  it('an unfiltered search with the default range reads one or two partitions, not every one (EXPLAIN)', async () => {
    const { rows: parts } = await h.db.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM pg_inherits WHERE inhparent = 'events.cloud_event'::regclass`,
    );
    const plan = async (query: string) => {
      const { text, values } = searchStatement(parseSearch(new URLSearchParams(query)).filter, { limit: 50 });
      const { rows } = await h.db.query<{ 'QUERY PLAN': unknown }>(`EXPLAIN (FORMAT JSON) ${text}`, values);
      return new Set(
        JSON.stringify(rows[0]!['QUERY PLAN']).match(/cloud_event_\d{4}_\d{2}|cloud_event_default/g),
      );
    };
    expect(parts[0]!.n).toBeGreaterThan(2);
    const defaultRange = await plan('');
    expect(defaultRange.size).toBeGreaterThanOrEqual(1);
    expect(defaultRange.size).toBeLessThanOrEqual(2);
    // The check can fail: without a bound the plan names every partition.
    expect((await plan('range=all')).size).toBe(parts[0]!.n);
  });
});

describe('receipts', () => {
  it('says stored (with a link), passed by the consumer without a row, or not yet stored with the records before it', async () => {
    const topic = 'receipt.topic';
    await h.db.query(
      `INSERT INTO events.cloud_event (occurred_at, ce_source, ce_id, ce_type, raw, broker_topic, broker_partition, broker_offset)
       VALUES (now() - interval '1 minute', 'urn:test:receipt', 'r-1', 'com.example.receipt', '{}', $1, 2, 40)`,
      [topic],
    );
    await h.db.query(
      `INSERT INTO events.consumer_checkpoint (consumer_group, topic, partition, next_offset) VALUES ('g', $1, 2, 45)`,
      [topic],
    );
    const receipt = async (offset: number, partition = 2) => {
      const res = await h.get(`/receipt?topic=${topic}&partition=${partition}&offset=${offset}`);
      expect(res.status).toBe(200);
      return (await res.text()).replace(/<[^>]+>/g, '');
    };
    expect(await receipt(40)).toMatch(/Stored at .* com\.example\.receipt from urn:test:receipt, id r-1/);
    expect(await receipt(41)).toContain('Passed by the consumer without a row');
    expect(await receipt(49)).toContain('Not yet stored: the consumer has 5 record(s) of this partition');
    expect(await receipt(0, 3)).toContain(
      'Unknown partition: the consumer has checkpoints of this topic for partition(s) 2, none of partition 3',
    );
    const unknown = await h.get('/receipt?topic=no.such.topic&partition=0&offset=0');
    expect((await unknown.text()).replace(/<[^>]+>/g, '')).toContain(
      'Unknown topic: no consumer group has a checkpoint of topic no.such.topic',
    );
    const bad = await h.get('/receipt?topic=x&partition=-1&offset=a');
    expect(bad.status).toBe(400);
    expect(await bad.text()).toContain('partition: a whole number');
  });

  it('finds the event at the microsecond time ingest answered, and is linked from every page', async () => {
    const topic = 'receipt.micro';
    const { rows } = await h.db.query<{ time: string }>(
      // sql-witness: plants a row whose time has microseconds, as ingest answers them.
      `INSERT INTO events.cloud_event (occurred_at, ce_source, ce_id, ce_type, raw, broker_topic, broker_partition, broker_offset)
       VALUES (date_trunc('second', now()) - interval '1 minute' + interval '123456 microseconds',
               'urn:test:micro', 'm-1', 'com.example.micro', '{}', $1, 0, 7)
       RETURNING to_char(occurred_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') AS time`,
      [topic],
    );
    await h.db.query(
      `INSERT INTO events.consumer_checkpoint (consumer_group, topic, partition, next_offset) VALUES ('g', $1, 0, 8)`,
      [topic],
    );
    const time = rows[0]!.time;
    expect(time).toMatch(/\.\d{3}456Z$/);
    const res = await h.get(`/receipt?${new URLSearchParams({ topic, partition: '0', offset: '7', time })}`);
    const text = (await res.text()).replace(/<[^>]+>/g, '');
    expect(text).toMatch(/Stored at .* com\.example\.micro from urn:test:micro, id m-1/);
    // The same time a microsecond off is another event's: the row is not this one.
    const off = time.replace(/456Z$/, '457Z');
    const other = await h.get(
      `/receipt?${new URLSearchParams({ topic, partition: '0', offset: '7', time: off })}`,
    );
    expect(await other.text()).toContain('Passed by the consumer without a row');
    for (const page of ['/', '/events', '/receipt'])
      expect(await (await h.get(page)).text()).toMatch(/<a href="\/receipt"[^>]*>\s*Receipt\s*<\/a>/);
  });

  it('answers the query bar with a redirect to the form parameters', async () => {
    const res = await fetch(`${h.url}/events?range=7d&bar=type%3Aa.*%20-source%3Ab%20boiler`, {
      redirect: 'manual',
    });
    expect(res.status).toBe(303);
    expect(res.headers.get('location')).toBe('/events?range=7d&type=a.*&not_source=b&q=boiler');
  });
});

describe('export', () => {
  it('streams the search as NDJSON and CSV, the same rows newest first', async () => {
    const ndjson = await h.get('/events.ndjson?range=all&type=com.example.t3');
    expect(ndjson.headers.get('content-type')).toBe('application/x-ndjson');
    const lines = (await ndjson.text()).trim().split('\n');
    expect(JSON.parse(lines.pop()!)).toEqual({ export: { complete: true, rows: SEED / 20 } });
    const records = lines.map((l) => JSON.parse(l) as { time: string; id: string; type: string });
    expect(records).toHaveLength(SEED / 20);
    expect(records.every((r) => r.type === 'com.example.t3')).toBe(true);
    expect(records.map((r) => r.time)).toEqual(
      records
        .map((r) => r.time)
        .sort()
        .reverse(),
    );
    const csv = (await (await h.get('/events.csv?range=all&type=com.example.t3')).text())
      .trim()
      .split('\r\n');
    expect(csv[0]).toBe('time,id,source,type,subject,severity,uid,producer');
    expect(csv.pop()).toBe(`# export complete: ${SEED / 20} rows`);
    expect(csv.slice(1).map((l) => l.split(',')[1])).toEqual(records.map((r) => r.id));
    expect(csvField('=HYPERLINK("x")')).toBe(`"'=HYPERLINK(""x"")"`);
    expect(csvField('# export complete: 1 rows')).toBe('"# export complete: 1 rows"');
    expect((await h.get('/events.csv?limit=0')).status).toBe(400);
  });
});

describe('who produced an event', () => {
  it('shows the producer on the detail page and carries it in CSV, a dash and an empty cell when not recorded', async () => {
    const sa = {
      authtype: 'service_account',
      authid: 'system:serviceaccount:payments:exporter',
      issuer: 'https://kubernetes.default.svc',
      namespace: 'payments',
    };
    // sql-witness: plants one row with a producer and one without, as the consumer stores them.
    const { rows } = await h.db.query<{ id: string; uid: string; t: string }>(
      `INSERT INTO events.cloud_event (occurred_at, ce_source, ce_id, ce_type, raw, producer)
       VALUES (now() - interval '2 minutes', 'urn:test:producer', 'by-sa', 'com.example.produced', '{"id":"by-sa"}', $1::jsonb),
              (now() - interval '1 minute', 'urn:test:producer', 'by-nobody', 'com.example.produced', '{"id":"by-nobody"}', NULL)
       RETURNING ce_id AS id, event_uid::text AS uid, occurred_at::text AS t`,
      [JSON.stringify(sa)],
    );
    const uid = new Map(rows.map((r) => [r.id, r]));
    const detail = async (id: string) => {
      const r = uid.get(id)!;
      const res = await h.get(`/events/${r.uid}?${new URLSearchParams({ t: r.t })}`);
      expect(res.status).toBe(200);
      return (await res.text()).replace(/<[^>]+>/g, ' ').replace(/\s+/g, ' ');
    };
    expect(await detail('by-sa')).toContain(
      'Produced by service_account system:serviceaccount:payments:exporter (namespace payments, issuer https://kubernetes.default.svc)',
    );
    expect(await detail('by-nobody')).toContain('Produced by — ');

    // NDJSON lines are the CloudEvents as ingested; who sent them is the store's, not theirs.
    const ndjson = (await (await h.get('/events.ndjson?range=all&source=urn:test:producer')).text())
      .trim()
      .split('\n')
      .slice(0, -1)
      .map((l) => JSON.parse(l) as unknown);
    expect(ndjson).toEqual([{ id: 'by-nobody' }, { id: 'by-sa' }]);
    const csv = (await (await h.get('/events.csv?range=all&source=urn:test:producer')).text()).split('\r\n');
    expect(csv[1]!.endsWith(',')).toBe(true);
    // The last field: the producer's JSON, quoted as CSV quotes it (jsonb orders the keys its own way).
    const quoted = csv[2]!.slice(csv[2]!.indexOf(',"{') + 1);
    expect(JSON.parse(quoted.slice(1, -1).replaceAll('""', '"'))).toEqual(sa);
  });
});
