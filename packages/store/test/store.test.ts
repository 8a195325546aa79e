import { cp, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createDatabase } from '@event-observatory/devstack';
import { drizzle } from 'drizzle-orm/node-postgres';
import type pg from 'pg';
import { Registry } from 'prom-client';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import {
  cloudEvent,
  countStatement,
  createReadPool,
  createWritePool,
  DEFAULT_MIGRATIONS_DIR,
  deviceIdOf,
  type EventFilter,
  MigrationError,
  migrate,
  monthPartitionBounds,
  monthPartitionName,
  newestIngestedAt,
  SEVERE_RANK,
  SEVERITY_ALIASES,
  searchStatement,
  severityRankOfNumber,
  tagsOf,
} from '../src/index.js';

const stack = inject('stack');
let url: string;
let pool: pg.Pool;

beforeAll(async () => {
  url = await createDatabase(stack.databaseUrl, `store_${Date.now().toString(36)}`);
  const runs = await Promise.all([migrate({ url }), migrate({ url })]);
  const applied = runs.flatMap((r) => r.applied);
  expect(new Set(applied).size).toBe(applied.length);
  expect(applied.length).toBeGreaterThan(0);
  pool = createWritePool({ url });
});

afterAll(async () => {
  await pool?.end();
});

describe('migrations', () => {
  it('apply each file once even when two runners race, and a later run applies nothing', async () => {
    const { rows } = await pool.query('SELECT name FROM events.schema_migration ORDER BY name');
    const again = await migrate({ url });
    expect(again.applied).toEqual([]);
    expect(again.alreadyApplied).toEqual(rows.map((r) => r.name));
  });

  it('refuse to continue when an applied migration file was edited', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'migrations-'));
    try {
      await cp(DEFAULT_MIGRATIONS_DIR, dir, { recursive: true });
      await writeFile(join(dir, '0003_support_tables.sql'), '-- edited\nSELECT 1;\n');
      await expect(migrate({ url, dir })).rejects.toThrow(MigrationError);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('create monthly partitions from last month to three months ahead, bounds at +00', async () => {
    const { rows } = await pool.query<{ name: string; bound: string }>(
      `SELECT c.relname AS name, pg_get_expr(c.relpartbound, c.oid) AS bound
         FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
        WHERE i.inhparent = 'events.cloud_event'::regclass`,
    );
    const byName = new Map(rows.map((r) => [r.name, r.bound]));
    expect(byName.get('cloud_event_default')).toBe('DEFAULT');
    const now = new Date();
    for (let m = -1; m <= 3; m++) {
      const at = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + m, 15));
      const { from, to } = monthPartitionBounds(at);
      expect(byName.get(monthPartitionName(at))).toBe(`FOR VALUES FROM ('${from}') TO ('${to}')`);
    }
  });

  it('run sessions in UTC', async () => {
    const { rows } = await pool.query('SHOW TimeZone');
    expect(rows[0].TimeZone).toBe('UTC');
  });

  it("keep their own session settings when the URL carries libpq options, and apply the URL's others", async () => {
    const withOptions = new URL(url);
    withOptions.searchParams.set('options', '-c lock_timeout=1234 -c statement_timeout=99s');
    const reads = createReadPool({ url: withOptions.toString() });
    try {
      const { rows } = await reads.query(
        `SELECT current_setting('lock_timeout') AS lock, current_setting('statement_timeout') AS statement,
                current_setting('default_transaction_read_only') AS read_only, current_setting('work_mem') AS work_mem,
                current_setting('max_parallel_workers_per_gather') AS workers`,
      );
      expect(rows[0]).toEqual({
        lock: '1234ms',
        statement: '2s',
        read_only: 'on',
        work_mem: '32MB',
        workers: '0',
      });
    } finally {
      await reads.end();
    }
  });

  it('plan the reads without parallel workers, where the same session with workers would gather', async () => {
    const reads = createReadPool({ url });
    const client = await reads.connect();
    try {
      // Parallel plans made free: a session with workers plans a Gather for any scan.
      await client.query('BEGIN');
      await client.query('SET LOCAL parallel_setup_cost = 0; SET LOCAL parallel_tuple_cost = 0');
      await client.query('SET LOCAL min_parallel_table_scan_size = 0');
      const plan = async () =>
        (await client.query('EXPLAIN SELECT count(*) FROM events.cloud_event')).rows
          .map((r) => r['QUERY PLAN'])
          .join('\n');
      expect(await plan()).not.toMatch(/Gather/);
      await client.query('SET LOCAL max_parallel_workers_per_gather = 2');
      expect(await plan()).toMatch(/Gather/);
      await client.query('ROLLBACK');
    } finally {
      client.release();
      await reads.end();
    }
  });
});

