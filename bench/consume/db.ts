/**
 * Database-only comparison of write shapes (no broker): the benchmark's rows written in 500-row
 * groups, one transaction each with the checkpoint upsert, two groups at once (as the consumer;
 * CONSUMER_BATCH_SIZE and CONSUMER_WRITE_CONCURRENCY change them), against a plain COPY, on a
 * fresh table each time. Prints rows/s, PostgreSQL's CPU a row (all its processes) and this process's CPU a
 * row (encoding and the client) per variant.
 *
 *   node --conditions=source --import tsx bench/consume/db.ts [variant...]   # BENCH_RECORDS=100000
 *
 * Variants:
 * - copy: one server-side COPY of every row (the ceiling; not open to the writer role, whom
 *   PostgreSQL refuses COPY FROM into a table under row-level security);
 * - insert: the consumer's writer (`EventWriter`: a plain INSERT of the arrays, ON CONFLICT only
 *   for a group that meets a stored row);
 * - skip: the ON CONFLICT DO NOTHING statement for every group (the store's `insertEvents`);
 * - stage: COPY FROM STDIN into a temporary table, then INSERT ... SELECT ... ON CONFLICT DO
 *   NOTHING from it.
 */
import { chmodSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { EVENT_TOPIC } from '@event-observatory/broker';
import { type ConsumedRecord, checkpointsOf, decodeRecord, EventWriter } from '@event-observatory/consumer';
import { createDatabase, startPostgres, tempDataDir } from '@event-observatory/devstack';
import { toKafkaRecord } from '@event-observatory/events';
import {
  type Checkpoint,
  createWritePool,
  type EventInsertRow,
  insertEvents,
  migrate,
  upsertCheckpoints,
} from '@event-observatory/store';
import pg from 'pg';
import { postgresCpuSeconds } from '../lib/proc.js';
import { benchEvent, COPY_COLUMNS, copyLine } from './events.js';

const RECORDS = Number(process.env.BENCH_RECORDS ?? 100_000);
const BATCH = Number(process.env.CONSUMER_BATCH_SIZE ?? 500);
/** Groups written at once, as the consumer's CONSUMER_WRITE_CONCURRENCY (default 2). */
const WRITERS = Number(process.env.CONSUMER_WRITE_CONCURRENCY ?? 2);
const TOPIC = EVENT_TOPIC;
/** MIGRATIONS_DIR: a copy of migrations/ (to measure without an index); default the repository's. */
const MIGRATIONS = process.env.MIGRATIONS_DIR ? { dir: process.env.MIGRATIONS_DIR } : {};

interface CopyConnection {
  sendCopyFromChunk(chunk: Buffer): void;
  endCopyFrom(): void;
}

/** `COPY ... FROM STDIN` of `data` with node-postgres alone: its Query, answering the server's CopyInResponse. */
class CopyIn extends (pg.Query as unknown as new (text: string) => pg.Submittable) {
  callback?: (err: Error | null) => void;
  constructor(
    text: string,
    private readonly data: Buffer,
  ) {
    super(text);
  }
  handleCopyInResponse(connection: CopyConnection): void {
    connection.sendCopyFromChunk(this.data);
    connection.endCopyFrom();
  }
}

function copyIn(client: pg.PoolClient, text: string, data: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const query = new CopyIn(text, Buffer.from(data));
    query.callback = (err) => (err ? reject(err) : resolve());
    client.query(query);
  });
}

/** The `stage` variant's group: COPY into the session's staging table, then one INSERT from it. */
async function writeStaged(pool: pg.Pool, rows: EventInsertRow[], checkpoints: Checkpoint[], group: string) {
  const client = await pool.connect();
  try {
    await client.query('BEGIN');
    await client.query(
      `CREATE TEMP TABLE IF NOT EXISTS stage (LIKE events.cloud_event INCLUDING DEFAULTS) ON COMMIT DELETE ROWS`,
    );
    await copyIn(client, `COPY stage (${COPY_COLUMNS}) FROM STDIN`, `${rows.map(copyLine).join('\n')}\n`);
    await client.query({
      name: 'bench_insert_staged',
      text: `INSERT INTO events.cloud_event (${COPY_COLUMNS}) SELECT ${COPY_COLUMNS} FROM stage
             ON CONFLICT DO NOTHING RETURNING ce_type`,
    });
    await upsertCheckpoints(client, group, checkpoints);
    await client.query('COMMIT');
  } finally {
    client.release();
  }
}

