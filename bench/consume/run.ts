/**
 * Consumer throughput benchmark (issues 4 and 18): rows per second the consumer persists from a
 * pre-filled topic, once per Kafka client of its group member (`KAFKA_CLIENT`: kafkajs, then
 * `@platformatic/kafka`; `BENCH_CLIENTS=platformatic,kafkajs` swaps the order), next to a plain
 * server-side `COPY` of the same rows into the same table as the ceiling, and the consumer's peak
 * resident memory (VmHWM) at the default batch size. Then, to show where the floor is: the CPU per
 * row of each party during each consumer run (consumer, PostgreSQL, Kafka), each client's group
 * member alone reading the same topic (with and without the consumer's decoding), and COPYs of
 * the same rows into scratch tables with the identity index only (with and without the generated
 * columns) and with no index at all.
 *
 *   node --conditions=source --import tsx bench/consume/run.ts        # BENCH_RECORDS=200000 default
 *
 * Starts its own Kafka and PostgreSQL (devstack), runs the compiled consumer as a child process
 * (`services/consumer/dist/main.js` after `tsc -b`, default configuration, authentication off), and writes
 * `bench/results/consume.md` (and the two rates bench/hotpath quotes to `consume.json`). Bounded: it stops by itself after BENCH_TIMEOUT_S (default 600).
 */
import { execFileSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { chmodSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, totalmem } from 'node:os';
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
  freePort,
  repoRoot,
  type ServiceProcess,
  startServiceProcess,
  startStack,
  tempDataDir,
} from '@event-observatory/devstack';
import { toKafkaRecord } from '@event-observatory/events';
import { migrate } from '@event-observatory/store';
import { Kafka, logLevel } from 'kafkajs';
import pg from 'pg';
import { cpuSeconds, machineTicks, postgresCpuSeconds, procStatus } from '../lib/proc.js';
import { COPY_COLUMNS as COLUMNS, copyLine, benchEvent as event } from './events.js';

const RECORDS = Number(process.env.BENCH_RECORDS ?? 200_000);
const TIMEOUT_MS = Number(process.env.BENCH_TIMEOUT_S ?? 600) * 1000;
const TOPICS = brokerTopics();
const TOPIC = TOPICS.topic;
const root = repoRoot();

const CLIENTS = (process.env.BENCH_CLIENTS ?? 'kafkajs,platformatic').split(',') as Client[];
type Client = 'kafkajs' | 'platformatic';

/**
 * Reads the whole pre-filled topic with `client`'s group member alone (the seam the consumer
 * stream uses: a fresh group from the beginning, the service's fetch settings, no offset commits);
 * `work` sees every batch. Rate and CPU from the start to the last record.
 */
