/**
 * Consumer throughput benchmark: rows per second the consumer persists from a pre-filled topic,
 * next to a plain server-side `COPY` of the same rows into the same table as the ceiling, and the
 * consumer's peak resident memory (VmHWM) at the default batch size. Then, to show where the floor
 * is: the CPU per row of each party during the consumer run (consumer, PostgreSQL, Kafka), the
 * broker package's group member alone reading the same topic (with and without the consumer's
 * decoding), and COPYs of the same rows into scratch tables with the identity index only (with and
 * without the generated columns) and with no index at all.
 *
 *   node --conditions=source --import tsx bench/consume/run.ts        # BENCH_RECORDS=200000 default
 *
 * Starts its own Kafka and PostgreSQL (devstack), runs the compiled consumer as a child process
 * (`services/consumer/dist/main.js` after `tsc -b`, default configuration, authentication off), and
 * writes its section of bench/results/latest.md (bench/lib/report.ts). Bounded: it stops by itself
 * after BENCH_TIMEOUT_S (default 600).
 */
import { execFileSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { chmodSync, rmSync, writeFileSync } from 'node:fs';
import { cpus } from 'node:os';
import { join } from 'node:path';
import {
  brokerTopics,
  createConsumerClients,
  ensureTopics,
  readConsumerBrokerConfig,
  topicSpecs,
} from '@event-observatory/broker';
import { type ConsumedRecord, decodeRecord } from '@event-observatory/consumer';
import {
  createDatabase,
  kafkaClient,
  repoRoot,
  type ServiceProcess,
  startServiceProcess,
  startStack,
  tempDataDir,
} from '@event-observatory/devstack';
import { toKafkaRecord } from '@event-observatory/events';
import { migrate } from '@event-observatory/store';
import pg from 'pg';
import { cpuSeconds, machineTicks, postgresCpuSeconds, procStatus } from '../lib/proc.js';
import { benchRun } from '../lib/report.js';
import { COPY_COLUMNS as COLUMNS, copyLine, benchEvent as event } from './events.js';

const RECORDS = Number(process.env.BENCH_RECORDS ?? 200_000);
const TIMEOUT_MS = Number(process.env.BENCH_TIMEOUT_S ?? 600) * 1000;
const TOPICS = brokerTopics();
const TOPIC = TOPICS.topic;
const root = repoRoot();
const run = benchRun('consume');

/**
 * Reads the whole pre-filled topic with the broker package's group member alone (the seam the
 * consumer stream uses: a fresh group from the beginning, the service's fetch settings, no offset
 * commits); `work` sees every batch. Rate and CPU from the start to the last record.
 */
async function readTopic(
  bootstrapServers: string,
  kafkaPid: number,
  work: (records: ConsumedRecord[]) => void,
) {
  const config = readConsumerBrokerConfig({ BROKER_BOOTSTRAP_SERVERS: bootstrapServers });
  const member = createConsumerClients(config, { requestTimeoutMs: 30_000 }).groupMember({
    groupId: `bench-read-${randomUUID()}`,
    maxWaitTimeInMs: 250,
  });
  const sample = () => ({
    at: process.hrtime.bigint(),
    node: process.cpuUsage(),
    kafka: cpuSeconds(kafkaPid),
  });
  // Measured from the first batch on (the group join before it is not reading).
  let start = sample();
  let count = 0;
  const end = await new Promise<ReturnType<typeof sample>>((resolve, reject) => {
    member.onCrash(reject);
    member
      .run({
        topic: TOPIC,
        concurrency: 12,
        onBatch: async ({ records }) => {
          if (count === 0) start = sample();
          count += records.length;
          work(records);
          if (count >= RECORDS) resolve(sample());
        },
      })
      .catch(reject);
  });
  await member.stop();
  const node = process.cpuUsage(start.node);
  return {
    rate: RECORDS / (Number(end.at - start.at) / 1e9),
    nodeUs: (node.user + node.system) / RECORDS,
    kafkaUs: ((end.kafka - start.kafka) * 1e6) / RECORDS,
  };
}

/**
 * COPY of the rows file into `table` on one connection, after a CHECKPOINT: rows/s, the backend's
 * CPU per row and the whole PostgreSQL server's (background processes included) per row.
 */
async function timedCopy(client: pg.Client, postmasterPid: number, table: string, file: string) {
  await client.query('CHECKPOINT');
  // sql-witness: measures COPY into scratch tables and reads the server's counters, beside the store's insert.
  const backendPid = (await client.query('SELECT pg_backend_pid() AS pid')).rows[0].pid as number;
  const backend0 = cpuSeconds(backendPid);
  const server0 = postgresCpuSeconds(postmasterPid);
  const started = process.hrtime.bigint();
  await client.query(`COPY ${table} (${COLUMNS}) FROM '${file}'`);
  const seconds = Number(process.hrtime.bigint() - started) / 1e9;
  const { rows } = await client.query(
    `SELECT (SELECT count(*) FROM pg_index WHERE indrelid = $1::regclass)::int AS indexes,
            (SELECT count(*) FROM pg_attribute WHERE attrelid = $1::regclass AND attgenerated <> ''
              AND NOT attisdropped)::int AS generated`,
    [table],
  );
  return {
    rate: RECORDS / seconds,
    backendUs: ((cpuSeconds(backendPid) - backend0) * 1e6) / RECORDS,
    serverUs: ((postgresCpuSeconds(postmasterPid) - server0) * 1e6) / RECORDS,
    indexes: rows[0].indexes as number,
    generated: rows[0].generated as number,
  };
}

/** The consumer child process being measured (killed when the bench gives up or fails). */
let child: ServiceProcess | undefined;

interface RunStack {
  dataDir: string;
  bootstrapServers: string;
  databaseUrl: string;
  kafkaPid: number;
  postmasterPid: number;
}

/**
 * The compiled consumer in a fresh group, reading the whole topic into the emptied event table:
 * rates, peak RSS, the CPU of every party per row from the first stored row to the last, and the
 * consumer's own meters.
 */
async function runConsumer(s: RunStack, db: pg.Pool) {
  await db.query('TRUNCATE events.cloud_event');
  await db.query('DELETE FROM events.consumer_checkpoint');
  const nodeArgs = process.env.BENCH_NODE_ARGS?.split(' ').filter(Boolean);
  child = await startServiceProcess({
    name: 'consumer',
    build: 'dist',
    nodeArgs,
    dataDir: s.dataDir,
    env: {
      BROKER_BOOTSTRAP_SERVERS: s.bootstrapServers,
      BROKER_GROUP_ID: `bench-${randomUUID()}`,
      DATABASE_URL: s.databaseUrl,
      ADMIN_AUTH_ENABLED: 'false',
      OTEL_SDK_DISABLED: 'true',
      LOG_LEVEL: 'warn',
    },
  });
  const pid = child.pid()!;
  const { metricsUrl } = child;
  let peakBytes = 0;
  let cpu = 0;
  const rss = () => {
    peakBytes = Math.max(peakBytes, procStatus(pid, 'VmHWM'));
    const now = cpuSeconds(pid);
    if (!Number.isNaN(now)) cpu = now; // the last reading before the child exited
  };
  // CPU seconds of every party (and the machine's busy ticks) when the first row lands and when
  // the last one does.
  const parties = () => {
    const bench = process.cpuUsage();
    return {
      consumer: cpuSeconds(pid),
      postgres: postgresCpuSeconds(s.postmasterPid),
      kafka: cpuSeconds(s.kafkaPid),
      bench: (bench.user + bench.system) / 1e6,
      machine: machineTicks(),
    };
  };
  let atFirst = parties();
  let atDone = atFirst;
  let firstAt = 0;
  let firstCount = 0;
  let doneAt = 0;
  for (;;) {
    rss();
    // Progress from the checkpoint rows (written in the same transaction as the events; offsets
    // start at 0 on every partition, so their sum counts the records stored). A count(*) of the
    // event table every 100 ms would scan it and compete with the writer being measured.
    const { rows } = await db.query(
      'SELECT coalesce(sum(next_offset), 0)::int AS n FROM events.consumer_checkpoint',
    );
    const n = rows[0].n as number;
    if (n > 0 && firstAt === 0) {
      firstAt = Date.now();
      firstCount = n;
      atFirst = parties();
    }
    if (n >= RECORDS) {
      doneAt = Date.now();
      atDone = parties();
      break;
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  rss();
  const stored = await db.query('SELECT count(*)::int AS n FROM events.cloud_event');
  if (stored.rows[0].n !== RECORDS) throw new Error(`expected ${RECORDS} rows, found ${stored.rows[0].n}`);
  const span = await db.query(
    'SELECT extract(epoch FROM max(ingested_at) - min(ingested_at))::float8 AS s FROM events.cloud_event',
  );
  // Autovacuum runs on the partitions while the consumer writes (its CPU is in the PostgreSQL share).
  const vacuums = (
    await db.query(
      `SELECT coalesce(sum(autovacuum_count), 0)::int AS vacuums, coalesce(sum(autoanalyze_count), 0)::int AS analyzes
         FROM pg_stat_user_tables WHERE relname LIKE 'cloud_event%'`,
    )
  ).rows[0] as { vacuums: number; analyzes: number };
  // Where the consumer's time went, from its own meters.
  const exposition = await (await fetch(`${metricsUrl}/metrics`)).text();
  const sumOf = (name: string) =>
    exposition
      .split('\n')
      .filter((l) => l.startsWith(name))
      .reduce((sum, l) => sum + Number(l.slice(l.lastIndexOf(' ') + 1)), 0);
  await child.stop();
  child = undefined;
  const steadyRows = RECORDS - firstCount;
  const usPerRow = (party: 'consumer' | 'postgres' | 'kafka' | 'bench') =>
    ((atDone[party] - atFirst[party]) * 1e6) / steadyRows;
  const consumerSeconds = (doneAt - firstAt) / 1000;
  return {
    rate: steadyRows / consumerSeconds,
    spanRate: RECORDS / (span.rows[0].s as number),
    peakMiB: peakBytes / 1048576,
    /** Consumer CPU per 1,000 rows in ms, boot included. */
    cpuMsPerKRows: (cpu / RECORDS) * 1e6,
    us: {
      consumer: usPerRow('consumer'),
      postgres: usPerRow('postgres'),
      kafka: usPerRow('kafka'),
      bench: usPerRow('bench'),
    },
    machineBusy:
      (atDone.machine.busy - atFirst.machine.busy) / (atDone.machine.total - atFirst.machine.total),
    vacuums,
    groups: sumOf('consume_batch_size_count'),
    groupRecords: sumOf('consume_batch_size_sum'),
    writeSeconds: sumOf('consume_batch_latency_seconds_sum'),
    decodeSeconds: sumOf('consume_decode_duration_seconds_sum'),
    consumerSeconds,
  };
}

async function main() {
  const dir = tempDataDir('bench-consume-');
  const deadline = setTimeout(() => {
    console.error(`benchmark exceeded ${TIMEOUT_MS / 1000}s; giving up`);
    // process.exit skips the finally below: devstack's exit hook stops the consumer child.
    process.exit(2);
  }, TIMEOUT_MS);
  deadline.unref();
  const stack = await startStack({ dataDir: dir, topics: [] });
  const kafkaPid = stack.kafka.pid()!;
  const postmasterPid = stack.postgres.pid()!;
  try {
    const databaseUrl = await createDatabase(stack.databaseUrl, 'bench_consume');
    await migrate({ url: databaseUrl });
    const kafka = kafkaClient(stack.bootstrapServers, { clientId: 'bench' });
    const admin = kafka.admin();
    await admin.connect();
    await ensureTopics(admin, topicSpecs(TOPICS));

    // Pre-fill the topic.
    const producer = kafka.producer({ allowAutoTopicCreation: false });
    await producer.connect();
    const now = Date.now();
    const fillStarted = Date.now();
    const chunk = 2_000;
    for (let i = 0; i < RECORDS; i += chunk) {
      const messages = [];
      for (let j = i; j < Math.min(RECORDS, i + chunk); j++) messages.push(toKafkaRecord(event(j, now)));
      await producer.send({ topic: TOPIC, acks: -1, messages });
    }
    await producer.disconnect();
    const fillSeconds = (Date.now() - fillStarted) / 1000;
    console.log(`pre-filled ${RECORDS} records in ${fillSeconds.toFixed(1)} s`);

    // The consumer as a child process, default batch settings.
    const db = new pg.Pool({ connectionString: databaseUrl, max: 2 });
    // The compiled consumer (tsc -b), as a container runs it.
    execFileSync('npx', ['tsc', '-b', 'services/consumer'], { cwd: root, stdio: 'inherit' });
    const r = await runConsumer({ ...stack, dataDir: dir, databaseUrl, kafkaPid, postmasterPid }, db);
    console.log(`consumer: ${Math.round(r.rate)} rows/s`);

    // The group member alone over the same topic: fetching only, then fetching and the consumer's
    // decoding.
    let decodeFailures = 0;
    const readOnly = await readTopic(stack.bootstrapServers, kafkaPid, () => {});
    const readDecode = await readTopic(stack.bootstrapServers, kafkaPid, (records) => {
      for (const record of records) if (!decodeRecord(record, Date.now()).ok) decodeFailures++;
    });
    if (decodeFailures > 0) throw new Error(`${decodeFailures} records did not decode`);

    // The ceiling: a plain COPY of the same rows into the same (emptied) table.
    const file = join(dir, 'rows.copy');
    const lines: string[] = [];
    const partitions = await admin.fetchTopicOffsets(TOPIC);
    await admin.disconnect();
    for (let i = 0; i < RECORDS; i++) {
      const e = event(i, now);
      const rec = toKafkaRecord(e);
      const decoded = decodeRecord(
        {
          topic: TOPIC,
          partition: i % partitions.length,
          offset: String(i),
          key: Buffer.from(rec.key),
          value: rec.value,
          headers: rec.headers,
          timestamp: String(now),
        },
        Date.now(),
      );
      if (!decoded.ok) throw new Error(`bench event ${i} does not decode: ${decoded.detail}`);
      lines.push(copyLine(decoded.row));
    }
    writeFileSync(file, `${lines.join('\n')}\n`);
    chmodSync(file, 0o644);
    await db.end();
    const client = new pg.Client({ connectionString: databaseUrl });
    await client.connect();
    await client.query('TRUNCATE events.cloud_event');
    const copyFull = await timedCopy(client, postmasterPid, 'events.cloud_event', file);
    const copyRate = copyFull.rate;
    // Scratch tables shaped like the event table (LIKE copies the columns of the partitioned parent;
    // without INCLUDING GENERATED its generated columns become plain ones, left NULL by the COPY).
    const identity = 'CREATE UNIQUE INDEX ON bench_scratch (occurred_at, ce_source, ce_id)';
    const scratch = async (like: string, index: string) => {
      await client.query(`CREATE TABLE bench_scratch (LIKE events.cloud_event ${like})`);
      if (index) await client.query(index);
      const result = await timedCopy(client, postmasterPid, 'bench_scratch', file);
      await client.query('DROP TABLE bench_scratch');
      return result;
    };
    const copyIdentity = await scratch('INCLUDING DEFAULTS INCLUDING GENERATED', identity);
    const copyIdentityPlain = await scratch('INCLUDING DEFAULTS', identity);
    const copyHeap = await scratch('INCLUDING DEFAULTS', '');
    await client.end();

    const int = (n: number) => Math.round(n).toLocaleString('en-US');
    const us = (n: number) => `${n.toFixed(0)} µs`;
    const pct = (n: number) => `${(n * 100).toFixed(0)} %`;
    const shape = (c: typeof copyFull) =>
      `${c.indexes} ${c.indexes === 1 ? 'index' : 'indexes'}, ${c.generated} generated columns`;
    const copyRow = (label: string, c: typeof copyFull) =>
      `| ${label} (${shape(c)}) | ${int(c.rate)} | backend ${us(c.backendUs)}, all PostgreSQL processes ${us(c.serverUs)} |`;
    const partySum = r.us.consumer + r.us.postgres + r.us.kafka + r.us.bench;
    const report = `# Consumer throughput (bench/consume)

Kafka and PostgreSQL from devstack on the same machine; topic \`${TOPIC}\` with 12 partitions
pre-filled with ${RECORDS} binary-mode CloudEvents (~${Math.round(
      lines.reduce((s, l) => s + l.length, 0) / RECORDS,
    )} bytes a row); the consumer with its default configuration (batch 500, window 250 ms, two
groups written at once, write pool 6) as a child process in a fresh group; every index of the
migrations in place. Rates on a busy machine are lower bounds: run it alone.

| measure | value | target |
|---|---|---|
| consumer rows/s (first row to last) | ${int(r.rate)} | >= 20,000 |
| consumer rows/s (by ingested_at span) | ${int(r.spanRate)} | |
| consumer / COPY (same rows, same table) | ${pct(r.rate / copyRate)} | >= 75 % |
| consumer CPU a row (first row to last) | ${us(r.us.consumer)} | |
| consumer CPU per 1,000 rows (user+system, boot included) | ${r.cpuMsPerKRows.toFixed(0)} ms | |
| PostgreSQL CPU a row (all processes) | ${us(r.us.postgres)} | |
| Kafka broker CPU a row | ${us(r.us.kafka)} | |
| consumer peak RSS (VmHWM) | ${r.peakMiB.toFixed(0)} MiB | <= 384 MiB |

Plain COPY of the same rows into the same table: ${int(copyRate)} rows/s (the ceiling).

Where the floor is (same run, same rows, one step after the other; CPU is user+system from
\`/proc\`, per row or record):

| step | rows/s | CPU a row |
|---|---|---|
| consumer run, by party (first row to last, machine ${pct(r.machineBusy)} busy) | ${int(r.rate)} | consumer ${us(r.us.consumer)}, PostgreSQL (all processes) ${us(r.us.postgres)}, Kafka broker ${us(r.us.kafka)}, bench polling ${us(r.us.bench)}; sum ${us(partySum)} = at most ${int((cpus().length * 1e6) / partySum)} rows/s on ${cpus().length} cores |
${copyRow('COPY into events.cloud_event, partitioned, as above', copyFull)}
${copyRow('COPY into a scratch table, identity index only', copyIdentity)}
${copyRow('COPY into a scratch table, identity index only, no generated columns', copyIdentityPlain)}
${copyRow('COPY into a scratch table, no index, no generated columns', copyHeap)}
| group member alone: fresh group, service fetch settings, batches counted (records/s) | ${int(readOnly.rate)} | Node ${us(readOnly.nodeUs)}, Kafka broker ${us(readOnly.kafkaUs)} |
| group member + the consumer's \`decodeRecord\` of every record (records/s) | ${int(readDecode.rate)} | Node ${us(readDecode.nodeUs)}, Kafka broker ${us(readDecode.kafkaUs)} |

PostgreSQL during the consumer run: the writer's backends, background processes and autovacuum
(${r.vacuums.vacuums} vacuums and ${r.vacuums.analyzes} analyzes of event partitions by its end).
Scratch tables: \`CREATE TABLE ... (LIKE events.cloud_event INCLUDING DEFAULTS [INCLUDING GENERATED])\`
plus \`UNIQUE (occurred_at, ce_source, ce_id)\`, not partitioned, dropped after their COPY; the counts
of indexes and generated columns above are read from the catalog. Without generated columns
\`severity_rank\` and \`search_doc\` stay NULL (not computed).

Consumer meters (groups being processed: decode of what was not decoded ahead, write, commit of
rows and checkpoints, summed over the groups in flight): ${r.groups} groups, ${(r.groupRecords / r.groups).toFixed(0)} records a group on average; ${r.writeSeconds.toFixed(1)} s writing in the ${r.consumerSeconds.toFixed(1)} s run (${pct(r.writeSeconds / r.consumerSeconds)}); decoding ${r.decodeSeconds.toFixed(1)} s in all.

Pre-filling the topic took ${fillSeconds.toFixed(1)} s. The consumer ran compiled
(\`services/consumer/dist/main.js\`).
`;
    run.write(report, { kafkaVersion: stack.kafka.version });
  } finally {
    await child?.kill();
    await stack.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

await main();