describe('events.cloud_event', () => {
  const now = new Date();

  it('derives device_id, severity_rank, tags and search_doc from extensions and data', async () => {
    const db = drizzle(pool);
    const a = {
      data: { deviceId: 'boiler-7', severity: 'Error', tags: ['heat', 'b'], note: 'pressure valve' },
      extensions: { tags: 'b, zone-3' },
    };
    const b = { data: 'plain', extensions: { deviceid: 'meter-1', severitynumber: '9' } };
    await db.insert(cloudEvent).values(
      [a, b].map((e, i) => ({
        occurredAt: now,
        ceSource: 'urn:test:derive',
        ceId: i === 0 ? 'a' : 'b',
        ceType: i === 0 ? 'com.example.alarm' : 'com.example.reading',
        raw: {},
        ...e,
        deviceId: deviceIdOf(e.extensions, e.data),
        tags: tagsOf(e.extensions, e.data),
      })),
    );
    const { rows } = await pool.query(
      `SELECT ce_id, device_id, severity_rank, tags,
              search_doc @@ to_tsquery('simple', 'pressure & boiler') AS text_hit,
              search_doc @@ to_tsquery('simple', 'zone') AS tag_hit
         FROM events.cloud_event WHERE ce_source = 'urn:test:derive' ORDER BY ce_id`,
    );
    expect(rows).toEqual([
      {
        ce_id: 'a',
        device_id: 'boiler-7',
        severity_rank: 50,
        tags: ['b', 'heat', 'zone-3'],
        text_hit: true,
        tag_hit: true,
      },
      { ce_id: 'b', device_id: 'meter-1', severity_rank: 30, tags: [], text_hit: false, tag_hit: false },
    ]);
  });

  it('derives device ids and tags in TypeScript exactly as the SQL functions do', async () => {
    const cases: [Record<string, string>, unknown][] = [
      [{}, null],
      [{ deviceid: '  ' }, { deviceId: ' d-1 ' }],
      [{}, { device_id: 'x', deviceId: 7 }],
      [{}, { device: { id: 'nested' } }],
      [{}, ['not', 'an', 'object']],
      [{ tags: 'b, A,a,,  ' }, { tags: ['Z', 1, ' c ', 'b', 'é', 'e'] }],
      [{}, { tags: 'not-an-array' }],
      [{ deviceid: 'ext', tags: 'only' }, 'text'],
    ];
    for (const [extensions, data] of cases) {
      const { rows } = await pool.query(
        'SELECT events.device_id_of($1::jsonb, $2::jsonb) AS device, events.tags_of($1::jsonb, $2::jsonb) AS tags',
        [JSON.stringify(extensions), JSON.stringify(data)],
      );
      expect([extensions, data, rows[0].device, rows[0].tags]).toEqual([
        extensions,
        data,
        deviceIdOf(extensions, data),
        tagsOf(extensions, data),
      ]);
    }
  });

  it('newestIngestedAt: the ingested_at of the newest row, on a read-only pool', async () => {
    const readOnly = createReadPool({ url, max: 1 });
    try {
      const { rows } = await pool.query<{ ingested_at: Date }>(
        `INSERT INTO events.cloud_event (occurred_at, ce_source, ce_id, ce_type, raw)
         VALUES ($1, 'urn:test:fresh', 'f', 't', '{}') RETURNING ingested_at`,
        [now],
      );
      expect(await newestIngestedAt(readOnly)).toEqual(rows[0]?.ingested_at);
    } finally {
      await readOnly.end();
    }
  });

  it('skips a row whose (occurred_at, source, id) already exists', async () => {
    const insert = () =>
      pool.query(
        `INSERT INTO events.cloud_event (occurred_at, ce_source, ce_id, ce_type, raw)
         VALUES ($1, 'urn:test:dup', 'x', 't', '{}') ON CONFLICT DO NOTHING`,
        [now],
      );
    expect((await insert()).rowCount).toBe(1);
    expect((await insert()).rowCount).toBe(0);
  });

  it('stores a row whose month has no partition in the default partition (migration 0006)', async () => {
    await pool.query(
      `INSERT INTO events.cloud_event (occurred_at, ce_source, ce_id, ce_type, raw)
       VALUES ('2001-02-03T00:00:00Z', 'urn:test:old', 'x', 't', '{}')`,
    );
    const { rows } = await pool.query(
      `DELETE FROM events.cloud_event_default WHERE ce_source = 'urn:test:old' RETURNING ce_id`,
    );
    expect(rows).toEqual([{ ce_id: 'x' }]);
  });

  it('ranks every severity spelling exactly as the exported ordering does', async () => {
    const names = Object.keys(SEVERITY_ALIASES);
    const { rows } = await pool.query<{ name: string; rank: number | null }>(
      'SELECT n AS name, events.severity_rank(n) AS rank FROM unnest($1::text[]) AS n',
      [[...names, 'Unknown', ' WARN ']],
    );
    for (const r of rows) {
      const expected = SEVERITY_ALIASES[r.name.trim().toLowerCase()] ?? null;
      expect([r.name, r.rank]).toEqual([r.name, expected]);
    }
    const nums = Array.from({ length: 27 }, (_, i) => i - 1);
    const { rows: numRows } = await pool.query<{ n: number; rank: number | null }>(
      'SELECT n, events.severity_rank_of_number(n::text) AS rank FROM unnest($1::int[]) AS n',
      [nums],
    );
    for (const r of numRows) expect([r.n, r.rank]).toEqual([r.n, severityRankOfNumber(r.n) ?? null]);
  });
});