const dir = tempDataDir('bench-consume-db-');
const pgHandle = await startPostgres({ dataDir: join(dir, 'pg') });
try {
  const url = await createDatabase(pgHandle.url, 'bench_db');
  await migrate({ url, ...MIGRATIONS });
  const now = Date.now();
  const records: ConsumedRecord[] = [];
  const rows: EventInsertRow[] = [];
  for (let i = 0; i < RECORDS; i++) {
    const rec = toKafkaRecord(benchEvent(i, now));
    const r: ConsumedRecord = {
      topic: TOPIC,
      partition: i % 12,
      offset: String(Math.floor(i / 12)),
      key: Buffer.from(rec.key),
      value: rec.value,
      headers: rec.headers,
      timestamp: String(now),
    };
    const d = decodeRecord(r, Date.now());
    if (!d.ok) throw new Error(d.detail);
    records.push(r);
    rows.push(d.row);
  }
  // Loads, COPY and VACUUM of millions of rows: beyond the write pool's 30 s statement timeout.
  const pool = createWritePool({ url, statementTimeoutMs: 3_600_000 });
  const variants =
    process.argv.slice(2).length > 0 ? process.argv.slice(2) : ['copy', 'insert', 'skip', 'stage'];
  const postmasterPid = pgHandle.pid()!;
  const groups: Record<
    string,
    (rows: EventInsertRow[], checkpoints: Checkpoint[], group: string) => Promise<unknown>
  > = {
    insert: (part, cps, group) => new EventWriter(pool, group).writeWithCheckpoints(part, cps),
    skip: async (part, cps, group) => {
      const client = await pool.connect();
      try {
        await client.query('BEGIN');
        await insertEvents(client, part);
        await upsertCheckpoints(client, group, cps);
        await client.query('COMMIT');
      } finally {
        client.release();
      }
    },
    stage: (part, cps, group) => writeStaged(pool, part, cps, group),
  };
  for (const v of variants) {
    // sql-witness: loads and empties the table with COPY and TRUNCATE, the ceiling the consumer is measured against; stages rows the same way.
    await pool.query('TRUNCATE events.cloud_event, events.consumer_checkpoint');
    await pool.query('CHECKPOINT');
    let file = '';
    if (v === 'copy') {
      file = join(dir, 'rows.copy');
      writeFileSync(file, `${rows.map(copyLine).join('\n')}\n`);
      chmodSync(file, 0o644);
    }
    const write = groups[v];
    if (v !== 'copy' && !write) throw new Error(`unknown variant ${v}`);
    const pg0 = postgresCpuSeconds(postmasterPid);
    const node0 = process.cpuUsage();
    const t0 = process.hrtime.bigint();
    if (v === 'copy') await pool.query(`COPY events.cloud_event (${COPY_COLUMNS}) FROM '${file}'`);
    else {
      // Each writer takes every WRITERS-th group, under a consumer group of its own, so that
      // concurrent transactions never upsert the same checkpoint row (as the consumer's groups,
      // which never share a partition).
      const writer = async (w: number) => {
        for (let i = w * BATCH; i < RECORDS; i += WRITERS * BATCH) {
          await write!(rows.slice(i, i + BATCH), checkpointsOf(records.slice(i, i + BATCH)), `bench-${w}`);
        }
      };
      await Promise.all(Array.from({ length: WRITERS }, (_, w) => writer(w)));
    }
    const s = Number(process.hrtime.bigint() - t0) / 1e9;
    const node = process.cpuUsage(node0);
    const perRow = (seconds: number) => `${((seconds * 1e6) / RECORDS).toFixed(0)} µs`;
    console.log(
      `${v}: ${Math.round(RECORDS / s)} rows/s (${s.toFixed(1)} s); CPU a row: PostgreSQL ${perRow(
        postgresCpuSeconds(postmasterPid) - pg0,
      )}, this process ${perRow((node.user + node.system) / 1e6)}`,
    );
  }
  await pool.end();
} finally {
  await pgHandle.stop();
  rmSync(dir, { recursive: true, force: true });
}