async function readTopic(
  client: Client,
  bootstrapServers: string,
  kafkaPid: number,
  work: (records: ConsumedRecord[]) => void,
) {
  const config = readConsumerBrokerConfig({
    BROKER_BOOTSTRAP_SERVERS: bootstrapServers,
    KAFKA_CLIENT: client,
  });
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

type ConsumerRun = Awaited<ReturnType<typeof runConsumer>>;

/**
 * The compiled consumer with `client`'s group member (`KAFKA_CLIENT`) in a fresh group, reading the
 * whole topic into the emptied event table: rates, peak RSS, the CPU of every party per row from the
 * first stored row to the last, and the consumer's own meters.
 */
async function runConsumer(client: Client, s: RunStack, db: pg.Pool) {
  await db.query('TRUNCATE events.cloud_event');
  await db.query('DELETE FROM events.consumer_checkpoint');
  const adminPort = await freePort();
  const nodeArgs = process.env.BENCH_NODE_ARGS?.split(' ').filter(Boolean);
  child = await startServiceProcess({
    name: 'consumer',
    build: 'dist',
    nodeArgs,
    port: adminPort,
    dataDir: s.dataDir,
    env: {
      BROKER_BOOTSTRAP_SERVERS: s.bootstrapServers,
      BROKER_GROUP_ID: `bench-${client}-${randomUUID()}`,
      KAFKA_CLIENT: client,
      DATABASE_URL: s.databaseUrl,
      AUTH_ENABLED: 'false',
      OTEL_SDK_DISABLED: 'true',
      LOG_LEVEL: 'warn',
    },
    onLine: (line, stream) => process[stream].write(`${line}\n`),
  });
  const pid = child.pid()!;
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
  const exposition = await (await fetch(`http://127.0.0.1:${adminPort}/metrics`)).text();
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
    client,
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
  const loadAtStart = loadavg();
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
    const kafka = new Kafka({
      clientId: 'bench',
      brokers: [stack.bootstrapServers],
      logLevel: logLevel.NOTHING,
    });
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

    // The consumer as a child process, default batch settings, once per client.
    const db = new pg.Pool({ connectionString: databaseUrl, max: 2 });
    // The compiled consumer (tsc -b), as a container runs it.
    execFileSync('npx', ['tsc', '-b', 'services/consumer'], { cwd: root, stdio: 'inherit' });
    const runs: ConsumerRun[] = [];
    for (const client of CLIENTS) {
      runs.push(
        await runConsumer(client, { ...stack, dataDir: dir, databaseUrl, kafkaPid, postmasterPid }, db),
      );
      console.log(`${client}: ${Math.round(runs.at(-1)!.rate)} rows/s`);
    }

    // Each client's group member alone over the same topic: fetching only, then fetching and the
    // consumer's decoding.
    let decodeFailures = 0;
    const reads = [];
    for (const client of CLIENTS) {
      const readOnly = await readTopic(client, stack.bootstrapServers, kafkaPid, () => {});
      const readDecode = await readTopic(client, stack.bootstrapServers, kafkaPid, (records) => {
        for (const r of records) if (!decodeRecord(r).ok) decodeFailures++;
      });
      reads.push({ client, readOnly, readDecode });
    }
    if (decodeFailures > 0) throw new Error(`${decodeFailures} records did not decode`);

    // The ceiling: a plain COPY of the same rows into the same (emptied) table.
    const file = join(dir, 'rows.copy');
    const lines: string[] = [];
    const partitions = await admin.fetchTopicOffsets(TOPIC);
    await admin.disconnect();
    for (let i = 0; i < RECORDS; i++) {
      const e = event(i, now);
      const rec = toKafkaRecord(e);
      const decoded = decodeRecord({
        topic: TOPIC,
        partition: i % partitions.length,
        offset: String(i),
        key: Buffer.from(rec.key),
        value: rec.value,
        headers: rec.headers,
        timestamp: String(now),
      });
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
    const partySum = (r: ConsumerRun) => r.us.consumer + r.us.postgres + r.us.kafka + r.us.bench;
    // platformatic against kafkajs, where both ran: above 1 is more (rows/s) or more CPU (a row).
    const kafkajs = runs.find((r) => r.client === 'kafkajs');
    const platformatic = runs.find((r) => r.client === 'platformatic');
    const versus = (of: (r: ConsumerRun) => number) =>
      kafkajs && platformatic ? `${(of(platformatic) / of(kafkajs)).toFixed(2)}x` : 'n/a';
    const measure = (label: string, of: (r: ConsumerRun) => string, ratio: string, target: string) =>
      `| ${label} | ${runs.map(of).join(' | ')} | ${ratio} | ${target} |`;
    const report = `# Consumer throughput (bench/consume)

Command: \`PATH="$(./scripts/lts-node.sh):$PATH" node --conditions=source --import tsx bench/consume/run.ts\` (BENCH_RECORDS=${RECORDS}, BENCH_CLIENTS=${CLIENTS.join(',')})

Machine: ${cpus().length} cores (${cpus()[0]?.model ?? 'unknown'}), ${(totalmem() / 2 ** 30).toFixed(0)} GiB, Node.js ${process.version}.
Run: ${new Date().toISOString()}. Kafka ${stack.kafka.version} and PostgreSQL from devstack on the same machine; topic
\`${TOPIC}\` with 12 partitions pre-filled with ${RECORDS} binary-mode CloudEvents (~${Math.round(
      lines.reduce((s, l) => s + l.length, 0) / RECORDS,
    )} bytes a row); the consumer with its default configuration (batch 500, window 250 ms, two
groups written at once, write pool 6) as a child process, once per Kafka client of its group member
(\`KAFKA_CLIENT\`, in the order of the columns, each in a fresh group into the emptied table); every
index of the migrations in place.
Run it alone on the machine: \`flock /work/helpers/bench.lock <command>\` where benchmarks share it.
History and analysis: [services/consumer/README.md](../../services/consumer/README.md#throughput).

| measure | ${runs.map((r) => r.client).join(' | ')} | platformatic / kafkajs | target |
|---|${runs.map(() => '---|').join('')}---|---|
${measure(
  'consumer rows/s (first row to last)',
  (r) => int(r.rate),
  versus((r) => r.rate),
  '>= 20,000',
)}
${measure(
  'consumer rows/s (by ingested_at span)',
  (r) => int(r.spanRate),
  versus((r) => r.spanRate),
  '',
)}
${measure('consumer / COPY (same rows, same table)', (r) => pct(r.rate / copyRate), '', '>= 60 %')}
${measure(
  'consumer CPU a row (first row to last)',
  (r) => us(r.us.consumer),
  versus((r) => r.us.consumer),
  '',
)}
${measure(
  'consumer CPU per 1,000 rows (user+system, boot included)',
  (r) => `${r.cpuMsPerKRows.toFixed(0)} ms`,
  versus((r) => r.cpuMsPerKRows),
  '',
)}
${measure(
  'PostgreSQL CPU a row (all processes)',
  (r) => us(r.us.postgres),
  versus((r) => r.us.postgres),
  '',
)}
${measure(
  'Kafka broker CPU a row',
  (r) => us(r.us.kafka),
  versus((r) => r.us.kafka),
  '',
)}
${measure(
  'consumer peak RSS (VmHWM)',
  (r) => `${r.peakMiB.toFixed(0)} MiB`,
  versus((r) => r.peakMiB),
  '<= 384 MiB',
)}

Plain COPY of the same rows into the same table: ${int(copyRate)} rows/s (the ceiling).

Where the floor is (same run, same rows, one step after the other; CPU is user+system from
\`/proc\`, per row or record):

| step | rows/s | CPU a row |
|---|---|---|
${runs
  .map(
    (r) =>
      `| consumer run with ${r.client}, by party (first row to last, machine ${pct(r.machineBusy)} busy) | ${int(r.rate)} | consumer ${us(r.us.consumer)}, PostgreSQL (all processes) ${us(r.us.postgres)}, Kafka broker ${us(r.us.kafka)}, bench polling ${us(r.us.bench)}; sum ${us(partySum(r))} = at most ${int((cpus().length * 1e6) / partySum(r))} rows/s on ${cpus().length} cores |`,
  )
  .join('\n')}
${copyRow('COPY into events.cloud_event, partitioned, as above', copyFull)}
${copyRow('COPY into a scratch table, identity index only', copyIdentity)}
${copyRow('COPY into a scratch table, identity index only, no generated columns', copyIdentityPlain)}
${copyRow('COPY into a scratch table, no index, no generated columns', copyHeap)}
${reads
  .map(
    ({ client, readOnly, readDecode }) =>
      `| ${client} group member alone: fresh group, service fetch settings, batches counted (records/s) | ${int(readOnly.rate)} | Node ${us(readOnly.nodeUs)}, Kafka broker ${us(readOnly.kafkaUs)} |
| ${client} group member + the consumer's \`decodeRecord\` of every record (records/s) | ${int(readDecode.rate)} | Node ${us(readDecode.nodeUs)}, Kafka broker ${us(readDecode.kafkaUs)} |`,
  )
  .join('\n')}

PostgreSQL during the consumer runs: the writer's backends, background processes and autovacuum
(${runs.map((r) => `${r.vacuums.vacuums} vacuums and ${r.vacuums.analyzes} analyzes of event partitions by the end of the ${r.client} run`).join('; ')}).
Scratch tables: \`CREATE TABLE ... (LIKE events.cloud_event INCLUDING DEFAULTS [INCLUDING GENERATED])\`
plus \`UNIQUE (occurred_at, ce_source, ce_id)\`, not partitioned, dropped after their COPY; the counts
of indexes and generated columns above are read from the catalog. Without generated columns
\`severity_rank\` and \`search_doc\` stay NULL (not computed).

Consumer meters (groups being processed: decode of what was not decoded ahead, write, commit of
rows and checkpoints, summed over the groups in flight):
${runs
  .map(
    (r) =>
      `- ${r.client}: ${r.groups} groups, ${(r.groupRecords / r.groups).toFixed(0)} records a group on average; ${r.writeSeconds.toFixed(1)} s in the ${r.consumerSeconds.toFixed(1)} s run (${pct(r.writeSeconds / r.consumerSeconds)}); decoding ${r.decodeSeconds.toFixed(1)} s in all.`,
  )
  .join('\n')}

Load average when the run started: ${loadAtStart
      .map((l) => l.toFixed(1))
      .join(', ')}; when it ended: ${loadavg()
      .map((l) => l.toFixed(1))
      .join(', ')} (${cpus().length} cores); rates on a busy machine are lower bounds.

Pre-filling the topic took ${fillSeconds.toFixed(1)} s. The consumer ran compiled
(\`services/consumer/dist/main.js\`).
`;
    const out = join(root, 'bench/results/consume.md');
    writeFileSync(out, report);
    // The figures bench/hotpath's table quotes (consumer against COPY, same run).
    // The default client's run (kafkajs) where it ran.
    const reference = kafkajs ?? runs[0]!;
    const summary = {
      generatedAt: new Date().toISOString(),
      node: process.version,
      records: RECORDS,
      client: reference.client,
      consumerRowsPerSecond: Math.round(reference.rate),
      copyRowsPerSecond: Math.round(copyRate),
      clients: Object.fromEntries(
        runs.map((r) => [
          r.client,
          { rowsPerSecond: Math.round(r.rate), cpuUsPerRow: Math.round(r.us.consumer) },
        ]),
      ),
    };
    writeFileSync(join(root, 'bench/results/consume.json'), `${JSON.stringify(summary, null, 2)}\n`);
    console.log(report);
  } finally {
    await child?.kill();
    await stack.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

await main();