/** The partitions' part of `cloud_event_match_idx` (search_doc, data, extensions; migration 0008). */
const MATCH_INDEX = /search_doc_data_extensions_idx/;

describe('search shapes', () => {
  // Every filter of the search page has an index path (time, text, payload, attributes, severity
  // >= 50). With sequential scans priced out, a shape without one would show `Seq Scan`.
  const shapes: Record<string, [string, RegExp]> = {
    'time range, keyset order': [
      `SELECT event_uid FROM events.cloud_event
        WHERE occurred_at >= now() - interval '1 day' AND (occurred_at, event_uid) < (now(), gen_random_uuid())
        ORDER BY occurred_at DESC, event_uid DESC LIMIT 50`,
      /occurred_at_ce_source_ce_id_key/,
    ],
    'full text': [
      `SELECT event_uid FROM events.cloud_event WHERE search_doc @@ to_tsquery('simple', 'pressure')`,
      MATCH_INDEX,
    ],
    'payload equality': [
      `SELECT event_uid FROM events.cloud_event WHERE data @> '{"deviceId":"boiler-7"}'`,
      MATCH_INDEX,
    ],
    // One scan of the match index answers both conditions (migration 0008): no BitmapAnd of a
    // common word's bitmap with the payload's.
    'full text and payload equality together': [
      `SELECT event_uid FROM events.cloud_event
        WHERE search_doc @@ to_tsquery('simple', 'pressure') AND data @> '{"deviceId":"boiler-7"}'`,
      /Bitmap Index Scan on \w*search_doc_data_extensions_idx[^\n]*\n\s+Index Cond: \(\(search_doc @@ [^\n]+\) AND \(data @> /,
    ],
    'attribute: type': [
      `SELECT event_uid FROM events.cloud_event WHERE ce_type = 'com.example.alarm' ORDER BY occurred_at DESC LIMIT 50`,
      /ce_type_occurred_at_idx/,
    ],
    'attribute: source': [
      `SELECT event_uid FROM events.cloud_event WHERE ce_source = 'urn:test:derive' ORDER BY occurred_at DESC LIMIT 50`,
      /ce_source_occurred_at_idx/,
    ],
    'attribute: device': [
      `SELECT event_uid FROM events.cloud_event WHERE device_id = 'boiler-7' ORDER BY occurred_at DESC LIMIT 50`,
      /device_id_occurred_at_idx/,
    ],
    'attribute: tag': [`SELECT event_uid FROM events.cloud_event WHERE tags @> ARRAY['heat']`, /tags_idx/],
    'attribute: extension': [
      `SELECT event_uid FROM events.cloud_event WHERE extensions @> '{"tags":"b, zone-3"}'`,
      MATCH_INDEX,
    ],
    'severity at or above error': [
      `SELECT event_uid FROM events.cloud_event WHERE severity_rank >= 50 ORDER BY occurred_at DESC LIMIT 50`,
      /occurred_at_severity_rank_idx/,
    ],
  };
  for (const [name, [query, index]] of Object.entries(shapes)) {
    it(`${name} uses an index`, async () => {
      const client = await pool.connect();
      try {
        await client.query('BEGIN');
        await client.query('SET LOCAL enable_seqscan = off');
        const { rows } = await client.query(`EXPLAIN ${query}`);
        await client.query('ROLLBACK');
        const plan = rows.map((r) => r['QUERY PLAN']).join('\n');
        expect(plan).not.toMatch(/Seq Scan|BitmapAnd/);
        expect(plan).toMatch(index);
      } finally {
        client.release();
      }
    });
  }

  // The statements the search sends (page and capped count) for the filters of migrations 0017 and
  // 0018, planned with their values as the search binds them, on a month of 5,000 analysed rows
  // (rolled back): with statistics, not on empty partitions where every path costs alike.
  const month = 'cloud_event_2031_03';
  const storeShapes: Record<string, [EventFilter, RegExp, RegExp]> = {
    'subject exact': [{ subject: 'orders/7' }, /ce_subject_occurred_at_idx/, /Index Cond: \(ce_subject = /],
    'subject prefix': [
      { subject: 'orders/7*' },
      /ce_subject_occurred_at_idx/,
      /Index Cond: \(\(ce_subject ~>=~ [^\n]+\) AND \(ce_subject ~<~ /,
    ],
    'source and id (an event name)': [
      { sources: ['urn:test:lookup'], ids: ['id-1'] },
      /ce_source_ce_id_idx/,
      /Index Cond: \(\(ce_source = [^\n]+\) AND \(ce_id = ANY/,
    ],
    'type and severity at or above error': [
      { types: ['t0'], minSeverity: SEVERE_RANK },
      /ce_type_occurred_at_severity_rank_idx/,
      /Index Cond: \(ce_type = /,
    ],
  };
  for (const [name, [filter, index, condition]] of Object.entries(storeShapes)) {
    it(`${name}: the page and the count read the index of its migration`, async () => {
      const client = await pool.connect();
      try {
        await client.query('BEGIN');
        await client.query(`SELECT events.create_month_partition('2031-03-01')`);
        // sql-witness: one source, 500 subjects (1 % of the rows start with `orders/7`), 10 types, one
        // event in a hundred an error (all of type t0).
        await client.query(
          `INSERT INTO events.cloud_event (occurred_at, ce_source, ce_id, ce_type, ce_subject, extensions, raw)
           SELECT '2031-03-02T00:00:00Z'::timestamptz + i * interval '1 second', 'urn:test:lookup', 'id-' || i,
                  't' || (i % 10), (CASE WHEN i % 2 = 0 THEN 'orders/' ELSE 'devices/' END) || (i % 500),
                  CASE WHEN i % 100 = 0 THEN '{"severity": "error"}'::jsonb ELSE '{}'::jsonb END, '{}'
             FROM generate_series(1, 5000) AS i`,
        );
        await client.query(`ANALYZE events.${month}`);
        for (const { text, values } of [searchStatement(filter, { limit: 50 }), countStatement(filter)]) {
          const { rows } = await client.query(`EXPLAIN ${text}`, values);
          const plan = rows.map((r) => r['QUERY PLAN']).join('\n');
          expect(plan).not.toMatch(new RegExp(`Seq Scan on ${month} `));
          expect(plan).toMatch(new RegExp(`(using|on) ${month}_${index.source}`));
          expect(plan).toMatch(condition);
        }
      } finally {
        await client.query('ROLLBACK');
        client.release();
      }
    });
  }

  it('GIN indexes keep fastupdate with a 16 MiB pending list, also on partitions created later', async () => {
    await pool.query(`SELECT events.create_month_partition('2031-01-01')`);
    const { rows } = await pool.query(
      `SELECT c.relname, c.reloptions FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid
        JOIN pg_am a ON a.oid = c.relam
        WHERE i.indrelid = 'events.cloud_event_2031_01'::regclass AND a.amname = 'gin' ORDER BY 1`,
    );
    expect(rows.map((r) => r.relname)).toEqual([
      'cloud_event_2031_01_search_doc_data_extensions_idx',
      'cloud_event_2031_01_tags_idx',
    ]);
    for (const r of rows) expect(r.reloptions).toEqual(['fastupdate=on', 'gin_pending_list_limit=16384']);
  });

  it('every partition, also one created later, has the statistics of type and source pairs', async () => {
    await pool.query(`SELECT events.create_month_partition('2031-02-01')`);
    const { rows } = await pool.query<{ relname: string; kinds: string[] }>(
      `SELECT c.relname, s.stxkind::text[] AS kinds
         FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
         LEFT JOIN pg_statistic_ext s ON s.stxrelid = c.oid AND s.stxname = c.relname || '_type_source'
        WHERE i.inhparent = 'events.cloud_event'::regclass`,
    );
    expect(rows.map((r) => r.relname)).toContain('cloud_event_2031_02');
    for (const r of rows) expect(r.kinds, r.relname).toEqual(['m']);
  });
});

describe('pools', () => {
  it('the read pool is read-only with a 2 s statement timeout', async () => {
    const read = createReadPool({ url });
    try {
      await expect(
        read.query(`INSERT INTO events.saved_search (owner, name, params) VALUES ('x', 'x', '')`),
      ).rejects.toMatchObject({ code: '25006' });
      const started = Date.now();
      await expect(read.query('SELECT pg_sleep(5)')).rejects.toMatchObject({ code: '57014' });
      expect(Date.now() - started).toBeLessThan(4_000);
    } finally {
      await read.end();
    }
  });

  it('publishes pool_connections_* gauges per pool', async () => {
    const registry = new Registry();
    const write = createWritePool({ url, registry });
    const read = createReadPool({ url, registry });
    try {
      const client = await write.connect();
      const text = await registry.metrics();
      client.release();
      expect(text).toContain('pool_connections_active{pool="observatory-write"} 1');
      expect(text).toContain('pool_connections_max{pool="observatory-write"} 6');
      expect(text).toContain('pool_connections_max{pool="observatory-read"} 8');
    } finally {
      await Promise.all([write.end(), read.end()]);
    }
  });
});
