/**
 * Database-only comparison of write shapes (no broker): the benchmark's rows written as the
 * consumer writes them (500-row groups, one statement each, with the checkpoint upsert in the same
 * transaction) against a plain COPY, on a fresh table each time.
 *
 *   node --conditions=source --import tsx bench/consume/db.ts [variant...]   # BENCH_RECORDS=100000
 *
 * Variants: copy, insert (the consumer's writer). Prints rows/s per variant.
 */
import { chmodSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { EVENT_TOPIC } from '@event-observatory/broker';
import { type ConsumedRecord, checkpointsOf, decodeRecord, EventWriter } from '@event-observatory/consumer';
import { createDatabase, startPostgres, tempDataDir } from '@event-observatory/devstack';
import { toKafkaRecord } from '@event-observatory/events';
import { createWritePool, type EventInsertRow, migrate } from '@event-observatory/store';
import { benchEvent, COPY_COLUMNS, copyLine } from './events.js';

const RECORDS = Number(process.env.BENCH_RECORDS ?? 100_000);
const BATCH = Number(process.env.CONSUMER_BATCH_SIZE ?? 500);
const TOPIC = EVENT_TOPIC;
/** MIGRATIONS_DIR: a copy of migrations/ (to measure without an index); default the repository's. */
const MIGRATIONS = process.env.MIGRATIONS_DIR ? { dir: process.env.MIGRATIONS_DIR } : {};

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
    process.argv.slice(2).length > 0 ? process.argv.slice(2) : ['copy', 'insert', 'copy', 'insert'];
  for (const v of variants) {
    // sql-witness: loads and empties the table with COPY and TRUNCATE, the ceiling the consumer is measured against.
    await pool.query('TRUNCATE events.cloud_event, events.consumer_checkpoint');
    await pool.query('CHECKPOINT');
    const t0 = process.hrtime.bigint();
    if (v === 'copy') {
      const file = join(dir, 'rows.copy');
      writeFileSync(file, `${rows.map(copyLine).join('\n')}\n`);
      chmodSync(file, 0o644);
      const t1 = process.hrtime.bigint();
      await pool.query(`COPY events.cloud_event (${COPY_COLUMNS}) FROM '${file}'`);
      const s = Number(process.hrtime.bigint() - t1) / 1e9;
      console.log(`${v}: ${Math.round(RECORDS / s)} rows/s (${s.toFixed(1)} s)`);
      continue;
    }
    const writer = new EventWriter(pool, 'bench');
    for (let i = 0; i < RECORDS; i += BATCH) {
      await writer.writeWithCheckpoints(rows.slice(i, i + BATCH), checkpointsOf(records.slice(i, i + BATCH)));
    }
    const s = Number(process.hrtime.bigint() - t0) / 1e9;
    console.log(`${v}: ${Math.round(RECORDS / s)} rows/s (${s.toFixed(1)} s)`);
  }
  await pool.end();
} finally {
  await pgHandle.stop();
  rmSync(dir, { recursive: true, force: true });
}
